// Parsing of prof_start()'s option string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/collector/clock.h"
#include "runtime/gpu/gpu_tracer.h"

namespace tfprof {

// Which collected records a session keeps (option keep=).
struct KeepWindow {
  enum class Mode : uint8_t { kAll, kLastSteps, kLastSeconds };
  Mode mode = Mode::kAll;
  uint64_t count = 0;  // steps, or seconds
};

struct Options {
  static constexpr uint32_t kDefaultBufferEvents = 65536;
  static constexpr uint32_t kMinBufferEvents = 16;
  static constexpr uint32_t kMaxBufferEvents = 1u << 26;

  uint32_t buffer_events = kDefaultBufferEvents;  // always a power of two
  std::string output;                              // empty: no export at stop
  std::string format;  // overrides the format `output`'s extension names; empty: by extension
  uint32_t flush_interval_ms = 10;
  // Back-pressure: a full ring waits up to this long for the collector before it drops (0: drops).
  uint32_t full_ring_wait_ms = 0;
  ClockSource clock = ClockSource::kMonotonic;
  bool warnings = true;  // false: no stderr warnings (the preload's TFPROF_LOG_LEVEL=error/off)
  // Memory: collected records beyond this many MiB go to a spill file (0: no limit, all in memory).
  static constexpr uint32_t kDefaultMaxMemoryMb = 48;
  uint32_t max_memory_mb = kDefaultMaxMemoryMb;
  std::string spill_dir;  // where the spill file goes; empty: $TMPDIR, else /tmp
  // keep=all | last:N (steps) | last:Ns (seconds): the flight recorder's window.
  KeepWindow keep;
  // Write the kept window when a step takes more than this many times the median step (0: off).
  double dump_on_slow_step = 0;
  // A TensorBoard log directory output also gets the XPlane profile of TensorBoard's Profile tab
  // (plugins/profile/<run>/<host>.xplane.pb).
  bool tensorboard_profile = true;
  // cuda, cupti_path, cupti_search, cupti_buffer_kb, cupti_buffers, cuda_sync, cuda_queries,
  // gpu_wait_ms
  GpuOptions gpu;
};

// Parses "key=value,key=value". NULL and "" give the defaults. A value may contain `\,` and `\\`.
// Errors name the key, its byte offset in `text`, and what was wrong.
absl::StatusOr<Options> ParseOptions(const char *text);

}  // namespace tfprof
