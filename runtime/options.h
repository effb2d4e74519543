// Parsing of prof_start()'s option string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/clock.h"
#include "runtime/gpu_tracer.h"

namespace tfprof {

struct Options {
  static constexpr uint32_t kDefaultBufferEvents = 65536;
  static constexpr uint32_t kMinBufferEvents = 16;
  static constexpr uint32_t kMaxBufferEvents = 1u << 26;

  uint32_t buffer_events = kDefaultBufferEvents;  // always a power of two
  std::string output;                              // empty: no export at stop
  std::string format;  // overrides the format `output`'s extension names; empty: by extension
  uint32_t flush_interval_ms = 10;
  ClockSource clock = ClockSource::kMonotonic;
  bool warnings = true;  // false: no stderr warnings (the preload's TFPROF_LOG_LEVEL=error/off)
  GpuOptions gpu;  // cuda, cupti_path, cupti_search, cupti_buffer_kb, cupti_buffers, cuda_sync, gpu_wait_ms
};

// Parses "key=value,key=value". NULL and "" give the defaults. A value may contain `\,` and `\\`.
// Errors name the key, its byte offset in `text`, and what was wrong.
absl::StatusOr<Options> ParseOptions(const char *text);

}  // namespace tfprof
