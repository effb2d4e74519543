// libFuzzer target: the whole conversion of a file (format detection, TFRecord and event-file
// reading, label parsing, lanes, data flows, memory counters, JSON writing) never crashes on any
// input, fails only with the documented errors, and writes every output format.
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
  FILE *file = std::fopen(input.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  // Both layouts of the engine: timeline.py's (with and without salvage) and tfprof's, the latter
  // into every writer (the Perfetto writer's lanes, the TensorFlow writers' records and tags).
  struct Run {
    const char *options;
    const char *output;
  };
  for (const Run &run : {Run{"layout=timeline,rows=lanes,show_memory=on", "output.json"},
                         Run{"layout=timeline,rows=threads,show_memory=on,salvage=on", "output.json"},
                         Run{"salvage=on", "output.json"}, Run{"salvage=on", "output.pftrace"},
                         Run{"salvage=on", "output.pb"}, Run{"salvage=on", "output.tfrecord"}}) {
    const std::string output = ScratchPath(run.output);
    const tfprof::ConvertOptions options = tfprof::ParseConvertOptions(run.options).value();
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
