// Small ASCII text tests that several readers make on names: a digit, a number after a known
// prefix ("ProfilerStep#3", "step 12", "stream 7", "GPU 0"), a prefix in any case. One
// definition each, so that every reader recognises the same names the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tfprof {

constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "step 12" with prefix "step " -> 12; "ProfilerStep#3" with prefix "ProfilerStep#" -> 3. False
// unless 1 to 18 digits, and nothing else, follow the prefix (18 digits always fit an int64).
constexpr bool NumberAfter(std::string_view text, std::string_view prefix, int64_t *number) {
  if (text.size() <= prefix.size() || text.substr(0, prefix.size()) != prefix) return false;
  const std::string_view digits = text.substr(prefix.size());
  if (digits.size() > 18) return false;
  int64_t value = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    value = value * 10 + (c - '0');
  }
  *number = value;
  return true;
}

// Whether `text` starts with `lower_prefix` (written in lower case), ignoring the case of ASCII
// letters in `text`: "MEMCPYHtoD" starts with "memcpy".
constexpr bool StartsWithIgnoringCase(std::string_view text, std::string_view lower_prefix) {
  if (text.size() < lower_prefix.size()) return false;
  for (size_t index = 0; index < lower_prefix.size(); ++index) {
    const char c = text[index];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != lower_prefix[index]) {
      return false;
    }
  }
  return true;
}

}  // namespace tfprof
