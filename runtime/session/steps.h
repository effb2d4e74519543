// The session's training steps, gathered from every track, and which step a moment falls in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/session/session_log.h"

namespace tfprof {

struct StepInterval {
  int64_t step = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  size_t track = 0;  // the thread that marked it
  bool incomplete = false;
};

// All steps of all tracks, sorted by begin time.
std::vector<StepInterval> CollectSteps(const SessionLog &model, const TickConverter &converter,
                                       int64_t end_ns);

// Answers "which step was running at time t": the latest-begun step that contains t.
class StepLookup {
 public:
  explicit StepLookup(const std::vector<StepInterval> &steps);

  // Null when no step contains `ns`.
  const StepInterval *Find(int64_t ns) const;

 private:
  const std::vector<StepInterval> &steps_;
  // latest_end_[i]: the latest end among steps_[0..i], to stop searching backwards early.
  std::vector<int64_t> latest_end_;
};

}  // namespace tfprof
