#include "runtime/formats/format.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/common/signal_safe_paths.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

constexpr char kSupported[] =
    "supported: .json, .json.gz, .pb, .xplane.pb, .tfrecord, .pftrace, .perfetto-trace, or a "
    "directory for a TensorBoard event file";

bool IsDirectory(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool Exists(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

}  // namespace

std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

absl::Status CheckWritable(std::string_view path, Format format) {
  if (format == Format::kStepStats) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", ToAbsl(path), "': a bare StepStats is read, never written (write .pb, a RunMetadata)"));
  }
  return absl::OkStatus();
}

absl::Status FormatForPath(std::string_view path, Format *format) {
  const absl::string_view text = ToAbsl(path);
  if (absl::EndsWith(text, "/") || IsDirectory(std::string(path))) {
    *format = Format::kTensorBoard;
  } else if (absl::EndsWith(text, ".json.gz")) {
    *format = Format::kChromeJsonGzip;
  } else if (absl::EndsWith(text, ".json")) {
    *format = Format::kChromeJson;
  } else if (absl::EndsWith(text, ".xplane.pb")) {
    *format = Format::kXPlane;
  } else if (absl::EndsWith(text, ".pb")) {
    *format = Format::kRunMetadata;
  } else if (absl::EndsWith(text, ".tfrecord")) {
    *format = Format::kTfRecord;
  } else if (absl::EndsWith(text, ".pftrace") || absl::EndsWith(text, ".perfetto-trace")) {
    *format = Format::kPerfetto;
  } else {
    const size_t slash = path.rfind('/');
    const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const size_t dot = file.find('.');
    const std::string_view extension = dot == std::string_view::npos ? "" : file.substr(dot);
    const std::string what =
        extension.empty() ? "no extension" : absl::StrCat("extension '", ToAbsl(extension), "'");
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': ", what, " names no supported format (", kSupported, ")"));
  }
  return absl::OkStatus();
}

absl::Status FormatForName(std::string_view name, Format *format) {
  if (name == "json") {
    *format = Format::kChromeJson;
  } else if (name == "json.gz") {
    *format = Format::kChromeJsonGzip;
  } else if (name == "pb") {
    *format = Format::kRunMetadata;
  } else if (name == "tfrecord") {
    *format = Format::kTfRecord;
  } else if (name == "tensorboard") {
    *format = Format::kTensorBoard;
  } else if (name == "perfetto" || name == "pftrace") {
    *format = Format::kPerfetto;
  } else if (name == "xplane") {
    *format = Format::kXPlane;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("'", ToAbsl(name),
                     "' is not one of json, json.gz, pb, tfrecord, tensorboard, perfetto, xplane"));
  }
  return absl::OkStatus();
}

namespace {

// Log directories created for writes still under way, for RemoveCreatedLogDirectoriesNow():
// a few writes at once, each a log directory and its profile's three folders.
constexpr int kMostCreatedDirectories = 16;
SignalSafePaths<kMostCreatedDirectories> g_created_log_directories;

}  // namespace

CreatedLogDirectory::~CreatedLogDirectory() {
  for (auto created = created_.rbegin(); created != created_.rend(); ++created) {
    rmdir(created->path.c_str());
    g_created_log_directories.Remove(created->slot);
  }
}

void CreatedLogDirectory::Keep() {
  for (const Created &created : created_) g_created_log_directories.Remove(created.slot);
  created_.clear();
}

void CreatedLogDirectory::Remember(const std::string &path) {
  created_.push_back({path, g_created_log_directories.Add(path)});
}

void CreatedLogDirectory::Forget(const std::string &path) {
  if (created_.empty() || created_.back().path != path) return;
  g_created_log_directories.Remove(created_.back().slot);
  created_.pop_back();
}

void RemoveCreatedLogDirectoriesNow() {
  // A log directory and the profile's folders inside it (plugins/profile/<run>): a folder goes
  // once the ones inside it have, so pass again while a pass removes any.
  bool removed = true;
  for (int pass = 0; removed && pass < kMostCreatedDirectories; ++pass) {
    removed = false;
    g_created_log_directories.ForEach([&removed](const char *path) {
      if (rmdir(path) == 0) removed = true;
    });
  }
}

// Makes `path` (its parent must exist) unless it is a directory already; `created` remembers it.
absl::Status MakeDirectory(const std::string &path, CreatedLogDirectory *created,
                           std::string_view what) {
  if (IsDirectory(path)) return absl::OkStatus();
  // Listed before it is made: a signal between the two would otherwise leave a folder the
  // handler does not know (a path not made yet only fails its rmdir).
  if (created != nullptr) created->Remember(path);
  if (mkdir(path.c_str(), 0777) == 0) return absl::OkStatus();
  const int error = errno;
  if (created != nullptr) created->Forget(path);
  if (error == EEXIST && IsDirectory(path)) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("cannot create ", ToAbsl(what), " '", path, "': ", std::strerror(error)));
}

absl::StatusOr<std::string> NewProfilePath(const std::string &directory, int64_t wall_ns,
                                           const std::string &host,
                                           CreatedLogDirectory *created) {
  std::string dir = directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::string path = dir;
  for (const char *part : {"plugins", "profile"}) {
    absl::StrAppend(&path, "/", part);
    if (absl::Status made = MakeDirectory(path, created, "the folder"); !made.ok()) return made;
  }
  const time_t seconds = static_cast<time_t>(wall_ns / 1000000000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char run[32];
  std::strftime(run, sizeof run, "%Y_%m_%d_%H_%M_%S", &utc);
  std::string run_dir = absl::StrCat(path, "/", run);
  for (int suffix = 2; Exists(run_dir); ++suffix) {
    run_dir = absl::StrCat(path, "/", run, "_", suffix);
  }
  if (absl::Status made = MakeDirectory(run_dir, created, "the folder"); !made.ok()) return made;
  // A host name is one folder entry: a slash in it would name a folder.
  std::string file = host.empty() ? LocalHostName() : host;
  for (char &c : file) {
    if (c == '/') c = '_';
  }
  return absl::StrCat(run_dir, "/", file, ".xplane.pb");
}

absl::StatusOr<std::string> NewEventFilePath(const std::string &directory, int64_t wall_ns,
                                             CreatedLogDirectory *created) {
  std::string dir = directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // A symbolic link planted by another user (in /tmp, say) would take our files wherever it
  // points: followed only when it is ours or root's, as the kernel's protected_symlinks rule has
  // it for sticky directories.
  struct stat link {};
  if (lstat(dir.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid != geteuid() &&
      link.st_uid != 0) {
    return absl::UnavailableError(absl::StrCat(
        "refusing to write into TensorBoard log directory '", dir,
        "': it is a symbolic link owned by another user (uid ", link.st_uid, ")"));
  }
  if (absl::Status made = MakeDirectory(dir, created, "TensorBoard log directory"); !made.ok()) {
    return made;
  }
  const std::string base = absl::StrFormat("%s/events.out.tfevents.%010d.%s", dir,
                                           wall_ns / 1000000000, LocalHostName());
  std::string path = base;
  for (int suffix = 2; Exists(path); ++suffix) path = absl::StrCat(base, ".", suffix);
  return path;
}

}  // namespace tfprof
