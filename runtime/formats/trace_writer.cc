#include "runtime/formats/trace_writer.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <new>

#include "absl/strings/str_cat.h"
#include "runtime/common/output_sink.h"
#include "runtime/formats/chrome/chrome_json_writer.h"
#include "runtime/common/counting_sink.h"
#include "runtime/formats/perfetto/perfetto_writer.h"
#include "runtime/formats/tensorflow/step_stats_trace_writer.h"

namespace tfprof {

namespace {

std::string FileName(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int64_t Wall(const Trace &trace, int64_t ns) { return ns + trace.wall_offset_ns.value_or(0); }

// The recording's start and end when the trace says, else its first and last event.
int64_t TraceStart(const Trace &trace) {
  if (trace.start_ns) return *trace.start_ns;
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const Activity &activity : trace.activities) first = std::min(first, activity.begin_ns);
  for (const Step &step : trace.steps) first = std::min(first, step.begin_ns);
  return first == std::numeric_limits<int64_t>::max() ? 0 : first;
}

int64_t TraceEnd(const Trace &trace) {
  if (trace.end_ns) return *trace.end_ns;
  int64_t last = std::numeric_limits<int64_t>::min();
  for (const Activity &activity : trace.activities) last = std::max(last, activity.end_ns);
  for (const Step &step : trace.steps) last = std::max(last, step.end_ns);
  return last == std::numeric_limits<int64_t>::min() ? 0 : last;
}

}  // namespace

absl::StatusOr<WrittenTrace> WriteTrace(const Trace &trace, const std::string &path,
                                        Format format, const TraceWriteOptions &options) {
  if (absl::Status writable = CheckWritable(path, format); !writable.ok()) return writable;
  CreatedLogDirectory created_directory;
  try {
    WrittenTrace written;
    written.path = path;
    const bool chrome =
        format == Format::kChromeJson || format == Format::kChromeJsonGzip;
    if (!chrome && format != Format::kPerfetto && !trace.wall_offset_ns) {
      written.notes.push_back(
          "the input recorded no wall-clock time: the TensorFlow times are its own clock's, "
          "not microseconds since 1970");
    }
    if (format == Format::kTensorBoard) {
      absl::StatusOr<std::string> event_file =
          NewEventFilePath(path, Wall(trace, TraceStart(trace)), &created_directory);
      if (!event_file.ok()) return event_file.status();
      written.path = *event_file;
    }
    absl::StatusOr<std::unique_ptr<OutputSink>> sink =
        OutputSink::Open(written.path, format == Format::kChromeJsonGzip);
    if (!sink.ok()) return sink.status();
    CountingSink out(**sink, options.progress, absl::StrCat("writing ", FileName(written.path)));
    const int64_t end_ns = TraceEnd(trace);
    if (chrome) {
      ChromeJsonWriter writer;
      out.Write(ChromeJsonWriter::Begin());
      std::string events;
      writer.Append(trace, events, [&](std::string &text) {
        out.Write(text);
        text.clear();
      });
      out.Write(events);
      out.Write(writer.Tail(trace));
    } else if (format == Format::kPerfetto) {
      PerfettoWriter writer;
      out.Write(writer.Begin());
      std::string packets;
      writer.Append(trace, packets, [&](std::string &bytes) {
        out.Write(bytes);
        bytes.clear();
      });
      out.Write(packets);
      out.Write(writer.Info(trace));
    } else {
      StepStatsTraceWriter writer(format);
      out.Write(writer.Begin(Wall(trace, TraceStart(trace))));
      std::string records;
      writer.Append(trace, /*last=*/true, end_ns, records);
      out.Write(records);
      out.Write(writer.Finish(trace, end_ns));
      const StepStatsReport &report = writer.report();
      if (report.gpu_annotations_skipped > 0) {
        written.notes.push_back(absl::StrCat(
            report.gpu_annotations_skipped,
            " GPU annotation spans (gpu_user_annotation) were left out: TensorFlow's formats "
            "have no such node"));
      }
      if (report.others_skipped > 0) {
        written.notes.push_back(absl::StrCat(
            report.others_skipped,
            " instants, counter samples, synchronisation waits and tracer overheads were left "
            "out: TensorFlow's formats have no such node"));
      }
    }
    if (absl::Status finished = (*sink)->Finish(); !finished.ok()) return finished;
    created_directory.Keep();
    if (options.progress != nullptr) options.progress->Finish();
    return written;
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

}  // namespace tfprof
