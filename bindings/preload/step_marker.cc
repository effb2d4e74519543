#include "bindings/preload/step_marker.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstring>
#include <iterator>

namespace tfprof::preload {

namespace {

// The text a pattern's matches all start with: up to its first wildcard or escape.
std::string LiteralPrefix(const std::string &pattern) {
  return pattern.substr(0, std::min(pattern.find_first_of("*?[\\"), pattern.size()));
}

}  // namespace

StepMarker::StepMarker(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {
  for (const std::string &pattern : patterns_) {
    literal_prefixes_.push_back(LiteralPrefix(pattern));
    if (literal_prefixes_.back().empty()) {
      std::fill(std::begin(first_bytes_), std::end(first_bytes_), true);
    } else {
      first_bytes_[static_cast<unsigned char>(pattern[0])] = true;
    }
  }
}

bool StepMarker::IsMarkerCandidate(const char *name) const {
  for (size_t index = 0; index < patterns_.size(); ++index) {
    const std::string &prefix = literal_prefixes_[index];
    if (std::strncmp(name, prefix.data(), prefix.size()) != 0) continue;
    if (fnmatch(patterns_[index].c_str(), name, 0) == 0) return true;
  }
  return false;
}

int64_t StepMarker::StepNumberOf(const char *name) {
  steps_marked_.fetch_add(1, std::memory_order_relaxed);
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
    last_step_.store(number, std::memory_order_relaxed);
    return number;
  }
  return last_step_.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace tfprof::preload
