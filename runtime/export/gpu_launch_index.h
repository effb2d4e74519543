// Ties each GPU activity to the host, as the session's records arrive: the API call that launched it
// (by CUPTI's correlation id) and the innermost host span open on the launching thread (by the
// external id that span pushed). The step partitioner asks it for each activity's launch.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/collector/clock.h"
#include "runtime/session/session_log.h"

namespace tfprof {

// A host span as a GPU activity's launching op.
struct LaunchingOp {
  uint32_t name = 0;  // host NameTable id
  size_t track = 0;
  int64_t begin_ns = 0;
};

// The correlation maps, grown as records arrive.
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

}  // namespace tfprof
