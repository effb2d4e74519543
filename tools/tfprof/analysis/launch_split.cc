#include "tools/tfprof/analysis/launch_split.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "tools/tfprof/analysis/median.h"

namespace tfprof::cli {
namespace {

std::optional<GpuDetail> CorrelatedDetail(const Trace &trace, uint32_t detail) {
  std::optional<GpuDetail> found = trace.gpu_details.Find(detail);
  if (found && (found->fields & kGpuHasCorrelation) == 0) found.reset();
  return found;
}

}  // namespace

LaunchSplit SplitLaunches(
    const Trace &trace, size_t call_count,
    absl::FunctionRef<void(absl::FunctionRef<void(const LaunchCall &)>)> for_each_call,
    bool any_gpu_work,
    absl::FunctionRef<void(absl::FunctionRef<void(const Activity &)>)> for_each_activity) {
  LaunchSplit split;
  std::vector<int64_t> durations;
  durations.reserve(call_count);
  for_each_call([&](const LaunchCall &call) {
    durations.push_back(call.interval.end - call.interval.begin);
    const std::optional<GpuDetail> detail = CorrelatedDetail(trace, call.detail);
    if (!any_gpu_work || (detail && (detail->fields & kGpuLaunchesWork) == 0)) {
      ++split.without_gpu_work;
    }
  });
  split.calls = durations.size();
  const int64_t slow = std::max(kOneTimeLaunchMinNs, kOneTimeLaunchFactor * MedianNs(durations));
  durations = {};
  std::vector<LaunchCall> calls;  // the slow ones: few
  for_each_call([&](const LaunchCall &call) {
    if (call.interval.end - call.interval.begin >= slow) calls.push_back(call);
  });
  if (calls.empty()) return split;  // the usual case: nothing more to look up

  // The slow calls' kernels, by correlation id, and the first launch of each of those kernels.
  absl::flat_hash_map<uint32_t, uint32_t> kernel_of;  // name by the slow calls' correlation ids
  for (const LaunchCall &call : calls) {
    if (const std::optional<GpuDetail> detail = CorrelatedDetail(trace, call.detail)) {
      kernel_of.try_emplace(detail->correlation, kNoName);
    }
  }
  absl::flat_hash_map<uint32_t, int64_t> first_launch;  // by kernel name
  for (int pass = 0; pass < 2 && !kernel_of.empty(); ++pass) {
    for_each_activity([&](const Activity &activity) {
      if (activity.kind != ActivityKind::kKernel) return;
      const std::optional<GpuDetail> detail = CorrelatedDetail(trace, activity.detail);
      if (!detail) return;
      if (pass == 0) {  // the names of the slow calls' kernels
        const auto found = kernel_of.find(detail->correlation);
        if (found != kernel_of.end()) {
          found->second = activity.name;
          first_launch.try_emplace(activity.name, INT64_MAX);
        }
        return;
      }
      const auto first = first_launch.find(activity.name);  // when each of them launched first
      if (first != first_launch.end() && detail->launch_ns != kNoStep) {
        first->second = std::min(first->second, detail->launch_ns);
      }
    });
  }
  std::sort(calls.begin(), calls.end(), [](const LaunchCall &a, const LaunchCall &b) {
    return a.interval.begin < b.interval.begin;
  });
  for (const LaunchCall &call : calls) {
    uint32_t kernel = kNoName;
    if (const std::optional<GpuDetail> detail = CorrelatedDetail(trace, call.detail)) {
      const auto found = kernel_of.find(detail->correlation);
      if (found != kernel_of.end()) kernel = found->second;
    }
    // A slow launch of a kernel launched before is no module load: a full launch queue, say.
    if (kernel != kNoName && first_launch[kernel] < call.interval.begin) continue;
    split.one_time.push_back(call.interval);
    split.one_time_begins.push_back(call.interval.begin);
    split.one_time_calls.push_back({trace.names.Get(call.name),
                                    kernel != kNoName ? trace.names.Get(kernel) : std::string(),
                                    call.interval.begin, call.interval.end - call.interval.begin});
  }
  split.one_time = Union(std::move(split.one_time));
  return split;
}

}  // namespace tfprof::cli
