#include "runtime/session/options.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/formats/format.h"
#include "runtime/common/option_string.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/common/text_excerpt.h"

namespace tfprof {

namespace {

uint32_t RoundUpToPowerOfTwo(uint32_t value) {
  uint32_t power = 1;
  while (power < value) power <<= 1;
  return power;
}

absl::Status ParseUint(const RawOption &option, uint32_t min, uint32_t max, uint32_t *out) {
  uint32_t value = 0;
  if (!absl::SimpleAtoi(option.value, &value) || value < min || value > max) {
    return OptionError(option, absl::StrCat("'", TextExcerpt(option.value), "' is not an integer in [", min,
                                            ", ", max, "]"));
  }
  *out = value;
  return absl::OkStatus();
}

// The GPU options; returns false when `option` is not one of them.
bool ApplyGpuOption(const RawOption &option, GpuOptions &gpu, absl::Status *status) {
  if (option.key == "cuda") {
    if (option.value == "auto") {
      gpu.mode = CudaMode::kAuto;
    } else if (option.value == "on") {
      gpu.mode = CudaMode::kOn;
    } else if (option.value == "off") {
      gpu.mode = CudaMode::kOff;
    } else {
      *status = OptionError(option, absl::StrCat("'", TextExcerpt(option.value), "' is not one of auto, on, off"));
    }
  } else if (option.key == "cupti_path") {
    if (option.value.empty()) *status = OptionError(option, "empty path");
    gpu.cupti_path = option.value;
  } else if (option.key == "cupti_search") {
    // Directories separated by ':' (the Python binding passes its site-packages).
    for (std::string_view rest = option.value; !rest.empty();) {
      const size_t colon = rest.find(':');
      if (colon != 0) gpu.search_dirs.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  } else if (option.key == "cupti_buffer_kb") {
    *status = ParseUint(option, 64, 256 * 1024, &gpu.buffer_kb);
  } else if (option.key == "cupti_buffers") {
    *status = ParseUint(option, 2, 4096, &gpu.buffers);
  } else if (option.key == "cuda_sync") {
    *status = ParseOnOff(option, &gpu.sync);
  } else if (option.key == "cuda_queries") {
    *status = ParseOnOff(option, &gpu.queries);
  } else if (option.key == "gpu_wait_ms") {
    *status = ParseUint(option, 0, 600000, &gpu.wait_ms);
  } else {
    return false;
  }
  return true;
}

absl::Status ParseKeepWindow(const RawOption &option, KeepWindow *out) {
  std::string_view value = option.value;
  if (value == "all") {
    *out = KeepWindow{};
    return absl::OkStatus();
  }
  constexpr std::string_view kLast = "last:";
  const bool seconds = !value.empty() && value.back() == 's';
  uint64_t count = 0;
  if (value.substr(0, kLast.size()) == kLast) {
    std::string_view number = value.substr(kLast.size());
    if (seconds) number.remove_suffix(1);
    if (absl::SimpleAtoi(ToAbsl(number), &count) && count >= 1 && count <= 1000000000) {
      out->mode = seconds ? KeepWindow::Mode::kLastSeconds : KeepWindow::Mode::kLastSteps;
      out->count = count;
      return absl::OkStatus();
    }
  }
  return OptionError(option, absl::StrCat("'", TextExcerpt(option.value),
                                          "' is not one of all, last:N (steps), last:Ns (seconds) "
                                          "with N in [1, 1000000000]"));
}

absl::Status ApplyOption(const RawOption &option, Options &options) {
  if (absl::Status status; ApplyGpuOption(option, options.gpu, &status)) return status;
  if (option.key == "buffer_events") {
    uint64_t events = 0;
    if (!absl::SimpleAtoi(option.value, &events) || events < Options::kMinBufferEvents ||
        events > Options::kMaxBufferEvents) {
      return OptionError(option, absl::StrCat("'", TextExcerpt(option.value), "' is not an integer in [",
                                              Options::kMinBufferEvents, ", ",
                                              Options::kMaxBufferEvents, "]"));
    }
    options.buffer_events = RoundUpToPowerOfTwo(static_cast<uint32_t>(events));
  } else if (option.key == "output") {
    if (option.value.empty()) return OptionError(option, "empty path");
    options.output = option.value;
  } else if (option.key == "format") {
    Format format;
    if (absl::Status status = FormatForName(option.value, &format); !status.ok()) {
      return OptionError(option, ToStd(status.message()));
    }
    options.format = option.value;
  } else if (option.key == "flush_interval_ms") {
    return ParseUint(option, 0, 60000, &options.flush_interval_ms);
  } else if (option.key == "full_ring_wait_ms") {
    return ParseUint(option, 0, 10000, &options.full_ring_wait_ms);
  } else if (option.key == "clock") {
    if (!ResolveClockSource(option.value, &options.clock)) {
      return OptionError(option, absl::StrCat("'", TextExcerpt(option.value),
                                              "' is not one of auto, tsc, monotonic"));
    }
  } else if (option.key == "warnings") {
    return ParseOnOff(option, &options.warnings);
  } else if (option.key == "max_memory_mb") {
    return ParseUint(option, 0, 1u << 20, &options.max_memory_mb);
  } else if (option.key == "spill_dir") {
    if (option.value.empty()) return OptionError(option, "empty path");
    options.spill_dir = option.value;
  } else if (option.key == "keep") {
    return ParseKeepWindow(option, &options.keep);
  } else if (option.key == "tensorboard_profile") {
    return ParseOnOff(option, &options.tensorboard_profile);
  } else if (option.key == "dump_on_slow_step") {
    double factor = 0;
    if (!absl::SimpleAtod(option.value, &factor) || !(factor == 0 || (factor > 1 && factor <= 1e6))) {
      return OptionError(option, absl::StrCat("'", TextExcerpt(option.value),
                                              "' is not 0 (off) or a factor in (1, 1000000]"));
    }
    options.dump_on_slow_step = factor;
  } else {
    return OptionError(option,
                       "unknown key (known: buffer_events, output, format, flush_interval_ms, "
                       "full_ring_wait_ms, clock, warnings, max_memory_mb, spill_dir, keep, dump_on_slow_step, "
                       "tensorboard_profile, cuda, cupti_path, cupti_search, cupti_buffer_kb, cupti_buffers, "
                       "cuda_sync, cuda_queries, gpu_wait_ms)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> ParseOptions(const char *text) {
  Options options;
  ResolveClockSource("auto", &options.clock);
  if (text == nullptr) return options;
  absl::StatusOr<std::vector<RawOption>> raw = SplitOptionString(text);
  if (!raw.ok()) return raw.status();
  for (const RawOption &option : *raw) {
    if (absl::Status status = ApplyOption(option, options); !status.ok()) return status;
  }
  if (options.full_ring_wait_ms > 0 && options.flush_interval_ms == 0) {
    return absl::InvalidArgumentError(
        "option 'full_ring_wait_ms' needs the collector thread (flush_interval_ms > 0) to empty "
        "the rings it waits for");
  }
  if (options.dump_on_slow_step > 0 && options.output.empty()) {
    return absl::InvalidArgumentError(
        "option 'dump_on_slow_step' needs option 'output' (where the dumps are written)");
  }
  return options;
}

}  // namespace tfprof
