#include "runtime/export/step_file_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/export/exporter.h"

namespace tfprof {

absl::StatusOr<std::unique_ptr<StepFileStream>> StepFileStream::Open(Format kind,
                                                                     const std::string &path,
                                                                     const ExportContext &context) {
  std::string file_path = path;
  if (kind == Format::kTensorBoard) {
    absl::StatusOr<std::string> event_file = NewEventFilePath(path, context.start_wall_ns);
    if (!event_file.ok()) return event_file.status();
    file_path = *event_file;
  }
  const int fd = open(file_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open for writing '", file_path, "': ", std::strerror(errno)));
  }
  std::unique_ptr<StepFileStream> stream(new StepFileStream(kind, std::move(file_path), fd));
  stream->Write(stream->encoder_.Header(context));
  if (!stream->status_.ok()) return stream->status_;
  return stream;
}

StepFileStream::~StepFileStream() {
  if (fd_ >= 0) close(fd_);
}

void StepFileStream::Write(std::string_view bytes) {
  while (status_.ok() && !bytes.empty()) {
    const ssize_t written = write(fd_, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      status_ = absl::UnavailableError(absl::StrCat("cannot write '", path_, "': ",
                                                    std::strerror(written < 0 ? errno : EIO)));
      return;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

void StepFileStream::Append(const SessionLog &model, const ExportContext &context,
                            int64_t settled_ns, int64_t gpu_complete_through_ns) {
  partitioner_.Advance(model, context.converter);
  Write(encoder_.Records(partitioner_.TakeSettled(settled_ns, gpu_complete_through_ns), model,
                         context));
}

absl::Status StepFileStream::Finish(const SessionLog &model, const ExportContext &context) {
  partitioner_.Advance(model, context.converter);
  std::vector<StepRecord> records = partitioner_.TakeAll(context.end_ns);
  GpuLossCounters losses = model.gpu.losses;
  losses.late_records = partitioner_.late_gpu_records();  // this file's, counted here
  Write(encoder_.FinalRecords(std::move(records), model, context, losses));
  Write(encoder_.Trailer(model, context));
  if (close(fd_) != 0 && status_.ok()) {
    status_ = absl::UnavailableError(absl::StrCat("cannot close '", path_, "': ", std::strerror(errno)));
  }
  fd_ = -1;
  return status_;
}

}  // namespace tfprof
