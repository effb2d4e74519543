// libFuzzer target: the whole conversion of a file (format detection, TFRecord and event-file
// reading, label parsing, lanes, data flows, memory counters, JSON writing) never crashes on any
// input, and fails only with the documented errors.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/export/timeline_converter.h"

namespace {

std::string ScratchPath(const char *name) {
  static const std::string directory = [] {
    char pattern[] = "/tmp/tfprof-fuzz-XXXXXX";
    const char *made = mkdtemp(pattern);
    return std::string(made != nullptr ? made : "/tmp");
  }();
  return directory + "/" + name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string input = ScratchPath("input");
  const std::string output = ScratchPath("output.json");
  FILE *file = std::fopen(input.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  for (int mode = 0; mode < 2; ++mode) {
    tfprof::ConvertOptions options;
    options.show_memory = true;
    options.salvage = mode == 1;
    options.rows = mode == 0 ? tfprof::ConvertOptions::Rows::kLanes
                             : tfprof::ConvertOptions::Rows::kThreads;
    const absl::Status status = tfprof::ConvertStepStatsToChromeTrace({input}, output, options);
    if (!status.ok() && !absl::IsDataLoss(status) && !absl::IsUnavailable(status)) {
      __builtin_trap();  // damaged input is DataLoss; nothing else is expected here
    }
  }
  return 0;
}
