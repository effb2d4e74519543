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
  // table lookup, inline.
  bool Matches(const char *name, int64_t *step) {
    if (name == nullptr || !first_bytes_[static_cast<unsigned char>(name[0])]) return false;
    return MatchesCandidate(name, step);
  }

 private:
  bool MatchesCandidate(const char *name, int64_t *step);

  std::vector<std::string> patterns_;
  // The first bytes a matching name can have: all of them once a pattern starts with a wildcard,
  // none without patterns.
  bool first_bytes_[256] = {};
  std::atomic<int64_t> last_step_{-1};
};

}  // namespace tfprof::preload
