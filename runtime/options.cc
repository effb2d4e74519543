#include "runtime/options.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/exporter.h"
#include "runtime/string_view_bridge.h"

namespace tfprof {

namespace {

struct RawOption {
  std::string key;
  std::string value;
  size_t offset;  // where the key starts in the option string
};

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

absl::Status OptionError(const RawOption &option, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("option '", option.key, "' at offset ", option.offset, ": ", ToAbsl(why)));
}

// Splits on unescaped commas and unescapes `\,` and `\\`.
absl::StatusOr<std::vector<RawOption>> SplitOptions(std::string_view text) {
  std::vector<RawOption> options;
  std::string item;
  size_t item_start = 0;
  auto finish_item = [&](size_t end) -> absl::Status {
    const std::string_view untrimmed = item;
    std::string_view whole = TrimSpaces(untrimmed);
    // Report where the key itself starts, after any leading spaces (escapes never precede it).
    item_start += static_cast<size_t>(whole.data() - untrimmed.data());
    if (whole.empty()) {
      item.clear();
      item_start = end + 1;
      return absl::OkStatus();  // tolerate "a=1,,b=2" and a trailing comma
    }
    const size_t equals = whole.find('=');
    if (equals == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("option '", ToAbsl(whole), "' at offset ",
                                                     item_start, ": expected key=value"));
    }
    RawOption option{std::string(TrimSpaces(whole.substr(0, equals))),
                     std::string(TrimSpaces(whole.substr(equals + 1))), item_start};
    if (option.key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("option at offset ", item_start, ": empty key before '='"));
    }
    options.push_back(std::move(option));
    item.clear();
    item_start = end + 1;
    return absl::OkStatus();
  };
  for (size_t index = 0; index < text.size(); ++index) {
    const char c = text[index];
    if (c == '\\' && index + 1 < text.size() && (text[index + 1] == ',' || text[index + 1] == '\\')) {
      item.push_back(text[++index]);
    } else if (c == ',') {
      if (absl::Status status = finish_item(index); !status.ok()) return status;
    } else {
      item.push_back(c);
    }
  }
  if (absl::Status status = finish_item(text.size()); !status.ok()) return status;
  return options;
}

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
  absl::StatusOr<std::vector<RawOption>> raw = SplitOptions(text);
  if (!raw.ok()) return raw.status();
  absl::flat_hash_set<std::string> seen;
  for (const RawOption &option : *raw) {
    if (!seen.insert(option.key).second) return OptionError(option, "given twice");
    if (absl::Status status = ApplyOption(option, options); !status.ok()) return status;
  }
  return options;
}

}  // namespace tfprof
