#include "runtime/common/file_bytes.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tfprof {

FileBytes::~FileBytes() {
  if (mapped_ != nullptr) munmap(mapped_, size_);
}

void FileBytes::Consumed(size_t offset) {
  if (mapped_ == nullptr) return;
  static const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t end = std::min(offset, size_) / page * page;
  if (end <= released_) return;
  // A private, read-only mapping of a file: dropped pages read the file again if touched.
  madvise(static_cast<char *>(mapped_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

absl::Status FileBytes::Open(int fd, uint64_t size, const std::string &path) {
  if (size == 0) return absl::OkStatus();
  if (size > SIZE_MAX / 2) {
    return absl::UnavailableError(absl::StrCat(path, ": cannot read: the file is too large"));
  }
  size_ = static_cast<size_t>(size);
  void *address = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (address != MAP_FAILED) {
    mapped_ = address;
    madvise(address, size_, MADV_SEQUENTIAL);
    data_ = std::string_view(static_cast<const char *>(address), size_);
    return absl::OkStatus();
  }
  copy_.resize(size_);
  size_t done = 0;
  while (done < size_) {
    const ssize_t got = pread(fd, copy_.data() + done, size_ - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return absl::UnavailableError(
          absl::StrCat(path, ": cannot read at byte ", done, ": ", std::strerror(errno)));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  copy_.resize(done);
  data_ = copy_;
  return absl::OkStatus();
}

}  // namespace tfprof
