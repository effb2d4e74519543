// Reads a Chrome trace JSON file (tfprof's, the PyTorch profiler's, any other) into a Trace
// in one streaming pass: the bytes go through a fixed-size window (grown only for a single value
// larger than it), a hand-written scanner walks the "traceEvents" array event by event, and no
// JSON tree is ever built. Plain files and gzip streams are read the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "runtime/common/progress_listener.h"
#include "runtime/model/trace.h"

namespace tfprof {

// Reads the JSON on `fd` (open for reading, positioned at 0; gzip-compressed when `gzip`) into
// `*trace`, whose `path` names the file in messages. `file_size` (0 when unknown) is the total
// for `progress` (may be null). Returns:
//   OK
//   InvalidArgument "PATH: not a trace: ..."  JSON (or not even that) that holds no trace events
//   DataLoss "PATH: byte N: PROBLEM"          damage or truncation; `*trace` then holds every
//                                             event read before it, finished as for a full read
//   Unavailable "PATH: ..."                   a read error
// Does not close `fd`. `window_bytes` is the size of the window the bytes pass through (it grows
// only for a single JSON value larger than half of it); tests make it tiny, so that every event
// is cut by a window boundary somewhere. `threads` parse the events a window holds (0: the
// default, DefaultReadThreads(), read_threads.h); the trace read is the same for any number.
inline constexpr size_t kChromeReadWindowBytes = size_t{4} << 20;
absl::Status ReadChromeTrace(int fd, bool gzip, uint64_t file_size, ProgressListener *progress,
                             Trace *trace, size_t window_bytes = kChromeReadWindowBytes,
                             unsigned threads = 0);

// `text` (a JSON number in microseconds, such as "12.345" or "1.5e3") in nanoseconds, rounded
// to the nearest; exact for up to three decimals. False when it is no JSON number or is out of
// the int64 range. Exposed for tests.
bool JsonMicrosToNanos(std::string_view text, int64_t *nanos);

}  // namespace tfprof
