// Splits a session's host spans into training steps as the events arrive, so per-step outputs
// (a TFRecord of RunMetadata, a TensorBoard event file) can be appended while the program runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/clock.h"
#include "runtime/gpu_join.h"
#include "runtime/steps.h"
#include "runtime/session_log.h"
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

// One GPU activity with what the step files need of its launch (GpuJoin's answer, copied).
struct GpuWork {
  size_t activity = 0;       // index into model.gpu.activities
  int64_t launch_ns = 0;     // the launch call's start (else the op's begin, else the work's)
  bool has_op = false;
  LaunchingOp op;            // the host span open at the launch, when has_op
  int64_t thread_id = 0;     // the launching thread's OS id; 0 when unknown
};

// A step with the spans that ran entirely inside it (on any thread), sorted by begin time,
// outer spans before the spans they enclose, and the GPU work it launched (whenever that ran),
// by start time. `has_step` false: the spans and GPU work that fit in no step.
struct StepRecord {
  bool has_step = true;
  StepInterval step;
  std::vector<HostOp> ops;
  std::vector<GpuWork> gpu;
};

// "No GPU work is outstanding": host-only sessions.
inline constexpr int64_t kGpuCompleteAlways = INT64_MAX;

// Ranges (prof_range_start/end) are ops of the track that started them, placed like spans once
// both ends are known; one never ended is closed, incomplete, at the end.
// A span belongs to the latest-begun step that contains all of it. A span that no step contains
// (it runs outside steps, or across a step boundary) goes to the final record, so nothing is lost.
// GPU work belongs to the latest-begun step that contains its launch call's start (GpuJoin's
// rule), so kernels that run after the step ended still count for it.
class StepPartitioner {
 public:
  // Reads the events and GPU records appended to `model` since the last call. `model` and
  // `converter` must stay alive until the next TakeSettled() or TakeAll().
  void Advance(const SessionLog &model, const TickConverter &converter);

  // Removes and returns the settled steps, in begin order. A step is settled when it ended at or
  // before `settled_ns` (the caller promises that every host event timestamped before it has
  // been drained into the model) and at or before `gpu_complete_through_ns` (the caller promises
  // that every API call that started before it, and the GPU work of every launch call that
  // started before it, are in the model, or will never come).
  // GPU work that arrives after its step was taken goes to the final record and counts in
  // late_gpu_records().
  std::vector<StepRecord> TakeSettled(int64_t settled_ns,
                                      int64_t gpu_complete_through_ns = kGpuCompleteAlways);

  // Ends the walk at `end_ns`: returns every remaining step (incomplete ones included) and, last,
  // the record of spans and GPU work that fit in no step when there are any.
  std::vector<StepRecord> TakeAll(int64_t end_ns);

  // GPU activities that arrived after their step's record was taken (sent to the final record).
  // The profiler copies this into GpuLossCounters::late_records.
  uint64_t late_gpu_records() const { return late_gpu_records_; }

 private:
  struct TrackCursor {
    size_t next_event = 0;
    TrackWalkState state;
  };
  struct Collector;

  void PlaceGpuWork(std::vector<StepRecord> &records, int64_t settled_ns,
                    int64_t gpu_complete_through_ns);
  bool ResolveLaunch(size_t activity, int64_t gpu_complete_through_ns, GpuWork *work) const;
  const StepInterval *LatestTakenHolding(int64_t ns) const;
  void SortByStart(std::vector<GpuWork> &work) const;

  std::vector<TrackCursor> cursors_;
  std::vector<StepInterval> steps_;  // completed, not taken yet
  std::vector<HostOp> pending_;      // closed spans not placed yet
  std::vector<HostOp> outside_;      // spans that fit in no step
  // Ranges pair across tracks: a start waiting for its end, or an end drained before its start.
  absl::flat_hash_map<uint64_t, HostOp> open_ranges_;
  absl::flat_hash_map<uint64_t, int64_t> early_range_ends_;

  const SessionLog *model_ = nullptr;
  const TickConverter *converter_ = nullptr;
  GpuLaunchIndex launches_;
  size_t next_activity_ = 0;
  std::vector<size_t> pending_gpu_;   // activities not placed yet
  std::vector<GpuWork> outside_gpu_;  // GPU work launched outside steps, or late
  std::vector<StepInterval> taken_;   // returned by earlier calls, sorted by begin
  int64_t longest_taken_ns_ = 0;
  uint64_t late_gpu_records_ = 0;
};

}  // namespace tfprof
