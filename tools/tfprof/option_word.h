// How the file commands (summary, report, convert, merge) read their words: options anywhere, as
// "--name=value", "-oVALUE", or a bare "--name"/"-o" whose value, for options that take one, is
// the next word; "--" ends the options; "-" and every word not starting with '-' is an input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace tfprof::cli {

struct OptionWord {
  std::string_view name;             // "--format", "-o"
  std::optional<std::string> value;  // the part after '=' or after "-o"; unset for a bare name
};

// `word` starts with '-' and is at least two characters long.
inline OptionWord SplitOptionWord(std::string_view word) {
  OptionWord option{word, std::nullopt};
  if (word.starts_with("--")) {
    if (const size_t equals = word.find('='); equals != std::string_view::npos) {
      option.name = word.substr(0, equals);
      option.value = std::string(word.substr(equals + 1));
    }
  } else if (word.size() > 2) {
    option.name = word.substr(0, 2);
    option.value = std::string(word.substr(2));
  }
  return option;
}

// Gives `option` its value: the inline one, else words[*index + 1] (advancing *index). False when
// there is none left.
inline bool TakeOptionValue(std::span<const std::string> words, size_t *index, OptionWord *option) {
  if (option->value) return true;
  if (*index + 1 >= words.size()) return false;
  option->value = words[++*index];
  return true;
}

// Scans `words` (those after the command's name) into `inputs` and options. -h/--help sets *help
// and ends the scan. Every other option goes to `on_option(option, take_value)`, where
// `take_value()` gives the option its value (TakeOptionValue) and is false when none is left;
// it returns "" or the usage problem, which ends the scan and is returned.
template <typename OnOption>
std::string ScanCommandWords(std::span<const std::string> words, std::vector<std::string> *inputs,
                             bool *help, OnOption &&on_option) {
  for (size_t index = 0; index < words.size(); ++index) {
    const std::string_view word = words[index];
    if (word == "--") {
      inputs->insert(inputs->end(), words.begin() + static_cast<std::ptrdiff_t>(index) + 1,
                     words.end());
      break;
    }
    if (word.size() < 2 || word[0] != '-') {
      inputs->emplace_back(word);
      continue;
    }
    OptionWord option = SplitOptionWord(word);
    if (option.name == "-h" || option.name == "--help") {
      *help = true;
      return "";
    }
    const auto take_value = [&] { return TakeOptionValue(words, &index, &option); };
    if (std::string problem = on_option(option, take_value); !problem.empty()) return problem;
  }
  return "";
}

inline std::string UnknownOption(const OptionWord &option) {
  return "unknown option '" + std::string(option.name) + "'";
}

// An on/off option (--salvage, --json): sets *flag; "" or the problem.
inline std::string TakeFlag(const OptionWord &option, bool *flag) {
  if (option.value) return std::string(option.name) + " takes no value";
  *flag = true;
  return "";
}

// A count option (--top, --steps): a whole number from 0 to 100000 into *count; "" or the problem.
template <typename TakeValue>
std::string TakeCount(const OptionWord &option, const TakeValue &take_value, size_t *count) {
  uint64_t parsed = 0;
  if (!take_value() ||
      !absl::SimpleAtoi(absl::string_view(option.value->data(), option.value->size()), &parsed) ||
      parsed > 100000) {
    return std::string(option.name) + " needs a count (0 to 100000)";
  }
  *count = parsed;
  return "";
}

// A path option (-o/--output): a non-empty value into *path (a std::string or an optional one);
// "" or the problem.
template <typename TakeValue, typename Path>
std::string TakePath(const OptionWord &option, const TakeValue &take_value, Path *path) {
  if (!take_value() || option.value->empty()) return std::string(option.name) + " needs a path";
  *path = *option.value;
  return "";
}

// --input-ops GLOB,...: appends the comma-separated patterns; "" or the problem.
template <typename TakeValue>
std::string TakeInputOps(const OptionWord &option, const TakeValue &take_value,
                         std::vector<std::string> *patterns) {
  if (!take_value() || option.value->empty()) return "--input-ops needs comma-separated patterns";
  for (absl::string_view pattern : absl::StrSplit(*option.value, ',', absl::SkipEmpty())) {
    patterns->emplace_back(pattern);
  }
  return "";
}

}  // namespace tfprof::cli
