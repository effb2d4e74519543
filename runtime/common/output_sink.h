// Buffered, streaming output to a file, plain or gzip-compressed, written to an unnamed file
// (staged_file.h) that takes its name only when everything was written.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/common/staged_file.h"

namespace tfprof {

class OutputSink {
 public:
  static constexpr size_t kBufferBytes = 1 << 20;

  // Opens an unnamed file in `path`'s directory; gzip-compresses when `gzip` is true.
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

  // Flushes, names and closes the file. On any earlier or current failure nothing is left under
  // the name (nor anywhere else) and the error names the path and the reason.
  absl::Status Finish();

 protected:
  explicit OutputSink(StagedFile file);
  // Hands `size` buffered bytes to the file (compressing first when needed).
  virtual absl::Status Deliver(const char *data, size_t size) = 0;
  // Writes whatever the encoding still holds back (the gzip trailer).
  virtual absl::Status DeliverEnd() { return absl::OkStatus(); }
  absl::Status WriteToFile(const char *data, size_t size);
  const std::string &final_path() const { return file_.path(); }

 private:
  void Flush();
  void WriteLarge(std::string_view bytes);

  StagedFile file_;
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
  absl::Status status_;  // the first failure; later writes are skipped
};

}  // namespace tfprof
