// Ties each GPU activity to the host: the API call that launched it (by CUPTI's correlation id),
// the innermost host span open on the launching thread (by the external id that span pushed), and
// the step it belongs to, which is the step its launch call ran in, so work that runs after
// prof_end_step() returned still counts for the step that launched it.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/collector/clock.h"
#include "runtime/session/steps.h"
#include "runtime/session/session_log.h"

namespace tfprof {

// A host span as a GPU activity's launching op.
struct LaunchingOp {
  uint32_t name = 0;  // host NameTable id
  size_t track = 0;
  int64_t begin_ns = 0;
};

// The correlation maps, grown as records arrive, for readers that follow a running session (the
// per-step file writer) as well as for the whole-model join below.
class GpuLaunchIndex {
 public:
  // Reads the API calls, external correlations and host span begins appended since the last call.
  void Advance(const SessionLog &model, const TickConverter &converter);

  // The launch call (launches_work) with this correlation id, or null.
  const GpuApiCall *CallOf(const SessionLog &model, uint32_t correlation) const;
  // The external id CUPTI reported for this correlation id, or 0.
  uint64_t ExternalIdOf(uint32_t correlation) const;
  // The span that pushed `external_id`, or null. The pointer is valid until the next Advance().
  const LaunchingOp *OpOfExternal(uint64_t external_id) const;
  // How many of `track`'s events (from its first) have been indexed: 0 until the first external
  // id arrives, since host-only sessions' spans are not walked.
  size_t IndexedEvents(size_t track) const {
    return track < next_event_.size() ? next_event_[track] : 0;
  }
  // How many external correlation records have been read (their ids are kept here).
  size_t IndexedLinks() const { return next_link_; }

 private:
  size_t next_call_ = 0;
  size_t next_link_ = 0;
  std::vector<size_t> next_event_;  // per track
  absl::flat_hash_map<uint32_t, size_t> launch_calls_;    // correlation -> api_calls index
  absl::flat_hash_map<uint32_t, uint64_t> external_ids_;  // correlation -> external id
  absl::flat_hash_map<uint64_t, LaunchingOp> ops_;        // external id -> span
};

struct GpuLaunch {
  const GpuApiCall *call = nullptr;  // null when CUPTI's API record was not collected
  const LaunchingOp *op = nullptr;   // null when no tfprof span was open at the launch
  uint64_t external_id = 0;          // 0 when CUPTI reported none
  int64_t launch_ns = 0;  // the call's start; without a call, the op's begin or the work's start
  const StepInterval *step = nullptr;  // null: launched outside every step
};

// The launch of `activity` as far as `index` knows it; `step` is left null.
GpuLaunch FindLaunch(const GpuLaunchIndex &index, const SessionLog &model,
                     const TickConverter &converter, const GpuActivity &activity);

// The join over a whole (stopped or snapshotted) model.
class GpuJoin {
 public:
  // `steps` must outlive the join (CollectSteps() of the same model).
  GpuJoin(const SessionLog &model, const TickConverter &converter,
          const std::vector<StepInterval> &steps);

  GpuLaunch LaunchOf(const GpuActivity &activity) const;

  // The call's step (by its start time), for API rows and per-step output.
  const StepInterval *StepOf(const GpuApiCall &call) const;

  // The step running at `ns` (syncs, which have no launch).
  const StepInterval *StepAt(int64_t ns) const { return steps_.Find(ns); }

  uint64_t ExternalIdOf(uint32_t correlation) const { return index_.ExternalIdOf(correlation); }

 private:
  const SessionLog &model_;
  const TickConverter &converter_;
  StepLookup steps_;
  GpuLaunchIndex index_;
};

}  // namespace tfprof
