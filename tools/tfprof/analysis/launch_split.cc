#include "tools/tfprof/analysis/launch_split.h"

#include <algorithm>

#include "tools/tfprof/analysis/median.h"

namespace tfprof::cli {

LaunchSplit SplitLaunches(const Trace &trace, std::vector<LaunchCall> calls,
                          const absl::flat_hash_map<uint32_t, uint32_t> &kernel_of,
                          const absl::flat_hash_set<uint32_t> &work, bool any_gpu_work) {
  LaunchSplit split;
  split.calls = calls.size();
  std::vector<int64_t> durations;
  durations.reserve(calls.size());
  for (const LaunchCall &call : calls) {
    durations.push_back(call.interval.end - call.interval.begin);
    if (!any_gpu_work || (call.correlation && !work.contains(*call.correlation))) {
      ++split.without_gpu_work;
    }
  }
  const int64_t slow = std::max(kOneTimeLaunchMinNs, kOneTimeLaunchFactor * MedianNs(durations));
  std::sort(calls.begin(), calls.end(), [](const LaunchCall &a, const LaunchCall &b) {
    return a.interval.begin < b.interval.begin;
  });
  // A slow launch of a kernel launched before is no module load: a full launch queue, say.
  absl::flat_hash_set<uint32_t> launched;  // kernel names launched so far
  for (const LaunchCall &call : calls) {
    std::optional<uint32_t> kernel;
    if (call.correlation) {
      const auto found = kernel_of.find(*call.correlation);
      if (found != kernel_of.end()) kernel = found->second;
    }
    const bool first = !kernel || launched.insert(*kernel).second;
    if (call.interval.end - call.interval.begin < slow || !first) continue;
    split.one_time.push_back(call.interval);
    split.one_time_begins.push_back(call.interval.begin);
    split.one_time_calls.push_back({trace.names.Get(call.name),
                                    kernel ? trace.names.Get(*kernel) : std::string(),
                                    call.interval.begin, call.interval.end - call.interval.begin});
  }
  split.one_time = Union(std::move(split.one_time));
  return split;
}

}  // namespace tfprof::cli
