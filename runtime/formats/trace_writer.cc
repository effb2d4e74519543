#include "runtime/formats/trace_writer.h"

#include <algorithm>
#include <memory>
#include <new>

#include "absl/strings/str_cat.h"
#include "runtime/export/output_sink.h"
#include "runtime/formats/chrome_json_writer.h"
#include "runtime/formats/counting_sink.h"
#include "runtime/formats/step_stats_trace_writer.h"

namespace tfprof {

namespace {

std::string FileName(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<WrittenTrace> WriteTrace(const Trace &trace, const std::string &path,
                                        Format format, const TraceWriteOptions &options) {
  if (format == Format::kStepStats) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "': a bare StepStats is read, never written (write .pb, a RunMetadata)"));
  }
  try {
    WrittenTrace written;
    written.path = path;
    const bool chrome =
        format == Format::kChromeJson || format == Format::kChromeJsonGzip;
    if (!chrome && !trace.wall_offset_ns) {
      written.notes.push_back(
          "the input recorded no wall-clock time: the TensorFlow times are its own clock's, "
          "not microseconds since 1970");
    }
    if (format == Format::kTensorBoard) {
      int64_t first_ns = 0;
      if (!trace.activities.empty()) first_ns = trace.activities.front().begin_ns;
      for (const Activity &activity : trace.activities) first_ns = std::min(first_ns, activity.begin_ns);
      absl::StatusOr<std::string> event_file =
          NewEventFilePath(path, first_ns + trace.wall_offset_ns.value_or(0));
      if (!event_file.ok()) return event_file.status();
      written.path = *event_file;
    }
    absl::StatusOr<std::unique_ptr<OutputSink>> sink =
        OutputSink::Open(written.path, format == Format::kChromeJsonGzip);
    if (!sink.ok()) return sink.status();
    CountingSink out(**sink, options.progress, absl::StrCat("writing ", FileName(written.path)));
    if (chrome) {
      WriteChromeJson(trace, options.sources_json, out);
    } else {
      const StepStatsReport report = WriteStepStats(trace, format, out);
      if (report.gpu_annotations_skipped > 0) {
        written.notes.push_back(absl::StrCat(
            report.gpu_annotations_skipped,
            " GPU annotation spans (gpu_user_annotation) were left out: TensorFlow's formats "
            "have no such node"));
      }
    }
    if (absl::Status finished = (*sink)->Finish(); !finished.ok()) return finished;
    if (options.progress != nullptr) options.progress->Finish();
    return written;
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

}  // namespace tfprof
