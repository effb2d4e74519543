// Where one host's steps are in an XSpace. TensorFlow and JAX mark steps in several ways; the
// strongest kind a host has decides, and the others are not steps there:
//  1. the program's step markers: an event with _r that TensorFlow does not make itself
//     (tf.profiler.experimental.Trace("train", step_num=N, _r=1), JAX's StepTraceAnnotation,
//     Keras' TensorBoard callback's "Profiled batch"), or a TraceContext;
//  2. the program's tf.function calls, outermost on their thread. TensorFlow records each call
//     that returned with a tf_function_call stat; a call that raised has none (Keras' call that
//     finds the dataset exhausted). A call holds its batch and whatever it did first: tracing,
//     and the variable-initialisation run tf.function makes when the call creates variables
//     (Keras' optimizer slots), which are no steps of their own;
//  3. without those (TF1 sessions, C++ callers, TensorFlow before 2.3): TensorFlow's own roots
//     (FunctionRun, SessionRun, ...), tf.function's variable-initialisation runs excepted;
//  4. without any root: the events' group_id (TensorFlow 2.4's grouping).
// Steps from 2 and 3 last until the executor runs their function started end (eager dispatch
// returns before its work is done).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/formats/xplane/xplane_event_stats.h"

namespace tfprof::xplane {

// An event on a host line that marks, or may become, a step; times on the host's clock.
struct StepMark {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t track = 0;
  std::optional<int64_t> number;  // step_num, else iter_num
  // The event read as an activity, which goes when the event becomes the step; SIZE_MAX for the
  // program's markers, which are never activities.
  size_t activity = SIZE_MAX;
  std::optional<int64_t> producer;  // its _p: the executor runs doing its work have it as _c
  // When the work it started ends, past end_ns where its executor runs outlive it. Marks nest
  // by their own extents: a step's late executor callback does not swallow the next step.
  int64_t work_end_ns = std::numeric_limits<int64_t>::min();
};

struct HostStep {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t track = 0;
  int64_t number = 0;
  size_t activity = SIZE_MAX;  // the activity that became this step, if any
};

// Whether an event with these stats is one of the program's step markers (kind 1), which is a
// step and no activity.
bool IsStepMarker(std::string_view name, const EventStats &stats);

// Collects one host's step marks while its events are read, then places its steps.
class HostStepMarks {
 public:
  // Notes one host event (not a step marker), read as activity `activity`.
  void Note(std::string_view name, const EventStats &stats, int64_t begin_ns, int64_t end_ns,
            uint32_t track, size_t activity);
  void AddMarker(const StepMark &marker) { markers_.push_back(marker); }

  // The steps, in time order, not overlapping: a mark inside another is part of its step; a
  // step that runs on past the next one's begin ends there. Numbered by the marks' step_num
  // where these increase, else from 0.
  std::vector<HostStep> Steps() const;

 private:
  std::vector<StepMark> CallSteps() const;
  std::vector<StepMark> RuntimeRootSteps() const;
  // The latest end of the executor work that `root` (a runtime root) started.
  int64_t WorkEnd(const StepMark &root) const;
  bool InInitializerRun(const StepMark &root) const;

  std::vector<StepMark> markers_;        // kind 1
  std::vector<StepMark> calls_;          // kind 2
  std::vector<StepMark> runtime_roots_;  // kind 3, all of them: the work of kind 2's calls
  std::vector<StepMark> initializer_runs_;  // tf.function's variable-initialisation calls
  absl::flat_hash_set<uint32_t> input_tracks_;  // threads that run tf.data's functions
  // The latest end of the events that consumed each producer id (_c): a function's executor
  // runs.
  absl::flat_hash_map<int64_t, int64_t> work_ends_;
  absl::flat_hash_map<int64_t, StepMark> groups_;  // kind 4
};

}  // namespace tfprof::xplane
