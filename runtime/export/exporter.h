// Writes a trace model to a path, choosing the format from the path's extension.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "runtime/export/export_context.h"
#include "runtime/trace_model.h"

namespace tfprof {

enum class ExportFormat { kChromeJson, kChromeJsonGzip };

// Returns the format for `path`'s extension, or an InvalidArgument error that names the
// extension and lists the supported ones.
absl::Status FormatForPath(std::string_view path, ExportFormat *format);

// Writes the file; on failure nothing is left at `path` and the model is untouched.
// Errors: InvalidArgument (unsupported extension), Unavailable (I/O, naming the path and the
// system's reason), ResourceExhausted (out of memory).
absl::Status ExportTrace(const TraceModel &model, const ExportContext &context,
                         const std::string &path);

}  // namespace tfprof
