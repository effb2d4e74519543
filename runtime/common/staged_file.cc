#include "runtime/common/staged_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/common/signal_safe_paths.h"

namespace tfprof {

namespace {

absl::Status FileError(const char *what, const std::string &path, int error) {
  return absl::UnavailableError(
      absl::StrCat("cannot ", what, " '", path, "': ", std::strerror(error)));
}

// Hidden names a signal handler may have to remove.
SignalSafePaths<32> g_hidden_names;

// -1 when the name could not be listed.
int ListHiddenName(const std::string &path) { return g_hidden_names.Add(path); }

void UnlistHiddenName(int slot) { g_hidden_names.Remove(slot); }

// 64 unpredictable bits (the kernel's random source; a mix of time, process and a counter where
// that is unavailable), so that a file planted at the name cannot be prepared in advance.
uint64_t RandomBits() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof bits)) return bits;
  static std::atomic<uint64_t> counter{0};
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  bits = (static_cast<uint64_t>(now.tv_nsec) << 20) ^ static_cast<uint64_t>(now.tv_sec) ^
         (static_cast<uint64_t>(getpid()) << 40) ^ (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
  return bits;
}

// A hidden name beside `path` that keeps none of its basename: tools that watch the directory
// (TensorBoard picks up any name containing "tfevents") never see a partial file.
std::string HiddenNameBeside(const std::string &path) {
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return absl::StrCat(directory, ".tfprof-", getpid(), "-", absl::Hex(RandomBits(), absl::kZeroPad16),
                      ".tmp");
}

// Names taken by someone else are tried again with fresh random names this many times.
constexpr int kHiddenNameTries = 16;

// Output files are created 0666 less the umask, as other programs' files are (a group-writable
// umask gives group-writable traces).
constexpr mode_t kFileMode = 0666;

std::string DirectoryOf(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::StatusOr<StagedFile> StagedFile::Create(const std::string &path, Staging staging) {
#ifdef O_TMPFILE
  // Linked into place later through /proc/self/fd: without /proc there is no way to name it.
  if (staging == Staging::kUnnamedWherePossible && access("/proc/self/fd", X_OK) == 0) {
    const int fd = open(DirectoryOf(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, kFileMode);
    if (fd >= 0) return StagedFile(path, "", fd, -1);
    // ENOENT, EACCES and the like are about the path: report them. Others mean this file system
    // has no unnamed files (EOPNOTSUPP, EISDIR or EINVAL from old kernels): use a name.
    if (errno == ENOENT || errno == EACCES || errno == EROFS || errno == ENOTDIR ||
        errno == ENOSPC || errno == EDQUOT || errno == EMFILE || errno == ENFILE) {
      return FileError("open for writing", path, errno);
    }
  }
#endif
  for (int attempt = 1;; ++attempt) {
    const std::string hidden = HiddenNameBeside(path);
    const int slot = ListHiddenName(hidden);
    const int fd = open(hidden.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kFileMode);
    if (fd >= 0) return StagedFile(path, hidden, fd, slot);
    const int error = errno;
    UnlistHiddenName(slot);
    if (error == EEXIST && attempt < kHiddenNameTries) continue;
    return absl::UnavailableError(absl::StrCat("cannot create the temporary file '", hidden,
                                               "' for '", path, "': ", std::strerror(error)));
  }
}

StagedFile::StagedFile(std::string path, std::string hidden_path, int fd, int slot)
    : path_(std::move(path)), hidden_path_(std::move(hidden_path)), fd_(fd), slot_(slot) {}

StagedFile::StagedFile(StagedFile &&other) noexcept
    : path_(std::move(other.path_)),
      hidden_path_(std::exchange(other.hidden_path_, "")),
      fd_(std::exchange(other.fd_, -1)),
      slot_(std::exchange(other.slot_, -1)),
      published_(other.published_) {}

StagedFile &StagedFile::operator=(StagedFile &&other) noexcept {
  if (this != &other) {
    static_cast<void>(Close());
    path_ = std::move(other.path_);
    hidden_path_ = std::exchange(other.hidden_path_, "");
    fd_ = std::exchange(other.fd_, -1);
    slot_ = std::exchange(other.slot_, -1);
    published_ = other.published_;
  }
  return *this;
}

StagedFile::~StagedFile() { static_cast<void>(Close()); }

void StagedFile::ForgetHiddenName(bool remove) {
  if (hidden_path_.empty()) return;
  if (remove) unlink(hidden_path_.c_str());
  UnlistHiddenName(slot_);
  slot_ = -1;
  hidden_path_.clear();
}

absl::Status StagedFile::Publish() {
  if (published_) return absl::OkStatus();
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("'", path_, "' is closed"));
  if (hidden_path_.empty()) {
    // Linked straight to its name where none is taken: a process killed at any moment leaves
    // the file named or nothing (the kill matrix found hidden names left between the two steps
    // below). rename() replaces a file already there, linkat() does not: for one, link under a
    // hidden name first (listed, like any hidden name), then rename it.
    char fd_path[64];
    snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", fd_);
    if (linkat(AT_FDCWD, fd_path, AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      published_ = true;
      return absl::OkStatus();
    }
    for (int attempt = 1;; ++attempt) {
      std::string hidden = HiddenNameBeside(path_);
      const int slot = ListHiddenName(hidden);
      if (linkat(AT_FDCWD, fd_path, AT_FDCWD, hidden.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        hidden_path_ = std::move(hidden);
        slot_ = slot;
        break;
      }
      const int error = errno;
      UnlistHiddenName(slot);
      if (error == EEXIST && attempt < kHiddenNameTries) continue;
      return absl::UnavailableError(absl::StrCat("cannot create the temporary file '", hidden,
                                                 "' for '", path_, "': ", std::strerror(error)));
    }
  }
  if (std::rename(hidden_path_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    ForgetHiddenName(true);
    return FileError("rename the finished file to", path_, error);
  }
  ForgetHiddenName(false);
  published_ = true;
  return absl::OkStatus();
}

absl::Status StagedFile::Close() {
  if (fd_ < 0) return absl::OkStatus();
  const int fd = std::exchange(fd_, -1);
  const bool closed = close(fd) == 0;
  const int error = errno;
  ForgetHiddenName(true);  // only an unpublished file still has one
  if (!closed) return FileError("close", path_, error);
  return absl::OkStatus();
}

void RemoveStagedFilesNow() {
  g_hidden_names.ForEach([](const char *path) { unlink(path); });
}

}  // namespace tfprof
