#include "runtime/formats/tensorflow/log_directory.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tfprof {

namespace {

// Runs named beyond this many are counted, not listed: a log directory of hyperparameter trials
// may hold hundreds.
constexpr size_t kRunsNamed = 8;

// The message for a directory of several runs: `runs` maps each run's folder (relative to `dir`,
// "." for `dir` itself) to its event files.
std::string SeveralRunsMessage(const std::string &dir,
                               const std::map<std::string, std::vector<std::string>> &runs) {
  std::string names;
  size_t listed = 0;
  for (const auto &[run, files] : runs) {
    if (listed == kRunsNamed) {
      absl::StrAppend(&names, ", and ", runs.size() - listed, " more");
      break;
    }
    absl::StrAppend(&names, listed == 0 ? "" : ", ", run, " (", files.size(),
                    files.size() == 1 ? " event file)" : " event files)");
    ++listed;
  }
  // A sub-folder as the example: "." (event files in `dir` itself) only when no other.
  const auto shown = std::next(runs.begin(), runs.begin()->first == "." ? 1 : 0);
  const std::string example = (std::filesystem::path(dir) / shown->first).string();
  return absl::StrCat(dir, ": holds ", runs.size(),
                      " TensorBoard runs, each a trace of its own: ", names,
                      ". Give one run's folder (such as ", example,
                      "), or put runs on one timeline with 'tfprof merge -o OUT RUN_DIR...'");
}

}  // namespace

long long EventFileSeconds(const std::string &file_name) {
  constexpr std::string_view kMarker = "tfevents.";
  const size_t at = file_name.find(kMarker);
  if (at == std::string::npos) return -1;
  long long seconds = 0;
  size_t index = at + kMarker.size();
  const size_t first = index;
  while (index < file_name.size() && index - first < 18 && file_name[index] >= '0' &&
         file_name[index] <= '9') {
    seconds = seconds * 10 + (file_name[index] - '0');
    ++index;
  }
  return index == first ? -1 : seconds;
}

absl::StatusOr<std::vector<std::string>> EventFilesOfOneRun(const std::string &dir) {
  std::error_code error;
  std::map<std::string, std::vector<std::string>> runs;  // by folder relative to `dir`
  std::filesystem::recursive_directory_iterator walk(
      dir, std::filesystem::directory_options::follow_directory_symlink, error);
  for (; !error && walk != std::filesystem::recursive_directory_iterator(); walk.increment(error)) {
    if (walk->path().filename().string().find("tfevents") == std::string::npos) continue;
    std::error_code kind_error;
    if (!walk->is_regular_file(kind_error)) continue;
    const std::filesystem::path folder = walk->path().parent_path();
    const std::filesystem::path relative = folder.lexically_relative(dir);
    runs[relative.empty() ? std::string(".") : relative.string()].push_back(walk->path().string());
  }
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot list the directory '", dir, "': ", std::strerror(error.value())));
  }
  if (runs.size() > 1) return absl::InvalidArgumentError(SeveralRunsMessage(dir, runs));
  if (runs.empty()) return std::vector<std::string>();
  std::vector<std::string> files = std::move(runs.begin()->second);
  // Write order: a restarted job's file carries a later time in its name. Names alone would do
  // for ten-digit times; the number is compared so that any width sorts.
  std::sort(files.begin(), files.end(), [](const std::string &a, const std::string &b) {
    const long long a_seconds = EventFileSeconds(std::filesystem::path(a).filename().string());
    const long long b_seconds = EventFileSeconds(std::filesystem::path(b).filename().string());
    if (a_seconds != b_seconds) return a_seconds < b_seconds;
    return a < b;
  });
  return files;
}

}  // namespace tfprof
