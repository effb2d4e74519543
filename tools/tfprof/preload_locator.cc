#include "tools/tfprof/preload_locator.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace tfprof::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char *kPreloadFileName = "libtfprof_preload.so";

// Directories relative to this executable's, where an install or a wheel puts the library.
std::vector<fs::path> RelativeLibraryDirectories() {
  std::vector<fs::path> directories = {".", TFPROF_LIBDIR_FROM_BINDIR, "../lib", "../lib64"};
  if (std::string_view(TFPROF_MULTIARCH).size() > 0) {
    directories.push_back(fs::path("../lib") / TFPROF_MULTIARCH);
  }
  directories.push_back("..");  // the wheel: tfprof/_bin/tfprof, tfprof/libtfprof_preload.so
  return directories;
}

bool IsReadableFile(const fs::path &path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), R_OK) == 0;
}

// `path` made absolute: LD_PRELOAD is read again in every child, whatever its directory.
std::string Absolute(const fs::path &path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  return error ? path.string() : absolute.string();
}

PreloadSearch LookAt(const fs::path &path, std::string because) {
  PreloadSearch search;
  search.where_looked = std::move(because);
  search.searched.push_back(path.string());
  if (IsReadableFile(path)) search.found = Absolute(path);
  return search;
}

}  // namespace

PreloadSearch FindPreloadLibrary(const std::optional<std::string> &explicit_path,
                                 const std::optional<std::string> &environment_path) {
  if (explicit_path) return LookAt(*explicit_path, "at the path --preload gave");
  if (environment_path) return LookAt(*environment_path, "at the path in TFPROF_PRELOAD");

  PreloadSearch search;
  search.where_looked = "next to this tfprof";
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (error) {
    search.where_looked =
        "nowhere: /proc/self/exe cannot be read to find this tfprof (" + error.message() + ")";
    return search;
  }
  for (const fs::path &relative : RelativeLibraryDirectories()) {
    const std::string candidate =
        (executable.parent_path() / relative / kPreloadFileName).lexically_normal().string();
    if (std::find(search.searched.begin(), search.searched.end(), candidate) !=
        search.searched.end()) {
      continue;  // e.g. the install's library directory is ../lib
    }
    search.searched.push_back(candidate);
    if (IsReadableFile(candidate)) {
      search.found = Absolute(candidate);
      return search;
    }
  }
  return search;
}

}  // namespace tfprof::cli
