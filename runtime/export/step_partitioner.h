// Splits a session's host spans into training steps as the events arrive, so per-step outputs
// (a TFRecord of RunMetadata, a TensorBoard event file) can be appended while the program runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/clock.h"
#include "runtime/steps.h"
#include "runtime/trace_model.h"
#include "runtime/track_walker.h"

namespace tfprof {

// One closed host span.
struct HostOp {
  size_t track = 0;
  uint32_t name = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  bool incomplete = false;  // still open when the session ended
};

// A step with the spans that ran entirely inside it (on any thread), sorted by begin time,
// outer spans before the spans they enclose. `has_step` false: the spans that fit in no step.
struct StepRecord {
  bool has_step = true;
  StepInterval step;
  std::vector<HostOp> ops;
};

// A span belongs to the latest-begun step that contains all of it. A span that no step contains
// (it runs outside steps, or across a step boundary) goes to the final record, so nothing is lost.
class StepPartitioner {
 public:
  // Reads the events appended to `model` since the last call.
  void Advance(const TraceModel &model, const TickConverter &converter);

  // Removes and returns the steps that ended at or before `settled_ns`, in begin order. The caller
  // promises that every event timestamped before `settled_ns` has been drained into the model.
  std::vector<StepRecord> TakeSettled(int64_t settled_ns);

  // Ends the walk at `end_ns`: returns every remaining step (incomplete ones included) and, last,
  // the record of spans that fit in no step when there are any.
  std::vector<StepRecord> TakeAll(int64_t end_ns);

 private:
  struct TrackCursor {
    size_t next_event = 0;
    TrackWalkState state;
  };
  struct Collector;

  std::vector<TrackCursor> cursors_;
  std::vector<StepInterval> steps_;  // completed, not taken yet
  std::vector<HostOp> pending_;      // closed spans not placed yet
  std::vector<HostOp> outside_;      // spans that fit in no step
};

}  // namespace tfprof
