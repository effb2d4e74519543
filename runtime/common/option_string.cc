#include "runtime/common/option_string.h"

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

bool ParseOnOffWord(std::string_view text, bool *value) {
  std::string lowered(text);
  for (char &c : lowered) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (lowered == "on" || lowered == "true" || lowered == "yes" || lowered == "1") {
    *value = true;
  } else if (lowered == "off" || lowered == "false" || lowered == "no" || lowered == "0") {
    *value = false;
  } else {
    return false;
  }
  return true;
}

absl::Status ParseOnOff(const RawOption &option, bool *value) {
  if (ParseOnOffWord(option.value, value)) return absl::OkStatus();
  return OptionError(option, absl::StrCat("'", option.value,
                                          "' is not one of on, off (also true/false, yes/no, 1/0)"));
}

absl::Status OptionError(const RawOption &option, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("option '", option.key, "' at offset ", option.offset, ": ", ToAbsl(why)));
}

absl::StatusOr<std::vector<RawOption>> SplitOptionString(std::string_view text) {
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
    for (const RawOption &earlier : options) {
      if (earlier.key == option.key) return OptionError(option, "given twice");
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

}  // namespace tfprof
