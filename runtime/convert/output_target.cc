#include "runtime/convert/output_target.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace tfprof {

namespace {

bool SameFile(const std::string &a, const std::string &b) {
  struct stat first;
  struct stat second;
  return stat(a.c_str(), &first) == 0 && stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

}  // namespace

absl::StatusOr<OutputTarget> ResolveOutput(const std::string &path,
                                           const std::optional<std::string> &format_name,
                                           const std::vector<std::string> &inputs) {
  OutputTarget target;
  target.path = path;
  const absl::Status status = format_name ? FormatForName(*format_name, &target.format)
                                          : FormatForPath(path, &target.format);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        format_name ? absl::StrCat("--format ", status.message()) : std::string(status.message()));
  }
  for (const std::string &input : inputs) {
    if (SameFile(path, input)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the output '", path, "' is the input '", input, "': refusing to overwrite it"));
    }
  }
  return target;
}

}  // namespace tfprof
