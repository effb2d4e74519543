// libFuzzer target: the whole conversion of a file (format detection, TFRecord and event-file
// reading, label parsing, lanes, data flows, memory counters, JSON writing) never crashes on any
// input, and fails only with the documented errors.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/convert/convert.h"

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
  // Both layouts of the engine: timeline.py's (with and without salvage) and tfprof's.
  for (const char *options_text : {"layout=timeline,rows=lanes,show_memory=on",
                                   "layout=timeline,rows=threads,show_memory=on,salvage=on",
                                   "salvage=on"}) {
    const tfprof::ConvertOptions options = tfprof::ParseConvertOptions(options_text).value();
    const tfprof::ConvertResult result = tfprof::ConvertTrace(input, output, options, nullptr);
    const absl::Status &status = result.status;
    // Damage is DataLoss, content in no format InvalidArgument; nothing else is expected here.
    if (!status.ok() && !absl::IsDataLoss(status) && !absl::IsUnavailable(status) &&
        !absl::IsInvalidArgument(status)) {
      __builtin_trap();
    }
  }
  return 0;
}
