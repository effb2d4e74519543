// libFuzzer target: the whole conversion of a file (format detection, TFRecord and event-file
// reading, label parsing, lanes, data flows, memory counters, JSON writing) never crashes on any
// input, fails only with the documented errors, and writes every output format.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_scratch.h"
#include "runtime/convert/convert.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string input = tfprof_fuzz::WriteScratchInput(data, size);
  if (input.empty()) return 0;
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
    const std::string output = tfprof_fuzz::ScratchPath(run.output);
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
