#include "runtime/model/step_index.h"

#include <algorithm>

namespace tfprof {

namespace {

// Steps of a process seldom overlap: looking back over a few of the latest-begun ones covers
// nested steps without a walk over the whole list.
constexpr int kStepsLookedAt = 8;

// The rule for a moment (an instant, the start of GPU work, a launch): the step holding it.
auto HoldsMoment(int64_t ns) {
  return [ns](const Step &step) { return ns < step.end_ns; };
}

}  // namespace

StepIndex::StepIndex(const Trace &trace) : trace_(trace) {
  for (size_t index = 0; index < trace.steps.size(); ++index) {
    const uint32_t process = trace.steps[index].process;
    if (by_process_.size() <= process) by_process_.resize(process + 1);
    by_process_[process].push_back(index);
  }
  for (uint32_t process = 0; process < by_process_.size(); ++process) {
    std::vector<size_t> &steps = by_process_[process];
    if (steps.empty()) continue;
    std::stable_sort(steps.begin(), steps.end(), [&](size_t a, size_t b) {
      return trace.steps[a].begin_ns < trace.steps[b].begin_ns;
    });
    if (begins_by_process_.size() <= process) begins_by_process_.resize(process + 1);
    std::vector<int64_t> &begins = begins_by_process_[process];
    for (const size_t step : steps) begins.push_back(trace.steps[step].begin_ns);
    const uint32_t group = GroupOf(process);
    if (processes_with_steps_.size() <= group) processes_with_steps_.resize(group + 1);
    processes_with_steps_[group].push_back(process);
  }
}

uint32_t StepIndex::GroupOf(uint32_t process) const {
  return process < trace_.processes.size() ? trace_.processes[process].group : 0;
}

size_t StepIndex::StepsBegunBy(uint32_t process, int64_t ns, Hint *hint) const {
  const std::vector<int64_t> &begins = begins_by_process_[process];
  const auto answers = [&](size_t begun) {
    return begun <= begins.size() && (begun == 0 || begins[begun - 1] <= ns) &&
           (begun == begins.size() || ns < begins[begun]);
  };
  size_t *last = nullptr;
  if (hint != nullptr) {
    if (hint->begun_by_process_.size() <= process) hint->begun_by_process_.resize(process + 1, 0);
    last = &hint->begun_by_process_[process];
    if (answers(*last)) return *last;
    if (answers(*last + 1)) return ++*last;
  }
  const auto begun = static_cast<size_t>(std::upper_bound(begins.begin(), begins.end(), ns) -
                                         begins.begin());
  if (last != nullptr) *last = begun;
  return begun;
}

template <typename Holds>
std::optional<size_t> StepIndex::SearchIn(uint32_t process, int64_t begin_ns, const Holds &holds,
                                          Hint *hint) const {
  const std::vector<size_t> &steps = by_process_[process];
  // The steps that begin at or before `begin_ns`, the latest first.
  size_t after = StepsBegunBy(process, begin_ns, hint);
  for (int looked = 0; after != 0 && looked < kStepsLookedAt; ++looked) {
    --after;
    if (holds(trace_.steps[steps[after]])) return steps[after];
  }
  return std::nullopt;
}

template <typename Holds>
std::optional<size_t> StepIndex::Search(uint32_t process, int64_t begin_ns, const Holds &holds,
                                        Hint *hint) const {
  if (process < by_process_.size() && !by_process_[process].empty()) {
    return SearchIn(process, begin_ns, holds, hint);
  }
  return SearchGroup(GroupOf(process), begin_ns, holds, hint);
}

template <typename Holds>
std::optional<size_t> StepIndex::SearchGroup(uint32_t group, int64_t begin_ns, const Holds &holds,
                                             Hint *hint) const {
  if (group >= processes_with_steps_.size()) return std::nullopt;
  for (uint32_t other : processes_with_steps_[group]) {
    if (std::optional<size_t> found = SearchIn(other, begin_ns, holds, hint)) return found;
  }
  return std::nullopt;
}

std::optional<size_t> StepIndex::Find(uint32_t process, int64_t ns) const {
  return Search(process, ns, HoldsMoment(ns));
}

std::optional<size_t> StepIndex::FindInGroup(uint32_t group, int64_t ns) const {
  return SearchGroup(group, ns, HoldsMoment(ns));
}

std::optional<size_t> StepIndex::Of(const Activity &activity, Hint *hint) const {
  if (trace_.steps.empty() || activity.track >= trace_.tracks.size()) return std::nullopt;
  const uint32_t process = trace_.tracks[activity.track].process;
  if (IsGpuWork(activity.kind)) {
    if (const GpuDetail *work = trace_.gpu_details.Work(activity.detail);
        work != nullptr && work->launch_ns != kNoStep) {
      // The launch ran on a host thread: its steps are the host's, not the GPU process's.
      return SearchGroup(GroupOf(process), work->launch_ns, HoldsMoment(work->launch_ns), hint);
    }
    return Search(process, activity.begin_ns, HoldsMoment(activity.begin_ns), hint);
  }
  if (activity.begin_ns == activity.end_ns) {
    return Search(process, activity.begin_ns, HoldsMoment(activity.begin_ns), hint);
  }
  return Search(
      process, activity.begin_ns,
      [&](const Step &step) { return activity.end_ns <= step.end_ns; }, hint);
}

void AssignSteps(Trace &trace) {
  const StepIndex index(trace);
  StepIndex::Hint hint;
  for (Activity &activity : trace.activities) {
    const std::optional<size_t> step = index.Of(activity, &hint);
    activity.step = step ? trace.steps[*step].number : kNoStep;
  }
}

}  // namespace tfprof
