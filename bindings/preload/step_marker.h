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
    if (!IsMarker(name)) return false;
    *step = StepNumberOf(name);
    return true;
  }

  // Matches() in two steps, for a caller that keeps the first one's answer (a registered NVTX
  // string is checked once): whether `name` matches a pattern (no side effect), and the step a
  // matching name opens now.
  bool IsMarker(const char *name) const { return MayMatch(name) && IsMarkerCandidate(name); }

  // False when `name` cannot be a marker: NULL, or its first byte starts no pattern. Inline and
  // a table lookup, for the common case of a name that is no marker.
  bool MayMatch(const char *name) const {
    return name != nullptr && first_bytes_[static_cast<unsigned char>(name[0])];
  }
  int64_t StepNumberOf(const char *name);

  // How many steps this marker has opened (StepNumberOf calls): the Python framework
  // integrations leave step marking to the program once it is not 0.
  uint64_t steps_marked() const { return steps_marked_.load(std::memory_order_relaxed); }

 private:
  // fnmatch() against the patterns whose literal prefix (the text before their first wildcard)
  // `name` starts with: "sgemm" or "step_fn" against "step [0-9]*" costs a few byte compares.
  bool IsMarkerCandidate(const char *name) const;

  std::vector<std::string> patterns_;
  std::vector<std::string> literal_prefixes_;  // one per pattern
  // The first bytes a matching name can have: all of them once a pattern starts with a wildcard,
  // none without patterns.
  bool first_bytes_[256] = {};
  std::atomic<int64_t> last_step_{-1};
  std::atomic<uint64_t> steps_marked_{0};
};

}  // namespace tfprof::preload
