#include "runtime/options.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/exporter.h"
#include "runtime/option_string.h"
#include "runtime/string_view_bridge.h"

namespace tfprof {

namespace {

uint32_t RoundUpToPowerOfTwo(uint32_t value) {
  uint32_t power = 1;
  while (power < value) power <<= 1;
  return power;
}

absl::Status ApplyOption(const RawOption &option, Options &options) {
  if (option.key == "buffer_events") {
    uint64_t events = 0;
    if (!absl::SimpleAtoi(option.value, &events) || events < Options::kMinBufferEvents ||
        events > Options::kMaxBufferEvents) {
      return OptionError(option, absl::StrCat("'", option.value, "' is not an integer in [",
                                              Options::kMinBufferEvents, ", ",
                                              Options::kMaxBufferEvents, "]"));
    }
    options.buffer_events = RoundUpToPowerOfTwo(static_cast<uint32_t>(events));
  } else if (option.key == "output") {
    if (option.value.empty()) return OptionError(option, "empty path");
    options.output = option.value;
  } else if (option.key == "format") {
    ExportFormat format;
    if (absl::Status status = FormatForName(option.value, &format); !status.ok()) {
      return OptionError(option, ToStd(status.message()));
    }
    options.format = option.value;
  } else if (option.key == "flush_interval_ms") {
    uint32_t interval = 0;
    if (!absl::SimpleAtoi(option.value, &interval) || interval > 60000) {
      return OptionError(option, absl::StrCat("'", option.value,
                                              "' is not an integer in [0, 60000]"));
    }
    options.flush_interval_ms = interval;
  } else if (option.key == "clock") {
    if (!ResolveClockSource(option.value, &options.clock)) {
      return OptionError(option, absl::StrCat("'", option.value,
                                              "' is not one of auto, tsc, monotonic"));
    }
  } else {
    return OptionError(option, "unknown key (known: buffer_events, output, format, flush_interval_ms, clock)");
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
  return options;
}

}  // namespace tfprof
