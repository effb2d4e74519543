#include "runtime/model/cut_recovery.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/model/step_index.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

uint32_t GroupOf(const Trace &trace, uint32_t process) {
  return process < trace.processes.size() ? trace.processes[process].group : 0;
}

uint32_t GroupOfActivity(const Trace &trace, const Activity &activity) {
  return activity.track < trace.tracks.size() ? GroupOf(trace, trace.tracks[activity.track].process)
                                              : 0;
}

// The last activity read whole: spans the reader closed itself (open at the cut) are no sign of
// how far the file got.
const Activity *LastWholeActivity(const Trace &trace) {
  for (auto at = trace.activities.rbegin(); at != trace.activities.rend(); ++at) {
    if ((at->flags & kActivityIncomplete) == 0) return &*at;
  }
  return nullptr;
}

// Marks in `partial` the steps that may be partial, by the rule of the header.
void MarkPartialSteps(const Trace &trace, const CutFacts &facts, const StepIndex &index,
                      std::vector<bool> &partial) {
  if (!facts.steps_may_be_partial) return;
  if (facts.partial_from_ns) {
    for (size_t step = 0; step < trace.steps.size(); ++step) {
      partial[step] = trace.steps[step].begin_ns >= *facts.partial_from_ns;
    }
    return;
  }
  const Activity *last = LastWholeActivity(trace);
  if (last == nullptr) {
    // No activity came before the cut: no step read can be shown whole.
    partial.assign(trace.steps.size(), true);
    return;
  }
  const uint32_t group = GroupOfActivity(trace, *last);
  // From the step holding it, or after the moment it belongs to when it is in no step.
  int64_t from_ns = 0;
  bool inclusive = true;
  if (const std::optional<size_t> holding = index.Of(*last)) {
    from_ns = trace.steps[*holding].begin_ns;
  } else {
    from_ns = last->begin_ns;
    if (const GpuDetail *work = trace.gpu_details.Work(last->detail);
        IsGpuWork(last->kind) && work != nullptr && work->launch_ns != kNoStep) {
      from_ns = work->launch_ns;
    }
    inclusive = false;
  }
  for (size_t step = 0; step < trace.steps.size(); ++step) {
    const Step &candidate = trace.steps[step];
    if (GroupOf(trace, candidate.process) != group) continue;
    partial[step] = inclusive ? candidate.begin_ns >= from_ns : candidate.begin_ns > from_ns;
  }
}

}  // namespace

void RecoverCutTrace(const CutFacts &facts, Trace &trace) {
  CutRecovery cut;
  cut.file = facts.file;
  cut.file_bytes = facts.file_bytes;
  cut.problem = facts.problem;
  cut.file_has_steps = !trace.steps.empty();
  std::vector<bool> partial(trace.steps.size(), false);
  {
    const StepIndex index(trace);
    MarkPartialSteps(trace, facts, index, partial);
    if (std::find(partial.begin(), partial.end(), true) != partial.end()) {
      // The activities of the partial steps go with them.
      const auto in_partial_step = [&](const Activity &activity) {
        std::optional<size_t> step = index.Of(activity);
        // A span the cut left open (the reader ends it at the file's last moment, so it seems to
        // cross into later steps) belongs where it began.
        if (!step && (activity.flags & kActivityIncomplete) != 0 &&
            activity.track < trace.tracks.size()) {
          step = index.Find(trace.tracks[activity.track].process, activity.begin_ns);
        }
        return step.has_value() && partial[*step];
      };
      const auto first_dropped =
          std::remove_if(trace.activities.begin(), trace.activities.end(), in_partial_step);
      cut.events_dropped = static_cast<uint64_t>(trace.activities.end() - first_dropped);
      trace.activities.erase(first_dropped, trace.activities.end());
    }
  }
  std::vector<Step> kept;
  kept.reserve(trace.steps.size());
  for (size_t step = 0; step < trace.steps.size(); ++step) {
    const Step &each = trace.steps[step];
    if (!partial[step]) {
      kept.push_back(each);
      if (!cut.last_whole_step || each.number > *cut.last_whole_step) cut.last_whole_step = each.number;
      continue;
    }
    ++cut.steps_dropped;
    if (!cut.first_dropped_step || each.number < *cut.first_dropped_step) {
      cut.first_dropped_step = each.number;
    }
    if (!cut.last_dropped_step || each.number > *cut.last_dropped_step) {
      cut.last_dropped_step = each.number;
    }
  }
  trace.steps.swap(kept);
  cut.events_kept = trace.activities.size();
  trace.cut = std::move(cut);
}

std::string CutWarning(const CutRecovery &cut) {
  std::string line = absl::StrCat(ToAbsl(cut.file), ": the file ends at byte ", cut.file_bytes, " (",
                                  ToAbsl(cut.problem), ": cut while being written?); ");
  if (!cut.file_has_steps) {
    absl::StrAppend(&line, "recovered what precedes the cut: kept ", cut.events_kept,
                    " events (the file has no steps)");
    return line;
  }
  absl::StrAppend(&line, "recovered to its last whole step: kept ", cut.events_kept, " events");
  if (cut.last_whole_step) {
    absl::StrAppend(&line, " through step ", *cut.last_whole_step);
  } else {
    absl::StrAppend(&line, " and no whole step");
  }
  if (cut.steps_dropped == 0) {
    absl::StrAppend(&line, "; dropped no step read (the cut fell between whole steps)");
    return line;
  }
  if (cut.steps_dropped == 1) {
    absl::StrAppend(&line, "; dropped step ", *cut.first_dropped_step, " (", cut.events_dropped,
                    " events), which the cut may have left partial");
  } else {
    absl::StrAppend(&line, "; dropped ", cut.steps_dropped, " steps (", *cut.first_dropped_step, "-",
                    *cut.last_dropped_step, ", ", cut.events_dropped,
                    " events), which the cut may have left partial");
  }
  return line;
}

}  // namespace tfprof
