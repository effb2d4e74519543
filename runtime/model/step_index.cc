#include "runtime/model/step_index.h"

#include <algorithm>

namespace tfprof {

namespace {

// Steps of a process seldom overlap: looking back over a few of the latest-begun ones covers
// nested steps without a walk over the whole list.
constexpr int kStepsLookedAt = 8;

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

template <typename Holds>
std::optional<size_t> StepIndex::SearchIn(uint32_t process, int64_t begin_ns,
                                          const Holds &holds) const {
  const std::vector<size_t> &steps = by_process_[process];
  const std::vector<int64_t> &begins = begins_by_process_[process];
  // The steps that begin at or before `begin_ns`, the latest first.
  auto after = static_cast<size_t>(std::upper_bound(begins.begin(), begins.end(), begin_ns) -
                                   begins.begin());
  for (int looked = 0; after != 0 && looked < kStepsLookedAt; ++looked) {
    --after;
    if (holds(trace_.steps[steps[after]])) return steps[after];
  }
  return std::nullopt;
}

template <typename Holds>
std::optional<size_t> StepIndex::Search(uint32_t process, int64_t begin_ns,
                                        const Holds &holds) const {
  if (process < by_process_.size() && !by_process_[process].empty()) {
    return SearchIn(process, begin_ns, holds);
  }
  return SearchGroup(GroupOf(process), begin_ns, holds);
}

template <typename Holds>
std::optional<size_t> StepIndex::SearchGroup(uint32_t group, int64_t begin_ns,
                                             const Holds &holds) const {
  if (group >= processes_with_steps_.size()) return std::nullopt;
  for (uint32_t other : processes_with_steps_[group]) {
    if (std::optional<size_t> found = SearchIn(other, begin_ns, holds)) return found;
  }
  return std::nullopt;
}

std::optional<size_t> StepIndex::Find(uint32_t process, int64_t ns) const {
  return Search(process, ns, [&](const Step &step) { return ns < step.end_ns; });
}

std::optional<size_t> StepIndex::FindInGroup(uint32_t group, int64_t ns) const {
  return SearchGroup(group, ns, [&](const Step &step) { return ns < step.end_ns; });
}

std::optional<size_t> StepIndex::Of(const Activity &activity) const {
  if (trace_.steps.empty() || activity.track >= trace_.tracks.size()) return std::nullopt;
  const uint32_t process = trace_.tracks[activity.track].process;
  if (IsGpuWork(activity.kind)) {
    if (const GpuDetail *work = trace_.gpu_details.Work(activity.detail);
        work != nullptr && work->launch_ns != kNoStep) {
      // The launch ran on a host thread: its steps are the host's, not the GPU process's.
      return FindInGroup(GroupOf(process), work->launch_ns);
    }
    return Find(process, activity.begin_ns);
  }
  if (activity.begin_ns == activity.end_ns) return Find(process, activity.begin_ns);
  return Search(process, activity.begin_ns,
                [&](const Step &step) { return activity.end_ns <= step.end_ns; });
}

void AssignSteps(Trace &trace) {
  const StepIndex index(trace);
  for (Activity &activity : trace.activities) {
    const std::optional<size_t> step = index.Of(activity);
    activity.step = step ? trace.steps[*step].number : kNoStep;
  }
}

}  // namespace tfprof
