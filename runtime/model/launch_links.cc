#include "runtime/model/launch_links.h"

#include "absl/container/flat_hash_map.h"

namespace tfprof {
namespace {

// Id 0 is no id: CUPTI counts correlation ids up from 1, and Kineto (and the files of tools
// built on it) write 0 where an event has none; linking by it would tie every such copy or
// kernel to one launch call.
bool HasCorrelation(const GpuDetail &detail) {
  return (detail.fields & kGpuHasCorrelation) != 0 && detail.correlation != 0;
}

}  // namespace

void LinkLaunches(Trace &trace) {
  struct Launch {
    int64_t begin_ns;
    int64_t thread_id;
    uint32_t detail;
  };
  // Correlation ids are unique within one recording only: a merged trace's ranks, or an XPlane
  // profile's hosts, each count from 1 (Process::group tells them apart).
  const auto key = [&trace](const Activity &activity, uint32_t correlation) {
    return (static_cast<uint64_t>(trace.processes[trace.tracks[activity.track].process].group)
            << 32) |
           correlation;
  };
  absl::flat_hash_map<uint64_t, Launch> calls;
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kRuntimeApi || activity.detail >= trace.gpu_details.size()) {
      continue;
    }
    const GpuDetail &detail = trace.gpu_details[activity.detail];
    if (!HasCorrelation(detail)) continue;
    calls.emplace(key(activity, detail.correlation),
                  Launch{activity.begin_ns, trace.tracks[activity.track].tid, activity.detail});
  }
  if (calls.empty()) return;
  for (const Activity &activity : trace.activities) {
    if (!IsGpuWork(activity.kind) || activity.detail >= trace.gpu_details.size()) continue;
    GpuDetail &detail = trace.gpu_details[activity.detail];
    if (!HasCorrelation(detail)) continue;
    auto call = calls.find(key(activity, detail.correlation));
    if (call == calls.end()) continue;
    if (detail.launch_ns == kNoStep) detail.launch_ns = call->second.begin_ns;
    if (detail.thread_id == 0) detail.thread_id = call->second.thread_id;
    trace.gpu_details[call->second.detail].fields |= kGpuLaunchesWork;
  }
}

}  // namespace tfprof
