// libFuzzer target: deciding whether bytes are a RunMetadata or a StepStats never crashes, and a
// rejection always says what was wrong.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/formats/step_stats_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tensorflow::RunMetadata metadata;
  tfprof::Format format;
  std::string problem;
  uint64_t offset = 0;
  const bool ok = tfprof::ParseStepStatsMessage(
      std::string_view(reinterpret_cast<const char *>(data), size), &metadata, &format, &problem,
      &offset);
  if (!ok && problem.empty()) __builtin_trap();
  if (ok && metadata.step_stats().dev_stats_size() == 0) __builtin_trap();
  return 0;
}
