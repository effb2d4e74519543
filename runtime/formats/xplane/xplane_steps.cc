#include "runtime/formats/xplane/xplane_steps.h"

#include <algorithm>

#include "runtime/model/trace.h"

namespace tfprof::xplane {

namespace {

// The events TensorFlow itself makes roots of: every tf.function call, session run and executor
// run.
bool IsRuntimeRoot(std::string_view name) {
  return name == "FunctionRun" || name == "SessionRun" || name == "RunGraph" ||
         name == "ExecutorState::Process" || name == "TfrtModelRun" || name == "ServingModelRun";
}

// The eager call of the function tf.function lifts out of a first call that creates variables
// (polymorphic_function.py's "initialize_variables"): set-up, no step.
bool IsInitializerRun(std::string_view name) {
  return name.starts_with("EagerLocalExecute: __inference_initialize_variables_");
}

StepMark Mark(int64_t begin_ns, int64_t end_ns, uint32_t track) {
  StepMark mark;
  mark.begin_ns = begin_ns;
  mark.end_ns = end_ns;
  mark.track = track;
  return mark;
}

bool Inside(const StepMark &inner, const StepMark &outer) {
  return inner.track == outer.track && outer.begin_ns <= inner.begin_ns &&
         inner.end_ns <= outer.end_ns;
}

bool ByTrackThenBegin(const StepMark &a, const StepMark &b) {
  return a.track != b.track ? a.track < b.track : a.begin_ns < b.begin_ns;
}

}  // namespace

bool IsStepMarker(std::string_view name, const EventStats &stats) {
  return (stats.root && !IsRuntimeRoot(name)) || name == "TraceContext" ||
         (stats.root && (stats.step_num || stats.iter_num));
}

void HostStepMarks::Note(std::string_view name, const EventStats &stats, int64_t begin_ns,
                         int64_t end_ns, uint32_t track, size_t activity) {
  // tf.data runs its map functions as FunctionRuns too: their threads mark no steps.
  if (name.starts_with("InstantiatedCapturedFunction::")) input_tracks_.insert(track);
  StepMark mark = Mark(begin_ns, end_ns, track);
  mark.activity = activity;
  mark.producer = stats.producer;
  if (stats.function_call) calls_.push_back(mark);
  if (stats.root) runtime_roots_.push_back(mark);
  if (IsInitializerRun(name)) initializer_runs_.push_back(mark);
  if (stats.consumer) {
    auto [work_end, added] = work_ends_.try_emplace(*stats.consumer, end_ns);
    if (!added) work_end->second = std::max(work_end->second, end_ns);
  }
  if (stats.group_id) {
    auto [group, added] = groups_.try_emplace(*stats.group_id, Mark(begin_ns, end_ns, track));
    if (!added) {
      group->second.begin_ns = std::min(group->second.begin_ns, begin_ns);
      group->second.end_ns = std::max(group->second.end_ns, end_ns);
    }
  }
}

int64_t HostStepMarks::WorkEnd(const StepMark &root) const {
  if (root.producer) {
    if (const auto work_end = work_ends_.find(*root.producer); work_end != work_ends_.end()) {
      return std::max(root.end_ns, work_end->second);
    }
  }
  return root.end_ns;
}

bool HostStepMarks::InInitializerRun(const StepMark &root) const {
  return std::any_of(initializer_runs_.begin(), initializer_runs_.end(),
                     [&](const StepMark &run) { return Inside(root, run); });
}

std::vector<StepMark> HostStepMarks::CallSteps() const {
  std::vector<StepMark> calls;
  for (const StepMark &call : calls_) {
    if (!input_tracks_.contains(call.track)) calls.push_back(call);
  }
  if (calls.empty()) return calls;
  // Each call lasts until the executor work of the function runs inside it ends.
  std::vector<StepMark> roots = runtime_roots_;
  std::sort(roots.begin(), roots.end(), ByTrackThenBegin);
  for (StepMark &call : calls) {
    const StepMark first = Mark(call.begin_ns, call.begin_ns, call.track);
    for (auto root = std::lower_bound(roots.begin(), roots.end(), first, ByTrackThenBegin);
         root != roots.end() && root->track == call.track && root->begin_ns <= call.end_ns;
         ++root) {
      call.work_end_ns = std::max(call.work_end_ns, WorkEnd(*root));
    }
  }
  return calls;
}

std::vector<StepMark> HostStepMarks::RuntimeRootSteps() const {
  std::vector<StepMark> roots;
  for (StepMark root : runtime_roots_) {
    if (input_tracks_.contains(root.track) || InInitializerRun(root)) continue;
    root.work_end_ns = WorkEnd(root);
    roots.push_back(root);
  }
  return roots;
}

std::vector<HostStep> HostStepMarks::Steps() const {
  std::vector<StepMark> marks = markers_;
  if (marks.empty()) marks = CallSteps();
  if (marks.empty()) marks = RuntimeRootSteps();
  if (marks.empty()) {
    for (const auto &[group, mark] : groups_) {
      marks.push_back(mark);
      marks.back().number = group;
    }
  }
  std::sort(marks.begin(), marks.end(), EnclosingFirst<StepMark>);
  // A mark inside another (a nested annotation with _r, a tf.function called by another) is part
  // of that step.
  std::vector<StepMark> outer;
  for (const StepMark &mark : marks) {
    if (outer.empty() || mark.end_ns > outer.back().end_ns) outer.push_back(mark);
  }
  for (size_t index = 0; index < outer.size(); ++index) {
    StepMark &mark = outer[index];
    mark.end_ns = std::max(mark.end_ns, mark.work_end_ns);
    // Steps do not overlap: one that runs on past the next's start ends there.
    if (index + 1 < outer.size()) mark.end_ns = std::min(mark.end_ns, outer[index + 1].begin_ns);
  }
  bool increasing = true;
  for (size_t index = 0; index < outer.size(); ++index) {
    if (!outer[index].number ||
        (index > 0 && *outer[index].number <= *outer[index - 1].number)) {
      increasing = false;
    }
  }
  std::vector<HostStep> steps;
  steps.reserve(outer.size());
  for (size_t index = 0; index < outer.size(); ++index) {
    const StepMark &mark = outer[index];
    steps.push_back(HostStep{mark.begin_ns, mark.end_ns, mark.track,
                             increasing ? *mark.number : static_cast<int64_t>(index),
                             mark.activity});
  }
  return steps;
}

}  // namespace tfprof::xplane
