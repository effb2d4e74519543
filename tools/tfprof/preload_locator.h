// Finding libtfprof_preload.so for `tfprof run`.

#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tfprof::cli {

struct PreloadSearch {
  std::string found;                  // the absolute path of the library; empty when not found
  std::vector<std::string> searched;  // every place looked at, in order (for the error message)
  std::string where_looked;       // where it looked, in words: "next to this tfprof", ...
};

// Looks for the preload library: `explicit_path` (--preload) when given, else `environment_path`
// ($TFPROF_PRELOAD) when given, else next to this executable: its directory, the installed
// library directory relative to it, ../lib, ../lib64, ../lib/<multiarch>, and the Python
// wheel's layout (tfprof/_bin/tfprof next to tfprof/libtfprof_preload.so).
PreloadSearch FindPreloadLibrary(const std::optional<std::string> &explicit_path,
                                 const std::optional<std::string> &environment_path);

}  // namespace tfprof::cli
