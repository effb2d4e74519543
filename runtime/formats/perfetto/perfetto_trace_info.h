// tfprof's "tfprof trace info" instant: its "tfprof" annotation holds what the Chrome trace's
// "tfprof" header says (pid, host, clock, start and end, losses, GPU state, devices, groups). Read
// from the annotation tree and applied to the Trace once the file is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/formats/perfetto/perfetto_annotations.h"
#include "runtime/formats/perfetto/perfetto_tracks.h"
#include "runtime/model/trace.h"
#include "runtime/model/trace_info_fields.h"

namespace tfprof {

// tfprof's "tfprof trace info" instant: what the JSON's "tfprof" header says, and the processes'
// groups of a merge.
struct TraceInfo {
  bool seen = false;
  RecordingInfo recording;
  struct Group {
    int64_t pid;
    std::optional<uint32_t> group;
    std::optional<int64_t> rank;
  };
  std::vector<Group> groups;
};

// The trace info a "tfprof" annotation (read whole) says.
TraceInfo TraceInfoFrom(const ArgNode &root);

// What `info` says, into `*trace` (the main process's name from `tracks`, its groups and ranks
// onto the processes rows made).
void ApplyTraceInfo(const TraceInfo &info, const PerfettoTracks &tracks, Trace *trace);

}  // namespace tfprof
