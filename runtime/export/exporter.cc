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

constexpr char kSupported[] =
    "supported: .json, .json.gz, .pb, .tfrecord, or a directory for a TensorBoard event file";

bool IsDirectory(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool Exists(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// Every step of a finished (or snapshotted) model, with its spans, then the spans outside steps.
std::vector<StepRecord> AllStepRecords(const TraceModel &model, const ExportContext &context) {
  StepPartitioner partitioner;
  partitioner.Advance(model, context.converter);
  return partitioner.TakeAll(context.end_ns);
}

absl::Status WriteSteps(const TraceModel &model, const ExportContext &context, StepFileKind kind,
                        OutputSink &sink) {
  StepFileEncoder encoder(kind);
  sink.Write(encoder.Header(context));
  sink.Write(encoder.FinalRecords(AllStepRecords(model, context), model, context, model.gpu.losses));
  sink.Write(encoder.Trailer(model, context));
  return absl::OkStatus();
}

absl::Status WriteRunMetadata(const TraceModel &model, const ExportContext &context,
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

std::string SlowStepDumpPath(const std::string &output, ExportFormat format, int64_t step) {
  const std::string label = absl::StrCat("slow-step-", step);
  if (format == ExportFormat::kTensorBoard) {
    return absl::StrCat(output, absl::EndsWith(output, "/") ? "" : "/", label, "/");
  }
  // Before the first dot of the file name (not of a directory, nor a leading one).
  const size_t name_start = output.rfind('/') == std::string::npos ? 0 : output.rfind('/') + 1;
  const size_t dot = output.find('.', name_start + 1);
  if (dot == std::string::npos) return absl::StrCat(output, ".", label);
  return absl::StrCat(output.substr(0, dot), ".", label, output.substr(dot));
}

absl::Status FormatForPath(std::string_view path, ExportFormat *format) {
  const absl::string_view text = ToAbsl(path);
  if (absl::EndsWith(text, "/") || IsDirectory(std::string(path))) {
    *format = ExportFormat::kTensorBoard;
  } else if (absl::EndsWith(text, ".json.gz")) {
    *format = ExportFormat::kChromeJsonGzip;
  } else if (absl::EndsWith(text, ".json")) {
    *format = ExportFormat::kChromeJson;
  } else if (absl::EndsWith(text, ".pb")) {
    *format = ExportFormat::kRunMetadata;
  } else if (absl::EndsWith(text, ".tfrecord")) {
    *format = ExportFormat::kTfRecord;
  } else {
    const size_t slash = path.rfind('/');
    const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const size_t dot = file.find('.');
    const std::string_view extension = dot == std::string_view::npos ? "" : file.substr(dot);
    const std::string what =
        extension.empty() ? "no extension" : absl::StrCat("extension '", ToAbsl(extension), "'");
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': ", what, " names no supported format (", kSupported, ")"));
  }
  return absl::OkStatus();
}

absl::Status FormatForName(std::string_view name, ExportFormat *format) {
  if (name == "json") {
    *format = ExportFormat::kChromeJson;
  } else if (name == "json.gz") {
    *format = ExportFormat::kChromeJsonGzip;
  } else if (name == "pb") {
    *format = ExportFormat::kRunMetadata;
  } else if (name == "tfrecord") {
    *format = ExportFormat::kTfRecord;
  } else if (name == "tensorboard") {
    *format = ExportFormat::kTensorBoard;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", ToAbsl(name), "' is not one of json, json.gz, pb, tfrecord, tensorboard"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> NewEventFilePath(const std::string &directory, int64_t wall_ns) {
  std::string dir = directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!IsDirectory(dir) && mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    return absl::UnavailableError(absl::StrCat("cannot create TensorBoard log directory '", dir,
                                               "': ", std::strerror(errno)));
  }
  const std::string base = absl::StrFormat("%s/events.out.tfevents.%010d.%s", dir,
                                           wall_ns / 1000000000, HostName());
  std::string path = base;
  for (int suffix = 2; Exists(path); ++suffix) path = absl::StrCat(base, ".", suffix);
  return path;
}

absl::Status ExportTrace(const TraceModel &model, const ExportContext &context,
                         const std::string &path) {
  ExportFormat format;
  if (absl::Status status = FormatForPath(path, &format); !status.ok()) return status;
  return ExportTrace(model, context, path, format);
}

absl::Status ExportTrace(const TraceModel &model, const ExportContext &context,
                         const std::string &path, ExportFormat format) {
  try {
    std::string file_path = path;
    if (format == ExportFormat::kTensorBoard) {
      absl::StatusOr<std::string> event_file = NewEventFilePath(path, context.start_wall_ns);
      if (!event_file.ok()) return event_file.status();
      file_path = *event_file;
    }
    absl::StatusOr<std::unique_ptr<OutputSink>> sink =
        OutputSink::Open(file_path, format == ExportFormat::kChromeJsonGzip);
    if (!sink.ok()) return sink.status();
    absl::Status written;
    switch (format) {
      case ExportFormat::kChromeJson:
      case ExportFormat::kChromeJsonGzip:
        written = WriteChromeTrace(model, context, **sink);
        break;
      case ExportFormat::kRunMetadata:
        written = WriteRunMetadata(model, context, **sink);
        break;
      case ExportFormat::kTfRecord:
        written = WriteSteps(model, context, StepFileKind::kTfRecord, **sink);
        break;
      case ExportFormat::kTensorBoard:
        written = WriteSteps(model, context, StepFileKind::kEventFile, **sink);
        break;
    }
    if (!written.ok()) return written;
    return (*sink)->Finish();
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

}  // namespace tfprof
