// A file that appears under its name only once it holds something a reader accepts.
//
// Until Publish() the file has no name at all (O_TMPFILE in the target's directory), so a process
// that dies first - any signal, SIGKILL included - leaves nothing behind. File systems without
// unnamed files get a hidden name beside the target instead (".tfprof-PID-N.tmp"); such names are
// listed where RemoveStagedFilesNow() can reach them from a signal handler.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

class StagedFile {
 public:
  enum class Staging { kUnnamedWherePossible, kHiddenName };
  // Opens a new, unnamed file for writing in `path`'s directory (kHiddenName: under a hidden
  // name, as where the file system has no unnamed files). Errors: Unavailable naming `path` and
  // the system's reason.
  static absl::StatusOr<StagedFile> Create(const std::string &path,
                                           Staging staging = Staging::kUnnamedWherePossible);

  StagedFile() = default;  // no file
  StagedFile(StagedFile &&other) noexcept;
  StagedFile &operator=(StagedFile &&other) noexcept;
  StagedFile(const StagedFile &) = delete;
  StagedFile &operator=(const StagedFile &) = delete;
  // Closes the file; an unpublished file is gone with it.
  ~StagedFile();

  int fd() const { return fd_; }
  const std::string &path() const { return path_; }
  bool published() const { return published_; }

  // Gives the file its name, replacing a file already there; the file stays open for writing.
  // Errors: Unavailable naming the path. Publishing twice does nothing.
  absl::Status Publish();
  // Closes the file: Unavailable naming the path when the system reports a write error.
  absl::Status Close();

 private:
  StagedFile(std::string path, std::string hidden_path, int fd, int slot);
  // Removes the hidden name, if any, and forgets it.
  void ForgetHiddenName(bool remove);

  std::string path_;
  std::string hidden_path_;  // where the file lies before Publish() without O_TMPFILE
  int fd_ = -1;
  int slot_ = -1;  // its entry in the list RemoveStagedFilesNow() reads
  bool published_ = false;
};

// Removes every hidden name of a file not yet published. Async-signal-safe (unlink only): for a
// handler that ends the process, so that no partial file outlives it.
void RemoveStagedFilesNow();

}  // namespace tfprof
