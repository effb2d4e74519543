#include "runtime/export/exporter.h"

#include <algorithm>
#include <memory>
#include <new>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/output_sink.h"
#include "runtime/export/session_trace.h"
#include "runtime/formats/chrome/chrome_json_writer.h"
#include "runtime/formats/perfetto/perfetto_writer.h"
#include "runtime/formats/tensorflow/step_stats_trace_writer.h"

namespace tfprof {

namespace {

// An export walks the session in time windows of about this many records, writing each window's
// piece of the trace model before reading the next, so its memory does not grow with the session.
constexpr uint64_t kRecordsPerWindow = 1 << 16;
constexpr uint64_t kMostWindows = 4096;

// The writer of one format, fed piece by piece.
class PieceWriter {
 public:
  PieceWriter(Format format, OutputSink &sink) : format_(format), sink_(sink), tensorflow_(format) {}

  void Begin(const ExportContext &context) {
    sink_.Write(IsChromeJson(format_)           ? std::string(ChromeJsonWriter::Begin())
                : format_ == Format::kPerfetto ? perfetto_.Begin()
                                               : tensorflow_.Begin(context.start_wall_ns));
  }

  void Piece(const Trace &trace, bool last, int64_t end_ns) {
    buffer_.clear();
    const auto drain = [&](std::string &text) {
      sink_.Write(text);
      text.clear();
    };
    if (IsChromeJson(format_)) {
      chrome_.Append(trace, buffer_, drain);
    } else if (format_ == Format::kPerfetto) {
      perfetto_.Append(trace, buffer_, drain);
    } else {
      tensorflow_.Append(trace, last, end_ns, buffer_);
    }
    sink_.Write(buffer_);
  }

  void Finish(const Trace &trace, int64_t end_ns) {
    sink_.Write(IsChromeJson(format_)           ? chrome_.Tail(trace)
                : format_ == Format::kPerfetto ? perfetto_.Info(trace)
                                               : tensorflow_.Finish(trace, end_ns));
  }

 private:
  const Format format_;
  OutputSink &sink_;
  ChromeJsonWriter chrome_;
  PerfettoWriter perfetto_;
  StepStatsTraceWriter tensorflow_;
  std::string buffer_;
};

}  // namespace

std::string SlowStepDumpPath(const std::string &output, Format format, int64_t step) {
  const std::string label = absl::StrCat("slow-step-", step);
  if (format == Format::kTensorBoard) {
    return absl::StrCat(output, absl::EndsWith(output, "/") ? "" : "/", label, "/");
  }
  // Before the first dot of the file name (not of a directory, nor a leading one).
  const size_t name_start = output.rfind('/') == std::string::npos ? 0 : output.rfind('/') + 1;
  const size_t dot = output.find('.', name_start + 1);
  if (dot == std::string::npos) return absl::StrCat(output, ".", label);
  return absl::StrCat(output.substr(0, dot), ".", label, output.substr(dot));
}

absl::Status ExportTrace(const SessionLog &model, const ExportContext &context,
                         const std::string &path) {
  Format format;
  if (absl::Status status = FormatForPath(path, &format); !status.ok()) return status;
  return ExportTrace(model, context, path, format);
}

absl::Status ExportTrace(const SessionLog &model, const ExportContext &context,
                         const std::string &path, Format format) {
  if (absl::Status writable = CheckWritable(path, format); !writable.ok()) return writable;
  CreatedLogDirectory created_directory;
  try {
    std::string file_path = path;
    if (format == Format::kTensorBoard) {
      absl::StatusOr<std::string> event_file =
          NewEventFilePath(path, context.start_wall_ns, &created_directory);
      if (!event_file.ok()) return event_file.status();
      file_path = *event_file;
    }
    absl::StatusOr<std::unique_ptr<OutputSink>> sink =
        OutputSink::Open(file_path, format == Format::kChromeJsonGzip);
    if (!sink.ok()) return sink.status();
    SessionTrace session(context);
    session.UpdateInfo(model, context, model.gpu.losses);
    PieceWriter writer(format, **sink);
    writer.Begin(context);
    const uint64_t windows =
        std::clamp<uint64_t>(context.events_recorded / kRecordsPerWindow, 1, kMostWindows);
    const int64_t span_ns = std::max<int64_t>(context.end_ns - context.start_monotonic_ns, 0);
    for (uint64_t window = 1; window < windows; ++window) {
      const int64_t until_ns =
          context.start_monotonic_ns + static_cast<int64_t>(static_cast<double>(span_ns) *
                                                            static_cast<double>(window) /
                                                            static_cast<double>(windows));
      session.Advance(model, context, until_ns);
      if (session.TakeSettled(until_ns, until_ns)) writer.Piece(session.trace(), false, context.end_ns);
    }
    session.Advance(model, context);
    session.TakeAll();
    writer.Piece(session.trace(), true, context.end_ns);
    writer.Finish(session.trace(), context.end_ns);
    absl::Status finished = (*sink)->Finish();
    if (finished.ok()) created_directory.Keep();
    return finished;
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

}  // namespace tfprof
