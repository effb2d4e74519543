// The rules that map a path or an option value to a trace file format (runtime/model/format.h),
// and where TensorBoard event files go.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/model/format.h"

namespace tfprof {

// OK for a format tfprof writes; InvalidArgument naming `path` for one it only reads (a bare
// StepStats), saying what to write instead.
absl::Status CheckWritable(std::string_view path, Format format);

// The format for `path`: a directory (existing, or a path ending in '/') is a TensorBoard log
// directory, else the extension decides (".xplane.pb" before ".pb"). InvalidArgument naming the extension and listing the
// supported ones otherwise.
absl::Status FormatForPath(std::string_view path, Format *format);

// The format named by an option value (json, json.gz, pb, tfrecord, tensorboard, perfetto,
// xplane).
absl::Status FormatForName(std::string_view name, Format *format);

// Removes, when destroyed, the TensorBoard log directories NewEventFilePath() and
// NewProfilePath() created for a write that did not succeed (Keep() says it did): a failed export
// leaves nothing it created. Only an empty directory goes (rmdir), the deepest first: one that
// something else filled meanwhile stays.
class CreatedLogDirectory {
 public:
  CreatedLogDirectory() = default;
  ~CreatedLogDirectory();
  CreatedLogDirectory(const CreatedLogDirectory &) = delete;
  CreatedLogDirectory &operator=(const CreatedLogDirectory &) = delete;

  void Keep();

 private:
  friend absl::StatusOr<std::string> NewEventFilePath(const std::string &, int64_t,
                                                      CreatedLogDirectory *);
  friend absl::Status MakeDirectory(const std::string &, CreatedLogDirectory *, std::string_view);
  void Remember(const std::string &path);
  void Forget(const std::string &path);  // the last remembered, when it was not made after all
  struct Created {
    std::string path;
    int slot = -1;  // its entry in the list RemoveCreatedLogDirectoriesNow() reads
  };
  std::vector<Created> created_;  // in the order made: parents first
};

// Removes the log directories that writes under way created, where they are still empty.
// Async-signal-safe (rmdir only): for a handler that ends the process, after
// RemoveStagedFilesNow(), so that an interrupted conversion leaves nothing it created.
void RemoveCreatedLogDirectoriesNow();

// The event file to write in TensorBoard log directory `directory` (created when missing, its
// parent must exist): events.out.tfevents.<10-digit unix seconds>.<host>, with a numeric suffix
// when that name is taken. When it creates the directory, `created` (if given) remembers it.
absl::StatusOr<std::string> NewEventFilePath(const std::string &directory, int64_t wall_ns,
                                             CreatedLogDirectory *created = nullptr);

// The XPlane profile to write beside the event files of TensorBoard log directory `directory`,
// where TensorBoard's Profile tab (XProf) finds it:
// `directory`/plugins/profile/<run>/<host>.xplane.pb, the run named for `wall_ns` in UTC
// (YYYY_MM_DD_HH_MM_SS, as TensorFlow names them; "_2", "_3", ... when taken), the folders
// created as needed and remembered in `created`. Unavailable naming the folder when one cannot
// be made.
absl::StatusOr<std::string> NewProfilePath(const std::string &directory, int64_t wall_ns,
                                           const std::string &host,
                                           CreatedLogDirectory *created = nullptr);

// This machine's host name ("localhost" when it has none).
std::string LocalHostName();

}  // namespace tfprof
