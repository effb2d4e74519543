// A whole trace file's bytes for the readers that walk a binary format in place (Perfetto,
// XPlane): the file mapped into memory, or read into it where it cannot be mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tfprof {

class FileBytes {
 public:
  FileBytes() = default;
  ~FileBytes();
  FileBytes(const FileBytes &) = delete;
  FileBytes &operator=(const FileBytes &) = delete;

  // Maps (or reads) the `size` bytes of open file `fd`; Unavailable naming `path` when it cannot.
  absl::Status Open(int fd, uint64_t size, const std::string &path);

  std::string_view data() const { return data_; }

  // The bytes before `offset` are read: a mapped file's pages there leave the process's resident
  // memory (the page cache keeps them; a later read maps them in again). A reader walking a
  // large file front to back so holds a window of it, not all of it.
  void Consumed(size_t offset);

 private:
  void *mapped_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;  // the mapped bytes before this were let go (Consumed)
  std::string copy_;
  std::string_view data_;
};

}  // namespace tfprof
