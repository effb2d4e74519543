// The number a Perfetto track's or slice's name ends with after a known prefix ("stream 12",
// "GPU 3", "step 7", "ProfilerStep#3"): how the reader recognises rows, devices and steps.
#pragma once

#include <cstdint>
#include <string_view>

namespace tfprof {

// "stream 12" with prefix "stream " -> 12. False unless only 1 to 18 digits follow the prefix.
inline bool NumberAfter(std::string_view text, std::string_view prefix, int64_t *number) {
  if (text.size() <= prefix.size() || text.substr(0, prefix.size()) != prefix) return false;
  const std::string_view digits = text.substr(prefix.size());
  if (digits.size() > 18) return false;
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *number = value;
  return true;
}

}  // namespace tfprof
