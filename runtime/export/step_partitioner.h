// Splits a session's records into training steps as the events arrive, so outputs can be
// written step by step while the program runs (runtime/export/session_trace.h turns each record
// into a piece of the trace model). The rule is the model's (runtime/model/step_index.h), applied
// as events arrive: a span belongs to the latest-begun step that holds all of it; GPU work, CUDA
// API calls and synchronisations to the step holding their launch call's (or their own) start,
// so kernels that run after the step ended still count for it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/collector/clock.h"
#include "runtime/export/gpu_launch_index.h"
#include "runtime/session/session_log.h"
#include "runtime/session/track_walker.h"

namespace tfprof {

// A training step as one thread marked it.
struct StepInterval {
  int64_t step = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  size_t track = 0;  // the thread that marked it
  bool incomplete = false;
};

// One closed host span, or a range (prof_range_start/end), which may end on another track.
struct HostOp {
  size_t track = 0;
  uint32_t name = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  bool incomplete = false;  // still open when the session ended
  bool range = false;
  size_t end_track = 0;  // range: the track its end was recorded on
};

// An instant or a counter sample.
struct HostPoint {
  size_t track = 0;
  uint32_t name = 0;
  int64_t ns = 0;
  bool counter = false;
  double value = 0;
};

// One GPU activity with what the outputs need of its launch (found through GpuLaunchIndex).
struct GpuWork {
  size_t activity = 0;       // index into model.gpu.activities
  int64_t launch_ns = 0;     // the launch call's start (else the op's begin, else the work's)
  bool has_op = false;
  LaunchingOp op;            // the host span open at the launch, when has_op
  int64_t thread_id = 0;     // the launching thread's OS id; 0 when unknown
  uint64_t external_id = 0;  // CUPTI's link to the host span; 0 when none
};

// A step with the spans that ran entirely inside it (on any thread), sorted by begin time,
// outer spans before the spans they enclose, and the GPU work, API calls and synchronisations
// it launched (whenever the work ran). `has_step` false: items that fit in no step.
struct StepRecord {
  bool has_step = true;
  StepInterval step;
  std::vector<HostOp> ops;
  std::vector<GpuWork> gpu;
  std::vector<size_t> api_calls;  // indices into model.gpu.api_calls
  std::vector<size_t> syncs;      // indices into model.gpu.syncs
};

// "No GPU work is outstanding": host-only sessions.
inline constexpr int64_t kGpuCompleteAlways = INT64_MAX;

class StepPartitioner {
 public:
  // Reads the events and GPU records appended to `model` since the last call: the host events
  // stamped before `until_ns` (an export walks a long session in windows), every GPU record.
  // `model` and `converter` must stay alive until the next TakeSettled() or TakeAll().
  void Advance(const SessionLog &model, const TickConverter &converter,
               int64_t until_ns = INT64_MAX);

  // Removes and returns the settled steps, in begin order. A step is settled when it ended at or
  // before `settled_ns` (the caller promises that every host event timestamped before it has
  // been drained into the model) and at or before `gpu_complete_through_ns` (the caller promises
  // that every API call that started before it, and the GPU work of every launch call that
  // started before it, are in the model, or will never come).
  // GPU work that arrives after its step was taken goes to the outside record and counts in
  // late_gpu_records().
  std::vector<StepRecord> TakeSettled(int64_t settled_ns,
                                      int64_t gpu_complete_through_ns = kGpuCompleteAlways);

  // Moves into `*rest` what TakeSettled() found to fit in no step so far (spans that begin before
  // every step still to come, in the order they ended on each thread; GPU work launched outside
  // steps or late, by start): it can be written at once. `*rest`'s vectors are reused.
  void TakeOutside(StepRecord *rest);

  // The instants and counter samples stamped before every step still to come and before the
  // settled time of the last TakeSettled(), in time order per track, removed.
  std::vector<HostPoint> TakePoints();

  // Ends the walk at `end_ns`: returns every remaining step (incomplete ones included) and, last,
  // the record of what fits in no step when there is any (its spans unsorted, as TakeOutside()'s).
  std::vector<StepRecord> TakeAll(int64_t end_ns);

