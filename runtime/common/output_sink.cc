#include "runtime/common/output_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

absl::Status FileError(std::string_view what, const std::string &path, int error) {
  return absl::UnavailableError(
      absl::StrCat("cannot ", ToAbsl(what), " '", path, "': ", std::strerror(error)));
}

class PlainSink final : public OutputSink {
 public:
  explicit PlainSink(StagedFile file) : OutputSink(std::move(file)) {}

 protected:
  absl::Status Deliver(const char *data, size_t size) override { return WriteToFile(data, size); }
};

class GzipSink final : public OutputSink {
 public:
  explicit GzipSink(StagedFile file)
      : OutputSink(std::move(file)),
        compressed_(new unsigned char[kCompressedBytes]) {
    std::memset(&stream_, 0, sizeof stream_);
    // 15 + 16: a gzip wrapper rather than raw zlib, so gunzip and Python's gzip read it.
    ready_ = deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                          Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~GzipSink() override {
    if (ready_) deflateEnd(&stream_);
  }

 protected:
  absl::Status Deliver(const char *data, size_t size) override { return Compress(data, size, Z_NO_FLUSH); }
  absl::Status DeliverEnd() override { return Compress(nullptr, 0, Z_FINISH); }

 private:
  static constexpr size_t kCompressedBytes = 256 * 1024;

  absl::Status Compress(const char *data, size_t size, int flush) {
    if (!ready_) return absl::InternalError(absl::StrCat("zlib failed to start for '", final_path(), "'"));
    stream_.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data));
    stream_.avail_in = static_cast<uInt>(size);
    int result = Z_OK;
    do {
      stream_.next_out = compressed_.get();
      stream_.avail_out = kCompressedBytes;
      result = deflate(&stream_, flush);
      if (result == Z_STREAM_ERROR) {
        return absl::InternalError(absl::StrCat("zlib failed compressing '", final_path(), "'"));
      }
      const size_t produced = kCompressedBytes - stream_.avail_out;
      if (absl::Status status = WriteToFile(reinterpret_cast<char *>(compressed_.get()), produced);
          !status.ok()) {
        return status;
      }
    } while (stream_.avail_out == 0 || (flush == Z_FINISH && result != Z_STREAM_END));
    return absl::OkStatus();
  }

  z_stream stream_;
  bool ready_ = false;
  std::unique_ptr<unsigned char[]> compressed_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<OutputSink>> OutputSink::Open(const std::string &path, bool gzip) {
  absl::StatusOr<StagedFile> file = StagedFile::Create(path);
  if (!file.ok()) return file.status();
  try {
    if (gzip) return std::unique_ptr<OutputSink>(new GzipSink(std::move(*file)));
    return std::unique_ptr<OutputSink>(new PlainSink(std::move(*file)));
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory opening '", path, "'"));
  }
}

OutputSink::OutputSink(StagedFile file)
    : file_(std::move(file)), buffer_(new char[kBufferBytes]) {}

OutputSink::~OutputSink() = default;  // an unfinished file goes with its StagedFile

absl::Status OutputSink::WriteToFile(const char *data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(file_.fd(), data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return FileError("write", final_path(), errno);
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return absl::OkStatus();
}

void OutputSink::Flush() {
  if (status_.ok() && used_ > 0) status_ = Deliver(buffer_.get(), used_);
  used_ = 0;
}

void OutputSink::WriteLarge(std::string_view bytes) {
  Flush();
  if (status_.ok()) status_ = Deliver(bytes.data(), bytes.size());
}

absl::Status OutputSink::Finish() {
  Flush();
  if (status_.ok()) status_ = DeliverEnd();
  if (status_.ok()) status_ = file_.Publish();
  const bool published = file_.published();
  absl::Status closed = file_.Close();
  if (status_.ok() && !closed.ok()) {
    // The system reported a lost write only now: the named file is incomplete.
    if (published) unlink(final_path().c_str());
    status_ = std::move(closed);
  }
  return status_;
}

}  // namespace tfprof
