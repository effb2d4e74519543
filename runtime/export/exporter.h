// Writes a trace model to a path, choosing the format from the path: Chrome trace JSON (.json,
// .json.gz), one TensorFlow RunMetadata (.pb), a TFRecord file of one RunMetadata per step
// (.tfrecord), or a TensorBoard event file inside a directory (an existing directory, or a path
// ending in '/').
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/export/export_context.h"
#include "runtime/formats/format.h"
#include "runtime/session/session_log.h"

namespace tfprof {

// Where dump_on_slow_step writes the dump of step `step` for the session output `output`:
// "trace.json" -> "trace.slow-step-57.json", "trace.json.gz" -> "trace.slow-step-57.json.gz",
// and a TensorBoard log directory "logs/" -> "logs/slow-step-57/" (a run of its own there).
std::string SlowStepDumpPath(const std::string &output, Format format, int64_t step);

// Writes the file; on failure nothing is left at `path` and the model is untouched.
// Errors: InvalidArgument (unsupported extension), Unavailable (I/O, naming the path and the
// system's reason), ResourceExhausted (out of memory).
absl::Status ExportTrace(const SessionLog &model, const ExportContext &context,
                         const std::string &path);
absl::Status ExportTrace(const SessionLog &model, const ExportContext &context,
                         const std::string &path, Format format);

}  // namespace tfprof
