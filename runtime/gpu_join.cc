#include "runtime/gpu_join.h"

namespace tfprof {

GpuJoin::GpuJoin(const TraceModel &model, const TickConverter &converter,
                 const std::vector<StepInterval> &steps)
    : model_(model), converter_(converter), steps_(steps) {
  const GpuTrace &gpu = model.gpu;
  if (gpu.activities.size() == 0 && gpu.api_calls.size() == 0) return;
  for (size_t index = 0; index < gpu.api_calls.size(); ++index) {
    const GpuApiCall &call = gpu.api_calls[index];
    // Correlation ids are unique per call; a non-launch call never shares one with GPU work.
    if (call.launches_work) launch_calls_.emplace(call.correlation, index);
  }
  gpu.external_correlations.ForEach([&](const GpuExternalCorrelation &link) {
    external_ids_.emplace(link.correlation, link.external_id);
  });
  gpu.activities.ForEach(
      [&](const GpuActivity &activity) { activity_correlations_.insert(activity.correlation); });
  if (external_ids_.empty()) return;
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    model.tracks[track].events.ForEach([&](const Event &event) {
      if (BaseKind(event.kind) == EventKind::kSpanBegin && event.arg != 0) {
        ops_.emplace(event.arg, LaunchingOp{event.name, track, converter.ToNs(event.ticks)});
      }
    });
  }
}

const LaunchingOp *GpuJoin::OpOf(uint32_t correlation) const {
  auto external = external_ids_.find(correlation);
  if (external == external_ids_.end()) return nullptr;
  auto op = ops_.find(external->second);
  return op == ops_.end() ? nullptr : &op->second;
}

GpuLaunch GpuJoin::LaunchOf(const GpuActivity &activity) const {
  GpuLaunch launch;
  if (auto call = launch_calls_.find(activity.correlation); call != launch_calls_.end()) {
    launch.call = &model_.gpu.api_calls[call->second];
  }
  if (auto external = external_ids_.find(activity.correlation); external != external_ids_.end()) {
    launch.external_id = external->second;
    if (auto op = ops_.find(external->second); op != ops_.end()) launch.op = &op->second;
  }
  if (launch.call != nullptr) {
    launch.launch_ns = converter_.ToNs(launch.call->start_ticks);
  } else if (launch.op != nullptr) {
    launch.launch_ns = launch.op->begin_ns;
  } else {
    launch.launch_ns = converter_.ToNs(activity.start_ticks);
  }
  launch.step = steps_.Find(launch.launch_ns);
  return launch;
}

const StepInterval *GpuJoin::StepOf(const GpuApiCall &call) const {
  return steps_.Find(converter_.ToNs(call.start_ticks));
}

}  // namespace tfprof
