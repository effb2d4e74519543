// Kernel launch calls sorted into what the diagnosis must tell apart: one-time launches (a
// kernel's first launch that loads its module or compiles its PTX, paid once per process) and
// launches whose GPU work no record holds (the GPU side of the recording is missing).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/model/trace.h"
#include "tools/tfprof/analysis/intervals.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

// A kernel launch call as the summary sees it.
struct LaunchCall {
  Interval interval;
  uint32_t name = 0;                    // Trace::names
  std::optional<uint32_t> correlation;  // CUPTI's id, shared with the work it launched
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

// Splits one recording's launch `calls`. `kernel_of`: the kernel name (Trace::names) by
// correlation id; `work`: the correlation ids of every kernel, copy and memset. A call has no GPU
// record when the recording has no GPU work at all (`any_gpu_work` false), or when its correlation
// id is in no record.
LaunchSplit SplitLaunches(const Trace &trace, std::vector<LaunchCall> calls,
                          const absl::flat_hash_map<uint32_t, uint32_t> &kernel_of,
                          const absl::flat_hash_set<uint32_t> &work, bool any_gpu_work);

}  // namespace tfprof::cli
