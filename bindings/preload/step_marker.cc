#include "bindings/preload/step_marker.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstring>
#include <iterator>

namespace tfprof::preload {

StepMarker::StepMarker(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {
  for (const std::string &pattern : patterns_) {
    const unsigned char first = static_cast<unsigned char>(pattern[0]);
    if (first == '*' || first == '?' || first == '[' || first == '\\') {
      std::fill(std::begin(first_bytes_), std::end(first_bytes_), true);
    } else {
      first_bytes_[first] = true;
    }
  }
}

bool StepMarker::MatchesCandidate(const char *name, int64_t *step) {
  bool matched = false;
  for (const std::string &pattern : patterns_) {
    if (fnmatch(pattern.c_str(), name, 0) == 0) {
      matched = true;
      break;
    }
  }
  if (!matched) return false;
  // The trailing digits, if any, are the step's number.
  const size_t length = std::strlen(name);
  size_t digits_begin = length;
  while (digits_begin > 0 && name[digits_begin - 1] >= '0' && name[digits_begin - 1] <= '9') {
    --digits_begin;
  }
  const size_t digit_count = length - digits_begin;
  if (digit_count > 0 && digit_count <= 18) {
    int64_t number = 0;
    for (size_t at = digits_begin; at < length; ++at) number = number * 10 + (name[at] - '0');
    *step = number;
    last_step_.store(number, std::memory_order_relaxed);
  } else {
    *step = last_step_.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  return true;
}

}  // namespace tfprof::preload
