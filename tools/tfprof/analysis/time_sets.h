// The time sets of one recording (GPU compute, communication, copies, input wait, host compute,
// synchronisation, launch calls) measured inside the windows a summary reports: its steps, the
// stretches outside them and the whole window. Each set is built, measured in every window and
// released before the next, so the analysis holds one or two sets at a time instead of all of them
// beside a copy of every host span (it set the summary's peak memory on large traces).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/model/trace.h"
#include "tools/tfprof/analysis/intervals.h"
#include "tools/tfprof/analysis/launch_split.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

inline bool IsHostSpan(ActivityKind kind) {
  return kind == ActivityKind::kHostOp || kind == ActivityKind::kPythonFunction ||
         kind == ActivityKind::kRuntimeApi;
}

struct NamedInterval {
  Interval interval;
  uint32_t name = 0;
};

// The activities of each recording (Process::group). A trace of one recording is walked
// whole; a merge's are listed once, so that each rank's pass reads only its own activities.
class GroupMembers {
 public:
  GroupMembers(const Trace &trace, const std::vector<uint32_t> &group_of_track, uint32_t groups)
      : trace_(trace) {
    if (groups <= 1) return;
    members_.resize(groups);
    for (uint32_t index = 0; index < trace.activities.size(); ++index) {
      members_[group_of_track[trace.activities[index].track]].push_back(index);
    }
  }
  template <typename Fn>
  void ForEach(uint32_t group, Fn fn) const {
    if (members_.empty()) {
      for (const Activity &activity : trace_.activities) fn(activity);
      return;
    }
    for (uint32_t index : members_[group]) fn(trace_.activities[index]);
  }

 private:
  const Trace &trace_;
  std::vector<std::vector<uint32_t>> members_;  // empty with one group
};

struct TimeSetMeasures {
  // One per window, in the windows' order: begin, duration and every time and count a step
  // reports (number, process, rank and longest_input_op are the caller's).
  std::vector<StepBreakdown> windows;
  std::vector<int64_t> collective_kernel_ns;  // per window: all collective kernel time
  LaunchSplit launches;  // one-time launches and launches with no GPU record (one_time_calls)
};

// Host time is judged per thread. With the threads that run the steps known (`step_tracks`),
// input wait is the time such a thread spends inside an input op (its children included): what
// the step waits on, whatever other threads do meanwhile, and tf.data's GetNext kernel on any
// thread (kOpStepInput: the step's function waits on it); any other open span on any thread is
// host compute. Without them (no steps, or steps of unknown threads), a thread in an input op
// counts as waiting only while no thread computes: a loader prefetching while the main thread
// computes is not waiting. Async ranges (NVTX start/end) named like input ops count as input.
// `input_spans` receives the input ops' spans (and ranges) in the activities' order.
TimeSetMeasures MeasureTimeSets(const Trace &trace, const std::vector<uint8_t> &classes,
                                const GroupMembers &members, uint32_t group,
                                const std::vector<bool> &step_tracks, bool step_threads_known,
                                const std::vector<Interval> &windows,
                                std::vector<NamedInterval> *input_spans);

}  // namespace tfprof::cli
