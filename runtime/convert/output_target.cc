#include "runtime/convert/output_target.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace tfprof {

bool SameFile(const std::string &a, const std::string &b) {
  struct stat first;
  struct stat second;
  return stat(a.c_str(), &first) == 0 && stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

absl::StatusOr<OutputTarget> ResolveOutput(const std::string &path,
                                           const std::optional<Format> &format,
                                           const std::vector<std::string> &inputs) {
  OutputTarget target;
  target.path = path;
  if (format) {
    target.format = *format;
  } else if (absl::Status status = FormatForPath(path, &target.format); !status.ok()) {
    return status;
  }
  for (const std::string &input : inputs) {
    if (SameFile(path, input)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the output '", path, "' is the input '", input, "': refusing to overwrite it"));
    }
  }
  return target;
}

}  // namespace tfprof
