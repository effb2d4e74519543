// The one rule for which step an activity belongs to. The readers set Activity::step with it,
// the TensorFlow writer puts each activity into its step's record with it, and the session's
// export (runtime/export/step_partitioner.h) applies the same rule as events arrive:
//   - GPU work belongs to the step its launch call ran in (GpuDetail::launch_ns), so kernels that
//     run after the step ended still count for it; without a known launch, to the step holding
//     its start;
//   - everything else belongs to the step that holds all of it, begin and end (an instant: the
//     step holding it); a span that crosses a step boundary belongs to no step.
// "The step": the latest-begun step of the activity's own process that qualifies; when that
// process has no steps (GPU work sits in a GPU process, its steps in the host's), of the other
// processes of its recording (Process::group: in a merged trace, never another rank's).
// A step holds the moments in [begin, end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof {

class StepIndex {
 public:
  // `trace` must outlive the index, and its steps must not change.
  explicit StepIndex(const Trace &trace);

  // Where the lookups of one scan last landed in each process's steps. A scan that looks up
  // activities in about time order (a stream's kernels, a file's events) passes one to Of, which
  // then checks the step it found last, and the next, before it searches: the binary search over
  // tens of thousands of steps, for each of millions of activities, was 5% of a summary.
  // Not to be shared between threads.
  class Hint {
   private:
    friend class StepIndex;
    std::vector<size_t> begun_by_process_;  // per process: how many of its steps had begun
  };

  // The index into trace.steps of the step `activity` belongs to, or nullopt. `hint` (optional)
  // changes only how fast the answer is found.
  std::optional<size_t> Of(const Activity &activity, Hint *hint = nullptr) const;

  // The step holding the moment `ns`, for `process`'s activities, or nullopt.
  std::optional<size_t> Find(uint32_t process, int64_t ns) const;

  // The step holding `ns` among the steps of recording `group` (Process::group), or nullopt.
  std::optional<size_t> FindInGroup(uint32_t group, int64_t ns) const;

  // The recording `process` belongs to (Process::group; 0 for an index out of range).
  uint32_t GroupOf(uint32_t process) const;

 private:
  // The steps to search for an activity of `process`: its own, else those of its group's
  // processes, in process order.
  template <typename Holds>
  std::optional<size_t> Search(uint32_t process, int64_t begin_ns, const Holds &holds,
                               Hint *hint = nullptr) const;
  template <typename Holds>
  std::optional<size_t> SearchGroup(uint32_t group, int64_t begin_ns, const Holds &holds,
                                    Hint *hint = nullptr) const;
  template <typename Holds>
  std::optional<size_t> SearchIn(uint32_t process, int64_t begin_ns, const Holds &holds,
                                 Hint *hint) const;
  // How many of `process`'s steps begin at or before `ns`.
  size_t StepsBegunBy(uint32_t process, int64_t ns, Hint *hint) const;

  const Trace &trace_;
  std::vector<std::vector<size_t>> by_process_;  // step indices per process, sorted by begin
  // Their begin times, side by side: the binary search over them reads no step (each lookup
  // ran ~15 steps' cache lines on a trace of 39,000 steps; it runs for every activity).
  std::vector<std::vector<int64_t>> begins_by_process_;
  std::vector<std::vector<uint32_t>> processes_with_steps_;  // per group, in process order
};

// Sets Activity::step of every activity of `trace` by StepIndex's rule.
void AssignSteps(Trace &trace);

}  // namespace tfprof
