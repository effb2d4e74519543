// The file a session moves collected records to when they exceed its memory limit, so a long run
// keeps everything without holding it in memory. It has no name on disk: it disappears with the
// process, whatever way the process ends.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace tfprof {

// Append() runs on one thread at a time; Read() and Release() may run beside it on another.
class SpillFile {
 public:
  // Creates an unnamed file in `directory` ($TMPDIR, else /tmp, when empty).
  // Errors: Unavailable, naming the directory and the system's reason.
  static absl::StatusOr<std::unique_ptr<SpillFile>> Create(const std::string &directory);
  ~SpillFile();
  SpillFile(const SpillFile &) = delete;
  SpillFile &operator=(const SpillFile &) = delete;

  // Appends `size` bytes; returns their offset, or -1 when the write failed (disk full).
  int64_t Append(const void *data, size_t size);
  // Reads back `size` bytes written at `offset`. Returns false on a short or failed read.
  bool Read(int64_t offset, void *data, size_t size) const;
  // Gives the disk space of bytes no longer needed back to the file system (best effort).
  void Release(int64_t offset, size_t size);

  // Whether the file lives in memory (tmpfs, ramfs): spilling there saves no RAM.
  bool in_memory() const { return in_memory_; }

  // Bytes written and not released.
  uint64_t bytes_held() const { return bytes_held_.load(std::memory_order_relaxed); }
  const std::string &directory() const { return directory_; }

 private:
  SpillFile(int fd, std::string directory, bool in_memory)
      : fd_(fd), directory_(std::move(directory)), in_memory_(in_memory) {}
  void PunchHole(int64_t offset, size_t size);

  int fd_;
  std::string directory_;
  bool in_memory_;
  int64_t end_ = 0;  // Append() runs on one thread at a time: the writer's, or the collector's
  std::atomic<uint64_t> bytes_held_{0};
};

}  // namespace tfprof
