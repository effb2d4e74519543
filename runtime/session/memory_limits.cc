#include "runtime/session/memory_limits.h"

#include <algorithm>
#include <cstdio>

namespace tfprof {

namespace {

// Calls `visit(log, retired)` for every record list of the model; `retired`: nothing more will
// be appended to it.
template <typename Visitor>
void ForEachLog(SessionLog &model, Visitor &&visit) {
  for (ThreadLog &track : model.tracks) visit(track.events, track.retired);
  GpuTrace &gpu = model.gpu;
  visit(gpu.activities, false);
  visit(gpu.api_calls, false);
  visit(gpu.external_correlations, false);
  visit(gpu.syncs, false);
  visit(gpu.overheads, false);
  visit(gpu.memory_changes, false);
}

// Evicts the records of `log` before the first one whose time (`ticks_of(record)`) is in the window.
template <typename Log, typename TicksOf>
void EvictOlder(Log &log, uint64_t threshold_ticks, TicksOf &&ticks_of) {
  log.EvictBefore(log.FindFirst(log.first_kept(), [&](const auto &record) {
    return static_cast<int64_t>(ticks_of(record) - threshold_ticks) >= 0;
  }));
}

// Chunk memory held beyond what the limit leaves aside: writes in flight, and the chunk each live
// thread appends to (spilling it would only start another, so up to one chunk per live thread,
// at most 1.5 MiB, comes on top of the limit).
int64_t HeldBytes(SessionLog &model) {
  int64_t active = 0;
  ForEachLog(model, [&](auto &log, bool retired) {
    if (!retired) active += log.active_bytes();
  });
  return model.store.resident_bytes - model.store.in_flight_bytes - active;
}

}  // namespace

void ReleaseWrittenRecords(SessionLog &model, uint32_t max_memory_mb, const LogPositions &written) {
  const int64_t limit = int64_t{max_memory_mb} << 20;
  // Once over the limit, and as long as anything is spilled: records that spilled before the
  // output had written them are given back (from the spill file) once it has.
  const bool spilled = model.store.spill != nullptr && model.store.spill->bytes_held() > 0;
  if (limit == 0 || (HeldBytes(model) <= limit && !spilled)) return;
  constexpr uint64_t ChunkStore::*kReleased = &ChunkStore::records_released;
  const size_t rows = std::min(written.host_events.size(), model.tracks.size());
  for (size_t row = 0; row < rows; ++row) {
    model.tracks[row].events.EvictBefore(written.host_events[row], kReleased);
  }
  GpuTrace &gpu = model.gpu;
  gpu.activities.EvictBefore(written.gpu_activities, kReleased);
  gpu.api_calls.EvictBefore(written.gpu_api_calls, kReleased);
  gpu.external_correlations.EvictBefore(written.gpu_external_correlations, kReleased);
  gpu.syncs.EvictBefore(written.gpu_syncs, kReleased);
  gpu.overheads.EvictBefore(written.gpu_overheads, kReleased);
  gpu.memory_changes.EvictBefore(written.gpu_memory_changes, kReleased);
}

int64_t WriterSlackBytes(uint32_t max_memory_mb) {
  return std::max<int64_t>((int64_t{max_memory_mb} << 20) / 4, int64_t{4} << 20);
}

void EvictBefore(SessionLog &model, uint64_t threshold_ticks) {
  for (ThreadLog &track : model.tracks) {
    EvictOlder(track.events, threshold_ticks, [](const Event &event) { return event.ticks; });
  }
  GpuTrace &gpu = model.gpu;
  auto start_ticks = [](const auto &record) { return record.start_ticks; };
  EvictOlder(gpu.activities, threshold_ticks, start_ticks);
  EvictOlder(gpu.api_calls, threshold_ticks, start_ticks);
  EvictOlder(gpu.syncs, threshold_ticks, start_ticks);
  EvictOlder(gpu.overheads, threshold_ticks, start_ticks);
  EvictOlder(gpu.memory_changes, threshold_ticks,
             [](const GpuMemoryChange &change) { return change.ticks; });
  // Correlation ids grow over a session: links older than the first kept call are not needed.
  if (gpu.api_calls.first_kept() < gpu.api_calls.size()) {
    const uint32_t oldest = gpu.api_calls[gpu.api_calls.first_kept()].correlation;
    gpu.external_correlations.EvictBefore(gpu.external_correlations.FindFirst(
        gpu.external_correlations.first_kept(),
        [&](const GpuExternalCorrelation &link) { return link.correlation >= oldest; }));
  }
}

void EnforceMemoryLimit(SessionLog &model, uint32_t max_memory_mb) {
  ForEachLog(model, [](auto &log, bool) { log.Reap(); });
  const int64_t limit = int64_t{max_memory_mb} << 20;
  if (limit == 0) return;
  const int64_t held = HeldBytes(model);
  int64_t excess = held - limit;
  if (excess > 0) ForEachLog(model, [&](auto &log, bool retired) { log.Spill(retired, &excess); });
  // A writer that cannot keep up: chunks may wait for it up to its slack, then the oldest are
  // dropped and counted.
  int64_t waiting = held - (limit + WriterSlackBytes(max_memory_mb));
  if (waiting > 0) ForEachLog(model, [&](auto &log, bool retired) { log.DropOldest(retired, &waiting); });
}

void WarnAboutSpilling(const ChunkStore &store, uint32_t max_memory_mb, SpillWarnings &given) {
  if (!store.spill_error.empty() && !given.cannot_spill) {
    given.cannot_spill = true;
    std::fprintf(stderr,
                 "tfprof: warning: %s; records beyond max_memory_mb=%u are dropped and counted "
                 "(set TMPDIR to a writable directory, or raise max_memory_mb)\n",
                 store.spill_error.c_str(), max_memory_mb);
  }
  if (store.spill != nullptr && store.spill->in_memory() && !given.in_memory) {
    given.in_memory = true;
    std::fprintf(stderr,
                 "tfprof: warning: the spill file is in %s, a file system in memory (tmpfs): "
                 "records over max_memory_mb=%u still use RAM there. Set spill_dir= (or TMPDIR) "
                 "to a directory on disk\n",
                 store.spill->directory().c_str(), max_memory_mb);
  }
  if (store.writer_behind > 0 && !given.writer_behind) {
    given.writer_behind = true;
    std::fprintf(stderr,
                 "tfprof: warning: the spill file in %s cannot be written as fast as events "
                 "arrive; records beyond max_memory_mb=%u are dropped and counted\n",
                 store.spill != nullptr ? store.spill->directory().c_str() : "$TMPDIR",
                 max_memory_mb);
  }
}

void WarnAboutMemoryDrops(const ChunkStore &store, uint64_t events_without_buffer,
                          SpillWarnings &given) {
  if (given.out_of_memory || given.cannot_spill || given.writer_behind) return;
  const uint64_t lost = store.records_lost + events_without_buffer;
  if (lost == 0) return;
  given.out_of_memory = true;
  std::fprintf(stderr,
               "tfprof: warning: out of memory: %llu records could not be kept (%llu of them of "
               "threads that got no buffer); they are dropped and counted in "
               "events_memory_dropped, and the program goes on\n",
               static_cast<unsigned long long>(lost),
               static_cast<unsigned long long>(events_without_buffer));
}

}  // namespace tfprof
