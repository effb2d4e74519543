// The in-memory trace of one session: drained events per thread track, the session's names,
// and the loss counters of threads that have already gone.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/chunked_log.h"
#include "runtime/event.h"
#include "runtime/gpu_trace.h"
#include "runtime/name_table.h"

namespace tfprof {

using EventLog = ChunkedLog<Event>;

// One host thread's row.
struct Track {
  int64_t os_tid = 0;
  std::string name;  // the explicit name if set, else the OS thread name at the last drain
  EventLog events;   // names are global NameTable ids
};

// The name a track is shown under: its thread's name, else "thread <tid>".
inline std::string TrackLabel(const Track &track) {
  return track.name.empty() ? "thread " + std::to_string(track.os_tid) : track.name;
}

// Counts that outlive a thread's buffer.
struct LossCounters {
  uint64_t dropped = 0;
  uint64_t unmatched_span_ends = 0;
  uint64_t unmatched_step_ends = 0;

  LossCounters &operator+=(const LossCounters &other) {
    dropped += other.dropped;
    unmatched_span_ends += other.unmatched_span_ends;
    unmatched_step_ends += other.unmatched_step_ends;
    return *this;
  }
};

struct TraceModel {
  NameTable names;
  std::vector<Track> tracks;
  uint64_t events_recorded = 0;  // records drained (an inline-name record counts once)
  LossCounters retired_losses;   // of buffers already freed
  GpuTrace gpu;                  // CUPTI's records and whether GPU tracing ran
  bool has_ranges = false;       // some track holds prof_range_start/end records

  size_t AddTrack(int64_t os_tid) {
    tracks.emplace_back();
    tracks.back().os_tid = os_tid;
    return tracks.size() - 1;
  }
};

}  // namespace tfprof
