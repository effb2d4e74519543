// Which NVTX ranges mark training steps (TFPROF_STEP_MARKER), and which step number each gives.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tfprof::preload {

class StepMarker {
 public:
  // `patterns`: fnmatch globs, already checked (ParsePreloadConfig). None: nothing marks steps.
  explicit StepMarker(std::vector<std::string> patterns);

  // Whether the range `name` marks a step; if so `*step` is its number: the name's trailing
  // digits ("step 12", "ProfilerStep#12"), else one more than the last step this marker gave.
  // Called on every NVTX range push, so a name whose first byte starts no pattern costs one
  // table lookup.
  bool Matches(const char *name, int64_t *step);

 private:
  std::vector<std::string> patterns_;
  bool any_first_byte_ = false;  // a pattern starts with a wildcard: every name is a candidate
  bool first_bytes_[256] = {};
  std::atomic<int64_t> last_step_{-1};
};

}  // namespace tfprof::preload
