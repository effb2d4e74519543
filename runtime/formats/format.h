// The trace file formats tfprof reads and writes, in one enum shared by the runtime's export, the
// readers, the convert engine and the `tfprof` command, and the rules that map a path or an
// option value to one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

enum class Format : uint8_t {
  kChromeJson,      // Chrome trace JSON (.json)
  kChromeJsonGzip,  // the same, gzip-compressed (.json.gz)
  kRunMetadata,     // one TensorFlow RunMetadata (.pb)
  kStepStats,       // one bare TensorFlow StepStats (read only: tfprof writes RunMetadata)
  kTfRecord,        // a TFRecord file of one RunMetadata per step (.tfrecord)
  kTensorBoard,     // a TensorBoard event file in a log directory
  kPerfetto,        // Perfetto's protobuf trace (.pftrace, .perfetto-trace)
  kXPlane,          // TensorFlow's and JAX's profile data, an XSpace (.xplane.pb; read only)
};

// "Chrome trace JSON", "gzip-compressed Chrome trace JSON", "TensorFlow RunMetadata",
// "TensorFlow StepStats", "TFRecord of RunMetadata", "TensorBoard event file", "Perfetto trace",
// "XPlane profile (XSpace)".
const char *FormatName(Format format);

bool IsChromeJson(Format format);  // kChromeJson or kChromeJsonGzip
bool IsTensorFlow(Format format);  // RunMetadata, StepStats, TFRecord or TensorBoard

// OK for a format tfprof writes; InvalidArgument naming `path` for one it only reads (a bare
// StepStats, an XPlane profile), saying what to write instead.
absl::Status CheckWritable(std::string_view path, Format format);

// The format for `path`: a directory (existing, or a path ending in '/') is a TensorBoard log
// directory, else the extension decides (".xplane.pb" before ".pb"). InvalidArgument naming the extension and listing the
// supported ones otherwise.
absl::Status FormatForPath(std::string_view path, Format *format);

// The format named by an option value (json, json.gz, pb, tfrecord, tensorboard, perfetto).
absl::Status FormatForName(std::string_view name, Format *format);

// Removes, when destroyed, the TensorBoard log directory NewEventFilePath() created for a write
// that did not succeed (Keep() says it did): a failed export leaves nothing it created. Only an
// empty directory goes (rmdir): one that something else filled meanwhile stays.
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
  void Remember(const std::string &path);
  std::string path_;  // empty: nothing to remove
  int slot_ = -1;     // its entry in the list RemoveCreatedLogDirectoriesNow() reads
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

}  // namespace tfprof
