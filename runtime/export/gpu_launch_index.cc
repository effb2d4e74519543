#include "runtime/export/gpu_launch_index.h"

#include "runtime/common/insert_or_reset.h"

namespace tfprof {

void GpuLaunchIndex::Advance(const SessionLog &model, const TickConverter &converter) {
  const GpuTrace &gpu = model.gpu;
  for (; next_call_ < gpu.api_calls.size(); ++next_call_) {
    const GpuApiCall &call = gpu.api_calls[next_call_];
    // Correlation ids are unique per call; a non-launch call never shares one with GPU work.
    if (call.launches_work) {
      InsertOrReset(launch_calls_, [&] { return launch_calls_.emplace(call.correlation, next_call_); });
    }
  }
  gpu.external_correlations.ForEachFrom(next_link_, [&](const GpuExternalCorrelation &link) {
    InsertOrReset(external_ids_,
                  [&] { return external_ids_.emplace(link.correlation, link.external_id); });
  });
  next_link_ = gpu.external_correlations.size();
  if (next_event_.size() < model.tracks.size()) next_event_.resize(model.tracks.size(), 0);
  // Host-only sessions push no external ids: their events are not walked (until one arrives).
  if (external_ids_.empty()) return;
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    const EventLog &events = model.tracks[track].events;
    events.ForEachFrom(next_event_[track], [&](const Event &event) {
      if (BaseKind(event.kind) == EventKind::kSpanBegin && event.arg != 0) {
        const LaunchingOp op{event.name, track, converter.ToNs(event.ticks)};
        InsertOrReset(ops_, [&] { return ops_.emplace(event.arg, op); });
      }
    });
    next_event_[track] = events.size();
  }
}

const GpuApiCall *GpuLaunchIndex::CallOf(const SessionLog &model, uint32_t correlation) const {
  auto call = launch_calls_.find(correlation);
  // A call the session has let go of (its output holds it) is as good as never collected.
  if (call == launch_calls_.end() || call->second < model.gpu.api_calls.first_kept()) return nullptr;
  return &model.gpu.api_calls[call->second];
}

uint64_t GpuLaunchIndex::ExternalIdOf(uint32_t correlation) const {
  auto external = external_ids_.find(correlation);
  return external == external_ids_.end() ? 0 : external->second;
}

const LaunchingOp *GpuLaunchIndex::OpOfExternal(uint64_t external_id) const {
  if (external_id == 0) return nullptr;
  auto op = ops_.find(external_id);
  return op == ops_.end() ? nullptr : &op->second;
}

}  // namespace tfprof
