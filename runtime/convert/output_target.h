// Where a conversion's output goes and in which format, checked before any input is read: the
// format asked for or the name's (the runtime's rules), and never one of the inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/formats/format.h"

namespace tfprof {

struct OutputTarget {
  std::string path;
  Format format = Format::kChromeJson;
};

// `format` when given, else the path's (FormatForPath). InvalidArgument when the path names no
// format; FailedPrecondition when the output is one of `inputs` (the same file, or the same log
// directory): converting a file onto itself would destroy it.
absl::StatusOr<OutputTarget> ResolveOutput(const std::string &path,
                                           const std::optional<Format> &format,
                                           const std::vector<std::string> &inputs);

// True when both paths exist and name one file (or directory): same device and inode.
bool SameFile(const std::string &a, const std::string &b);

}  // namespace tfprof
