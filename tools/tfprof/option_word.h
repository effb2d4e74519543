// How the file commands read one command-line word as an option: "--name=value", "-oVALUE", or
// a bare "--name"/"-o" whose value, for options that take one, is the next word.
#ifndef TFPROF_TOOLS_TFPROF_OPTION_WORD_H_
#define TFPROF_TOOLS_TFPROF_OPTION_WORD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"

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

// A count option's value (--top, --steps): a whole number from 0 to 100000.
inline bool ParseCount(std::string_view text, size_t *value) {
  uint64_t parsed = 0;
  if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &parsed) || parsed > 100000) {
    return false;
  }
  *value = parsed;
  return true;
}

}  // namespace tfprof::cli

#endif  // TFPROF_TOOLS_TFPROF_OPTION_WORD_H_
