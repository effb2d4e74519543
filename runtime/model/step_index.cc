#include "runtime/model/step_index.h"

#include <algorithm>

namespace tfprof {

StepIndex::StepIndex(const Trace &trace) : trace_(trace) {
  for (size_t index = 0; index < trace.steps.size(); ++index) {
    const uint32_t process = trace.steps[index].process;
    if (by_process_.size() <= process) by_process_.resize(process + 1);
    by_process_[process].push_back(index);
  }
  for (uint32_t process = 0; process < by_process_.size(); ++process) {
    std::vector<size_t> &steps = by_process_[process];
    if (steps.empty()) continue;
    processes_with_steps_.push_back(process);
    std::stable_sort(steps.begin(), steps.end(), [&](size_t a, size_t b) {
      return trace.steps[a].begin_ns < trace.steps[b].begin_ns;
    });
  }
}

std::optional<size_t> StepIndex::FindIn(const std::vector<size_t> &steps, int64_t ns) const {
  // The steps starting at or before `ns`, latest first. A process's steps seldom overlap, so
  // looking at a few of them covers nested steps without a walk over the whole list.
  constexpr int kStepsLookedAt = 8;
  auto it = std::upper_bound(steps.begin(), steps.end(), ns, [&](int64_t value, size_t step) {
    return value < trace_.steps[step].begin_ns;
  });
  for (int looked = 0; it != steps.begin() && looked < kStepsLookedAt; ++looked) {
    --it;
    if (ns < trace_.steps[*it].end_ns) return *it;
  }
  return std::nullopt;
}

std::optional<size_t> StepIndex::Find(uint32_t process, int64_t ns) const {
  if (process < by_process_.size() && !by_process_[process].empty()) {
    return FindIn(by_process_[process], ns);
  }
  for (uint32_t other : processes_with_steps_) {
    if (std::optional<size_t> found = FindIn(by_process_[other], ns)) return found;
  }
  return std::nullopt;
}

}  // namespace tfprof
