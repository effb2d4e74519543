// The log of one session: the raw records drained per thread (ThreadLog), the session's names,
// and the loss counters of threads that have already gone. Its record lists share one ChunkStore, which
// accounts their memory and spills them to disk under a memory limit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/storage/chunk_store.h"
#include "runtime/storage/chunked_log.h"
#include "runtime/collector/event.h"
#include "runtime/gpu/gpu_trace.h"
#include "runtime/storage/name_table.h"
#include "runtime/collector/span_stack.h"
#include "runtime/session/step_marks.h"

namespace tfprof {

using EventLog = ChunkedLog<Event>;

// One host thread's row.
struct ThreadLog {
  int64_t os_tid = 0;
  std::string name;  // the explicit name if set, else the OS thread name at the last drain
  EventLog events;   // names are global NameTable ids
  bool retired = false;  // its thread exited (or moved to a newer session): nothing more comes
  // Drain-side state. `stored_spans`: spans whose begin could not be stored (no memory) drop
  // their ends too, so nesting stays right. `steps`: the open step, to time steps as they end.
  SpanStack stored_spans;
  StepMarks<uint64_t> steps;
};

// The name a track is shown under: its thread's name, else "thread <tid>".
inline std::string TrackLabel(const ThreadLog &track) {
  return track.name.empty() ? "thread " + std::to_string(track.os_tid) : track.name;
}

// Counts that outlive a thread's buffer.
struct LossCounters {
  uint64_t dropped = 0;
  uint64_t unmatched_span_ends = 0;
  uint64_t unmatched_step_ends = 0;
  // Records the session collected and then could not keep: no memory, or the spill file failed.
  uint64_t memory_dropped = 0;
  // Records evicted on purpose because they fell outside the keep= window (flight recorder).
  uint64_t discarded = 0;

  LossCounters &operator+=(const LossCounters &other) {
    dropped += other.dropped;
    unmatched_span_ends += other.unmatched_span_ends;
    unmatched_step_ends += other.unmatched_step_ends;
    memory_dropped += other.memory_dropped;
    discarded += other.discarded;
    return *this;
  }
};

// How much of each record list of a session, from its first record, a streamed output holds or
// no longer needs: what the session may let go of (TraceStream::Written()).
struct LogPositions {
  std::vector<size_t> host_events;  // per thread row (ThreadLog index)
  size_t gpu_activities = 0;
  size_t gpu_api_calls = 0;
  size_t gpu_external_correlations = 0;
  size_t gpu_syncs = 0;
  size_t gpu_overheads = 0;
  size_t gpu_memory_changes = 0;
};

struct SessionLog {
  SessionLog() { LinkStore(); }
  SessionLog(SessionLog &&other) noexcept
      : store(std::move(other.store)),
        names(std::move(other.names)),
        tracks(std::move(other.tracks)),
        events_recorded(other.events_recorded),
        retired_losses(other.retired_losses),
        gpu(std::move(other.gpu)),
        has_ranges(other.has_ranges) {
    LinkStore();
  }
  SessionLog(const SessionLog &) = delete;
  SessionLog &operator=(const SessionLog &) = delete;
  SessionLog &operator=(SessionLog &&) = delete;

  ChunkStore store;  // declared first: the logs below account into it until they are destroyed
  NameTable names;
  std::vector<ThreadLog> tracks;
  uint64_t events_recorded = 0;  // records drained (an inline-name record counts once)
  LossCounters retired_losses;   // of buffers already freed
  GpuTrace gpu;                  // CUPTI's records and whether GPU tracing ran
  bool has_ranges = false;       // some track holds prof_range_start/end records

  // Points every log at this model's store (again, after a move).
  void LinkStore() {
    for (ThreadLog &track : tracks) track.events.set_store(&store);
    gpu.activities.set_store(&store);
    gpu.api_calls.set_store(&store);
    gpu.external_correlations.set_store(&store);
    gpu.syncs.set_store(&store);
    gpu.overheads.set_store(&store);
    gpu.memory_changes.set_store(&store);
  }

  size_t AddTrack(int64_t os_tid) {
    tracks.emplace_back();
    tracks.back().os_tid = os_tid;
    tracks.back().events.set_store(&store);
    return tracks.size() - 1;
  }
};

}  // namespace tfprof
