// libFuzzer target: deciding on the wire whether bytes are a RunMetadata or a StepStats never
// crashes, and a rejection always says what was wrong; bytes the check accepts are walked device
// by device and node by node without a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/formats/tensorflow/step_stats_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char *>(data), size);
  tfprof::Format format;
  std::string problem;
  uint64_t offset = 0;
  if (!tfprof::CheckStepStatsMessage(bytes, &format, &problem, &offset)) {
    if (problem.empty()) __builtin_trap();
    return 0;
  }
  size_t devices = 0;
  const absl::Status walked = tfprof::ForEachDeviceOf(
      bytes, format, [&](const tfprof::DeviceStepStatsView &device) {
        ++devices;
        for (std::string_view node : device.nodes) {
          tensorflow::NodeExecStats stats;
          static_cast<void>(stats.ParseFromArray(node.data(), static_cast<int>(node.size())));
        }
        return absl::OkStatus();
      });
  if (!walked.ok() || devices == 0) __builtin_trap();  // the check promised at least one device
  return 0;
}
