// Writes a LoadedTrace in any format tfprof's runtime exports, chosen by the same rules
// (runtime/export/exporter.h FormatForPath/FormatForName): Chrome trace JSON (.json, .json.gz),
// one RunMetadata (.pb), a TFRecord file of one RunMetadata per step (.tfrecord), or a
// TensorBoard event file in a log directory (an existing directory or a path ending in '/').
// The file is written under a temporary name and renamed into place when complete, so a failure
// leaves nothing behind.
#ifndef TFPROF_TOOLS_TFPROF_TRACE_OUTPUT_TRACE_WRITER_H_
#define TFPROF_TOOLS_TFPROF_TRACE_OUTPUT_TRACE_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/export/exporter.h"
#include "tools/tfprof/progress.h"
#include "tools/tfprof/trace_input/loaded_trace.h"

namespace tfprof::cli {

struct TraceWriteOptions {
  std::string sources_json;      // Chrome JSON: "tfprof"."sources", what the trace was made from
  Progress *progress = nullptr;  // may be null
};

struct WrittenTrace {
  std::string path;                // the file written (the event file, for a log directory)
  std::vector<std::string> notes;  // what the user should know about the output (lost detail)
};

// Errors: Unavailable naming the path and the system's reason (cannot create, write or rename),
// ResourceExhausted (out of memory).
absl::StatusOr<WrittenTrace> WriteTrace(const LoadedTrace &trace, const std::string &path,
                                        ExportFormat format, const TraceWriteOptions &options);

// "Chrome trace JSON", "gzip-compressed Chrome trace JSON", "TensorFlow RunMetadata", ...
const char *ExportFormatName(ExportFormat format);

}  // namespace tfprof::cli

#endif  // TFPROF_TOOLS_TFPROF_TRACE_OUTPUT_TRACE_WRITER_H_