  // The step that was running at `ns`, among the steps taken so far: for items written outside
  // step records (instants). Null when none held it.
  const StepInterval *TakenStepAt(int64_t ns) const { return LatestTakenHolding(ns); }

  // The external id CUPTI reported for a correlation id (0: none), for API call rows.
  uint64_t ExternalIdOf(uint32_t correlation) const { return launches_.ExternalIdOf(correlation); }

  // GPU activities that arrived after their step's record was taken (sent to the outside record).
  // The profiler copies this into GpuLossCounters::late_records.
  uint64_t late_gpu_records() const { return late_gpu_records_; }
  // Events skipped because there was no memory to take them in.
  uint64_t lost_records() const { return lost_records_; }

  // What of the session's records the partitioner no longer needs, into `*positions` (its host
  // and GPU lists but the overheads and memory changes): host events it has taken in (what they
  // became is its own copy) and, where GPU work may still come looking for the span that
  // launched it (`gpu_tracing`), indexed for that too; GPU records before the first it has not
  // placed yet.
  void TakenIn(bool gpu_tracing, LogPositions *positions) const;

  // How many taken steps are remembered (for tests: it stays bounded).
  size_t remembered_steps() const { return taken_.size(); }
  // At most this many taken steps are remembered (plus a batch of kForgetBatch not erased yet),
  // whatever the step rate: 200 steps/s for the minute of kTakenStepMemoryNs would be 12,000.
  static constexpr size_t kMaxRememberedSteps = 4096;
  static constexpr size_t kForgetBatch = 1024;

 private:
  struct TrackCursor {
    size_t next_event = 0;
    TrackWalkState state;
  };
  struct Collector;

  void PlaceGpuSide(std::vector<StepRecord> &records, int64_t settled_ns,
                    int64_t gpu_complete_through_ns);
  bool ResolveLaunch(size_t activity, int64_t gpu_complete_through_ns, GpuWork *work) const;
  const StepInterval *LatestTakenHolding(int64_t ns) const;
  // Drops the taken steps that ended before `cutoff_ns` (some of them: it works in batches).
  void ForgetTakenBefore(int64_t cutoff_ns);
  void SortByStart(std::vector<GpuWork> &work) const;

  std::vector<TrackCursor> cursors_;
  std::vector<StepInterval> steps_;  // completed, not taken yet
  std::vector<HostOp> pending_;      // closed spans not placed yet
  std::vector<HostPoint> points_;    // instants and counters not taken yet
  StepRecord outside_{false, {}, {}, {}, {}, {}};  // placed outside every step, not taken yet
  // Ranges pair across tracks: a start waiting for its end, or an end drained before its start.
  absl::flat_hash_map<uint64_t, HostOp> open_ranges_;
  struct EarlyEnd {
    int64_t ns;
    size_t track;
  };
  absl::flat_hash_map<uint64_t, EarlyEnd> early_range_ends_;

  const SessionLog *model_ = nullptr;
  const TickConverter *converter_ = nullptr;
  GpuLaunchIndex launches_;
  size_t next_activity_ = 0;
  size_t next_call_ = 0;
  size_t next_sync_ = 0;
  std::vector<size_t> pending_gpu_;    // activities not placed yet
  std::vector<size_t> pending_calls_;  // API calls not placed yet
  std::vector<size_t> pending_syncs_;  // synchronisations not placed yet
  // Returned by earlier calls, sorted by begin; those that ended kTakenStepMemoryNs before the
  // settled time are forgotten, and all but the latest kMaxRememberedSteps, so a long session
  // holds a list bounded in time and in steps (40 bytes each). GPU work arrives seconds after its
  // launch at most; a record launched in a forgotten step goes to the outside record (nothing is
  // lost, its step is).
  static constexpr int64_t kTakenStepMemoryNs = 60'000'000'000;
  std::vector<StepInterval> taken_;
  int64_t longest_taken_ns_ = 0;
  int64_t points_horizon_ = INT64_MIN;  // points before it may be taken
  uint64_t late_gpu_records_ = 0;
  uint64_t lost_records_ = 0;
};

}  // namespace tfprof
