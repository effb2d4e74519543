// Kernel launch calls sorted into what the diagnosis must tell apart: one-time launches (a
// kernel's first launch that loads its module or compiles its PTX, paid once per process) and
// launches whose GPU work no record holds (the GPU side of the recording is missing).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "runtime/model/trace.h"
#include "tools/tfprof/analysis/intervals.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

// A kernel launch call as the summary sees it.
struct LaunchCall {
  Interval interval;
  uint32_t name = 0;            // Trace::names
  uint32_t detail = kNoDetail;  // its Trace::gpu_details index: its correlation id, whether work
                                // was found (kNoDetail for a host op's, whose detail is args)
};

struct LaunchSplit {
  std::vector<Interval> one_time;         // the one-time launch calls, sorted and disjoint
  std::vector<int64_t> one_time_begins;   // sorted
  std::vector<OneTimeLaunch> one_time_calls;  // in time order
  uint64_t calls = 0;
  uint64_t without_gpu_work = 0;
};

// A launch this many times the median launch, and at least kOneTimeLaunchMinNs long, is slow; a
// slow first launch of its kernel is a one-time launch.
inline constexpr int64_t kOneTimeLaunchFactor = 50;
inline constexpr int64_t kOneTimeLaunchMinNs = 1'000'000;

// Splits one recording's launch calls, which `for_each_call` visits (twice, in the same order;
// about `call_count` of them: a reserve). A call has no GPU record when the recording has no GPU
// work at all (`any_gpu_work` false), or when it has a correlation id and no work carries it (the
// model's launch links: GpuDetail's kGpuLaunchesWork). `for_each_activity` walks the recording's
// activities; it is called only when some launch is slow, to find the kernels they launched.
// The calls are visited rather than listed: a list of millions of them set the summary's peak.
LaunchSplit SplitLaunches(
    const Trace &trace, size_t call_count,
    absl::FunctionRef<void(absl::FunctionRef<void(const LaunchCall &)>)> for_each_call,
    bool any_gpu_work,
    absl::FunctionRef<void(absl::FunctionRef<void(const Activity &)>)> for_each_activity);

}  // namespace tfprof::cli
