#include "runtime/export/output_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/string_view_bridge.h"

namespace tfprof {

namespace {

absl::Status FileError(std::string_view what, const std::string &path, int error) {
  return absl::UnavailableError(
      absl::StrCat("cannot ", ToAbsl(what), " '", path, "': ", std::strerror(error)));
}

class PlainSink final : public OutputSink {
 public:
  PlainSink(std::string final_path, std::string temporary_path, int fd)
      : OutputSink(std::move(final_path), std::move(temporary_path), fd) {}

 protected:
  absl::Status Deliver(const char *data, size_t size) override { return WriteToFile(data, size); }
};

class GzipSink final : public OutputSink {
 public:
  GzipSink(std::string final_path, std::string temporary_path, int fd)
      : OutputSink(std::move(final_path), std::move(temporary_path), fd),
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
  static std::atomic<unsigned> sequence{0};
  // A hidden name beside the target that keeps none of its basename: tools that watch the
  // directory (TensorBoard picks up any name containing "tfevents") never see a partial file.
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string temporary =
      absl::StrCat(directory, ".tfprof-", getpid(), "-", sequence.fetch_add(1), ".tmp");
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("open for writing", path, errno);
  try {
    if (gzip) return std::unique_ptr<OutputSink>(new GzipSink(path, temporary, fd));
    return std::unique_ptr<OutputSink>(new PlainSink(path, temporary, fd));
  } catch (const std::bad_alloc &) {
    close(fd);
    unlink(temporary.c_str());
    return absl::ResourceExhaustedError(absl::StrCat("out of memory opening '", path, "'"));
  }
}

OutputSink::OutputSink(std::string final_path, std::string temporary_path, int fd)
    : final_path_(std::move(final_path)),
      temporary_path_(std::move(temporary_path)),
      fd_(fd),
      buffer_(new char[kBufferBytes]) {}

OutputSink::~OutputSink() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(temporary_path_.c_str());
  }
}

absl::Status OutputSink::WriteToFile(const char *data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd_, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return FileError("write", final_path_, errno);
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
  const int fd = fd_;
  fd_ = -1;
  if (status_.ok() && close(fd) != 0) {
    status_ = FileError("close", final_path_, errno);
  } else if (!status_.ok()) {
    close(fd);
  }
  if (status_.ok() && std::rename(temporary_path_.c_str(), final_path_.c_str()) != 0) {
    status_ = FileError("rename the finished file to", final_path_, errno);
  }
  if (!status_.ok()) unlink(temporary_path_.c_str());
  return status_;
}

}  // namespace tfprof
