// Reads a Perfetto protobuf trace (.pftrace: a Trace of TracePackets holding TrackEvents; tfprof's
// own, the Perfetto SDK's, PyTorch's) into a Trace. The file is mapped, not copied; the hot packets
// (track events) are scanned by hand with no allocation per packet, and each track's events are
// paired into spans once the whole file is read (sorted first only where they are out of order).
// docs/perfetto.md says how tfprof lays a trace out; other producers' TrackEvent traces are read
// by the same rules Perfetto's trace processor follows (sequences, interning, clocks, tracks).
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "runtime/common/progress_listener.h"
#include "runtime/model/trace.h"

namespace tfprof {

// Whether `head`, a file's first bytes, starts like a Perfetto trace: a Trace.packet field
// (1, length-delimited) whose payload begins with a field a TracePacket has (a timestamp, a
// sequence id, a track event, ...), never field 1, with which a TensorFlow RunMetadata or
// StepStats begins.
bool LooksLikePerfettoTrace(std::string_view head);

// Reads the trace on `fd` (open for reading; not closed) into `*trace`, whose `path` names the file
// in messages. `file_size` is the total for `progress` (may be null). Returns:
//   OK
//   DataLoss "PATH: byte N: PROBLEM"  damage or truncation; `*trace` then holds every packet read
//                                     before it, finished as for a full read
//   Unavailable "PATH: ..."           a read error
absl::Status ReadPerfettoTrace(int fd, uint64_t file_size, ProgressListener *progress, Trace *trace);

}  // namespace tfprof
