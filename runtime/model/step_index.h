// Which step an activity belongs to, for the writers: the step whose interval [begin, end) holds
// the activity's start, a step of the activity's own process first, else a step of any process
// (GPU work sits in a GPU process, its steps in the host's).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof {

class StepIndex {
 public:
  explicit StepIndex(const Trace &trace);

  // The index into trace.steps of the step holding `ns` (see above), or nullopt.
  std::optional<size_t> Find(uint32_t process, int64_t ns) const;

 private:
  // The latest-starting step of `steps` (indices sorted by begin) that holds `ns`.
  std::optional<size_t> FindIn(const std::vector<size_t> &steps, int64_t ns) const;

  const Trace &trace_;
  std::vector<std::vector<size_t>> by_process_;  // step indices per process, sorted by begin
  std::vector<uint32_t> processes_with_steps_;   // in process order
};

}  // namespace tfprof
