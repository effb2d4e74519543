// Where a conversion's output goes and in which format, checked before any input is read: the
// format from --format or the name (the runtime's rules), and never one of the inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/export/exporter.h"

namespace tfprof {

struct OutputTarget {
  std::string path;
  Format format = Format::kChromeJson;
};

// The format named by `format_name` (json, json.gz, pb, tfrecord, tensorboard) when given, else
// by the path. InvalidArgument (a usage error) when neither names a format, or when the output
// is one of `inputs` (the same file, or the same log directory): converting a file onto itself
// would destroy it.
absl::StatusOr<OutputTarget> ResolveOutput(const std::string &path,
                                           const std::optional<std::string> &format_name,
                                           const std::vector<std::string> &inputs);

}  // namespace tfprof
