// Writes a Trace in any format tfprof writes (runtime/formats/format.h): Chrome trace JSON
// (.json, .json.gz), one RunMetadata (.pb), a TFRecord file of one RunMetadata per step
// (.tfrecord), a TensorBoard event file in a log directory (an existing directory or a path
// ending in '/'), or a Perfetto trace (.pftrace, .perfetto-trace).
// The file is written under a temporary name and renamed into place when complete, so a failure
// leaves nothing behind.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/formats/format.h"
#include "runtime/common/progress_listener.h"
#include "runtime/model/trace.h"

namespace tfprof {

struct TraceWriteOptions {
  ProgressListener *progress = nullptr;  // may be null
};

struct WrittenTrace {
  std::string path;                // the file written (the event file, for a log directory)
  std::vector<std::string> notes;  // what the user should know about the output (lost detail)
};

// Errors: Unavailable naming the path and the system's reason (cannot create, write or rename),
// ResourceExhausted (out of memory).
absl::StatusOr<WrittenTrace> WriteTrace(const Trace &trace, const std::string &path,
                                        Format format, const TraceWriteOptions &options);

}  // namespace tfprof
