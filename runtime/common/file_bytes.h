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

 private:
  void *mapped_ = nullptr;
  size_t size_ = 0;
  std::string copy_;
  std::string_view data_;
};

}  // namespace tfprof
