// Buffered, streaming output to a file, plain or gzip-compressed, written under a temporary name
// and renamed into place only when everything was written.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

class OutputSink {
 public:
  static constexpr size_t kBufferBytes = 1 << 20;

  // Opens a temporary file beside `path`; gzip-compresses when `gzip` is true.
  static absl::StatusOr<std::unique_ptr<OutputSink>> Open(const std::string &path, bool gzip);

  virtual ~OutputSink();
  OutputSink(const OutputSink &) = delete;
  OutputSink &operator=(const OutputSink &) = delete;

  void Write(std::string_view bytes) {
    if (bytes.size() > kBufferBytes - used_) {
      WriteLarge(bytes);
      return;
    }
    std::memcpy(buffer_.get() + used_, bytes.data(), bytes.size());
    used_ += bytes.size();
  }

  // Returns room for at least `bytes` (<= 4096) bytes; say how many were used with Commit().
  char *Reserve(size_t bytes) {
    if (kBufferBytes - used_ < bytes) Flush();
    return buffer_.get() + used_;
  }
  void Commit(size_t bytes) { used_ += bytes; }

  // Flushes, closes and renames the file into place. On any earlier or current failure the
  // temporary file is removed and the error names the path and the reason.
  absl::Status Finish();

 protected:
  OutputSink(std::string final_path, std::string temporary_path, int fd);
  // Hands `size` buffered bytes to the file (compressing first when needed).
  virtual absl::Status Deliver(const char *data, size_t size) = 0;
  // Writes whatever the encoding still holds back (the gzip trailer).
  virtual absl::Status DeliverEnd() { return absl::OkStatus(); }
  absl::Status WriteToFile(const char *data, size_t size);
  const std::string &final_path() const { return final_path_; }

 private:
  void Flush();
  void WriteLarge(std::string_view bytes);

  const std::string final_path_;
  const std::string temporary_path_;
  int fd_;
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
  absl::Status status_;  // the first failure; later writes are skipped
};

}  // namespace tfprof
