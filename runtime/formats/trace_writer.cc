#include "runtime/formats/trace_writer.h"

#include <unistd.h>

#include <new>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/common/file_name.h"
#include "runtime/formats/chrome/chrome_json_writer.h"
#include "runtime/formats/perfetto/perfetto_writer.h"
#include "runtime/formats/tensorflow/step_stats_trace_writer.h"
#include "runtime/formats/xplane/xplane_writer.h"

namespace tfprof {

std::unique_ptr<FormatWriter> FormatWriter::For(Format format) {
  if (IsChromeJson(format)) return std::make_unique<ChromeJsonWriter>();
  if (format == Format::kPerfetto) return std::make_unique<PerfettoWriter>();
  if (format == Format::kXPlane) return std::make_unique<XPlaneWriter>();
  return std::make_unique<StepStatsTraceWriter>(format);
}

namespace {

// The recording's start and end when the trace says, else its first and last event.
int64_t TraceStart(const Trace &trace) {
  if (trace.start_ns) return *trace.start_ns;
  const std::optional<TimeExtent> extent = EventExtent(trace);
  return extent ? extent->begin_ns : 0;
}

int64_t TraceEnd(const Trace &trace) {
  if (trace.end_ns) return *trace.end_ns;
  const std::optional<TimeExtent> extent = EventExtent(trace);
  return extent ? extent->end_ns : 0;
}

int64_t WallStart(const Trace &trace) {
  return TraceStart(trace) + trace.wall_offset_ns.value_or(0);
}

}  // namespace

TraceWriteDriver::TraceWriteDriver(Format format, Consumer consume, ProgressListener *progress)
    : writer_(FormatWriter::For(format)),
      consume_(std::move(consume)),
      progress_(progress),
      drain_([this](std::string &text) {
        Write(text);
        text.clear();
      }) {}

TraceWriteDriver::~TraceWriteDriver() = default;

absl::StatusOr<std::unique_ptr<TraceWriteDriver>> TraceWriteDriver::ToFile(
    const std::string &path, Format format, int64_t start_wall_ns, ProgressListener *progress,
    const TensorBoardProfile &profile) {
  if (absl::Status writable = CheckWritable(path, format); !writable.ok()) return writable;
  std::unique_ptr<TraceWriteDriver> driver(new TraceWriteDriver(format, {}, progress));
  driver->path_ = path;
  if (format == Format::kTensorBoard) {
    absl::StatusOr<std::string> event_file =
        NewEventFilePath(path, start_wall_ns, &driver->created_directory_);
    if (!event_file.ok()) return event_file.status();
    driver->path_ = *std::move(event_file);
  }
  absl::StatusOr<std::unique_ptr<OutputSink>> file =
      OutputSink::Open(driver->path_, format == Format::kChromeJsonGzip);
  if (!file.ok()) return file.status();
  driver->file_ = *std::move(file);
  if (format == Format::kTensorBoard && profile.write) {
    // The same trace as the profile TensorBoard's Profile tab reads, written from the same pieces.
    absl::StatusOr<std::string> profile_path =
        NewProfilePath(path, start_wall_ns, profile.host, &driver->created_directory_);
    if (!profile_path.ok()) return profile_path.status();
    absl::StatusOr<std::unique_ptr<TraceWriteDriver>> companion =
        ToFile(*profile_path, Format::kXPlane, start_wall_ns, nullptr);
    if (!companion.ok()) return companion.status();
    driver->profile_ = *std::move(companion);
  }
  driver->progress_label_ = absl::StrCat("writing ", FileName(driver->path_));
  driver->Write(driver->writer_->Begin(start_wall_ns));
  return driver;
}

std::unique_ptr<TraceWriteDriver> TraceWriteDriver::ToConsumer(Format format, int64_t start_wall_ns,
                                                               Consumer consume) {
  std::unique_ptr<TraceWriteDriver> driver(
      new TraceWriteDriver(format, std::move(consume), nullptr));
  driver->Write(driver->writer_->Begin(start_wall_ns));
  return driver;
}

std::unique_ptr<TraceWriteDriver> TraceWriteDriver::ForLiveFile(Format format) {
  return std::unique_ptr<TraceWriteDriver>(new TraceWriteDriver(format, {}, nullptr));
}

void TraceWriteDriver::LiveStart(const Trace &trace, int64_t start_wall_ns, int64_t end_ns,
                                 std::string &begin, std::string &tail) {
  begin = writer_->Begin(start_wall_ns);
  LiveEnding(trace, /*last=*/false, end_ns, begin, tail);
}

void TraceWriteDriver::LivePiece(const Trace &trace, bool last, int64_t end_ns, std::string &body,
                                 std::string &tail) {
  writer_->Append(trace, last, end_ns, body, {});
  LiveEnding(trace, last, end_ns, body, tail);
}

void TraceWriteDriver::LiveEnding(const Trace &trace, bool last, int64_t end_ns, std::string &body,
                                  std::string &tail) {
  switch (writer_->ending()) {
    case FormatWriter::Ending::kRewritten:
      tail = writer_->Finish(trace, end_ns);
      break;
    case FormatWriter::Ending::kRepeated:
      body += writer_->Finish(trace, end_ns);
      break;
    case FormatWriter::Ending::kOnce:
      if (last) body += writer_->Finish(trace, end_ns);
      break;
  }
}

void TraceWriteDriver::Write(std::string_view bytes) {
  if (file_ == nullptr) {
    if (consume_ && !bytes.empty()) consume_(bytes);
    return;
  }
  file_->Write(bytes);
  written_ += bytes.size();
  if (progress_ != nullptr) progress_->Update(progress_label_, written_, 0);
}

void TraceWriteDriver::Append(const Trace &trace, bool last, int64_t end_ns) {
  piece_.clear();
  writer_->Append(trace, last, end_ns, piece_, drain_);
  Write(piece_);
  if (profile_ != nullptr) profile_->Append(trace, last, end_ns);
}

absl::StatusOr<WrittenTrace> TraceWriteDriver::Finish(const Trace &trace, int64_t end_ns) {
  Write(writer_->Finish(trace, end_ns));
  WrittenTrace written{path_, writer_->Notes(trace), {}};
  if (file_ != nullptr) {
    if (absl::Status finished = file_->Finish(); !finished.ok()) return finished;
  }
  // A log directory's profile after its event file, so that a failure of either leaves neither:
  // the event file, named by now, goes again if the profile cannot be written.
  if (profile_ != nullptr) {
    absl::StatusOr<WrittenTrace> profile = profile_->Finish(trace, end_ns);
    if (!profile.ok()) {
      unlink(path_.c_str());
      return profile.status();
    }
    written.profile = profile->path;
    // The profile's own notes say what XPlane left out; the event file's say theirs.
    for (std::string &note : profile->notes) {
      written.notes.push_back(absl::StrCat(FileName(profile->path), ": ", note));
    }
  }
  if (file_ != nullptr) {
    created_directory_.Keep();
    if (progress_ != nullptr) progress_->Finish();
  }
  return written;
}

absl::StatusOr<WrittenTrace> WriteTrace(const Trace &trace, const std::string &path,
                                        Format format, ProgressListener *progress,
                                        bool tensorboard_profile) {
  try {
    absl::StatusOr<std::unique_ptr<TraceWriteDriver>> driver = TraceWriteDriver::ToFile(
        path, format, WallStart(trace), progress,
        TensorBoardProfile{tensorboard_profile, trace.hostname});
    if (!driver.ok()) return driver.status();
    (*driver)->Append(trace, /*last=*/true, TraceEnd(trace));
    return (*driver)->Finish(trace, TraceEnd(trace));
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

void EncodeTrace(const Trace &trace, Format format, const TraceWriteDriver::Consumer &consume) {
  std::unique_ptr<TraceWriteDriver> driver =
      TraceWriteDriver::ToConsumer(format, WallStart(trace), consume);
  driver->Append(trace, /*last=*/true, TraceEnd(trace));
  static_cast<void>(driver->Finish(trace, TraceEnd(trace)));
}

}  // namespace tfprof
