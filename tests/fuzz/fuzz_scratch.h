// Scratch files for the libFuzzer targets whose code under test reads a path, not bytes: one
// private directory per process, and each input written to a file in it.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tfprof_fuzz {

// `name` in this process's scratch directory (made on first use; /tmp if that fails).
inline std::string ScratchPath(const char *name) {
  static const std::string directory = [] {
    char pattern[] = "/tmp/tfprof-fuzz-XXXXXX";
    const char *made = mkdtemp(pattern);
    return std::string(made != nullptr ? made : "/tmp");
  }();
  return directory + "/" + name;
}

// Writes the fuzzer's input to the scratch file "input": its path, or "" when it cannot be
// written (the run then tests nothing).
inline std::string WriteScratchInput(const uint8_t *data, size_t size) {
  const std::string input = ScratchPath("input");
  FILE *file = std::fopen(input.c_str(), "wb");
  if (file == nullptr) return "";
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  return input;
}

}  // namespace tfprof_fuzz
