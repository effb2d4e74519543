#include "runtime/export/exporter.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <new>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/export/chrome_trace_writer.h"
#include "runtime/export/output_sink.h"
#include "runtime/export/run_metadata_encoder.h"
#include "runtime/export/step_file_encoder.h"
#include "runtime/export/step_partitioner.h"
#include "runtime/string_view_bridge.h"

namespace tfprof {

namespace {

// Every step of a finished (or snapshotted) model, with its spans, then the spans outside steps.
std::vector<StepRecord> AllStepRecords(const SessionLog &model, const ExportContext &context) {
  StepPartitioner partitioner;
  partitioner.Advance(model, context.converter);
  return partitioner.TakeAll(context.end_ns);
}

absl::Status WriteSteps(const SessionLog &model, const ExportContext &context, Format kind,
                        OutputSink &sink) {
  StepFileEncoder encoder(kind);
  sink.Write(encoder.Header(context));
  sink.Write(encoder.FinalRecords(AllStepRecords(model, context), model, context, model.gpu.losses));
  sink.Write(encoder.Trailer(model, context));
  return absl::OkStatus();
}

absl::Status WriteRunMetadata(const SessionLog &model, const ExportContext &context,
                              OutputSink &sink) {
  RunMetadataEncoder encoder;
  for (const StepRecord &record : AllStepRecords(model, context)) {
    encoder.Add(record, model, context);
  }
  encoder.AddLosses(model, context, model.gpu.losses);
  sink.Write(encoder.TakeRunMetadata(model));
  return absl::OkStatus();
}

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
  try {
    std::string file_path = path;
    if (format == Format::kTensorBoard) {
      absl::StatusOr<std::string> event_file = NewEventFilePath(path, context.start_wall_ns);
      if (!event_file.ok()) return event_file.status();
      file_path = *event_file;
    }
    absl::StatusOr<std::unique_ptr<OutputSink>> sink =
        OutputSink::Open(file_path, format == Format::kChromeJsonGzip);
    if (!sink.ok()) return sink.status();
    absl::Status written;
    switch (format) {
      case Format::kChromeJson:
      case Format::kChromeJsonGzip:
        written = WriteChromeTrace(model, context, **sink);
        break;
      case Format::kRunMetadata:
        written = WriteRunMetadata(model, context, **sink);
        break;
      case Format::kTfRecord:
        written = WriteSteps(model, context, Format::kTfRecord, **sink);
        break;
      case Format::kTensorBoard:
        written = WriteSteps(model, context, Format::kTensorBoard, **sink);
        break;
      case Format::kStepStats:
        written = absl::InvalidArgumentError("a bare StepStats is read, never written");
        break;
    }
    if (!written.ok()) return written;
    return (*sink)->Finish();
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

}  // namespace tfprof
