#include "runtime/storage/spill_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tfprof {

namespace {

std::string DefaultDirectory() {
  const char *tmpdir = getenv("TMPDIR");
  return tmpdir != nullptr && tmpdir[0] != '\0' ? tmpdir : "/tmp";
}

}  // namespace

absl::StatusOr<std::unique_ptr<SpillFile>> SpillFile::Create(const std::string &requested) {
  const std::string directory = requested.empty() ? DefaultDirectory() : requested;
  int fd = -1;
#ifdef O_TMPFILE
  fd = open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd < 0) {
    // File systems without O_TMPFILE: a named file, unlinked at once.
    std::string path = directory + "/.tfprof-spill-XXXXXX";
    std::vector<char> name(path.begin(), path.end());
    name.push_back('\0');
    fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) unlink(name.data());
  }
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a spill file in ", directory, ": ", strerror(errno)));
  }
  // tmpfs and ramfs keep file pages in RAM: the limit would then bound nothing.
  constexpr long kTmpfsMagic = 0x01021994;
  constexpr long kRamfsMagic = 0x858458f6;
  struct statfs info;
  const bool in_memory = fstatfs(fd, &info) == 0 &&
                         (static_cast<long>(info.f_type) == kTmpfsMagic ||
                          static_cast<long>(info.f_type) == kRamfsMagic);
  return std::unique_ptr<SpillFile>(new SpillFile(fd, directory, in_memory));
}

SpillFile::~SpillFile() { close(fd_); }

int64_t SpillFile::Append(const void *data, size_t size) {
  const int64_t offset = end_;
  size_t written = 0;
  while (written < size) {
    const ssize_t result = pwrite(fd_, static_cast<const char *>(data) + written, size - written,
                                  static_cast<off_t>(offset + static_cast<int64_t>(written)));
    if (result < 0 && errno == EINTR) continue;
    if (result <= 0) {
      // Whatever part was written is given back; the caller keeps nothing of it.
      PunchHole(offset, written);
      return -1;
    }
    written += static_cast<size_t>(result);
  }
  end_ += static_cast<int64_t>(size);
  bytes_held_.fetch_add(size, std::memory_order_relaxed);
  return offset;
}

bool SpillFile::Read(int64_t offset, void *data, size_t size) const {
  size_t done = 0;
  while (done < size) {
    const ssize_t result = pread(fd_, static_cast<char *>(data) + done, size - done,
                                 static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (result < 0 && errno == EINTR) continue;
    if (result <= 0) return false;
    done += static_cast<size_t>(result);
  }
  return true;
}

void SpillFile::PunchHole(int64_t offset, size_t size) {
  if (size == 0) return;
#ifdef FALLOC_FL_PUNCH_HOLE
  fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
            static_cast<off_t>(size));
#endif
}

void SpillFile::Release(int64_t offset, size_t size) {
  PunchHole(offset, size);
  bytes_held_.fetch_sub(size, std::memory_order_relaxed);
}

}  // namespace tfprof
