// Knows when the GPU side of a stretch of time is complete: every launch call made before then
// has its GPU work in the trace (or waited past the session's limit for it), so a step's output
// can be written without losing kernels that run after prof_end_step() returned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "runtime/collector/clock.h"
#include "runtime/gpu/gpu_trace.h"

namespace tfprof {

class GpuSettling {
 public:
  // Reads the records appended to `trace` since the last call.
  void Advance(const GpuTrace &trace, const TickConverter &converter);

  // The time before which the GPU records are complete: the earliest launch still waiting for
  // its GPU work, bounded by `flushed_through_ns` (the start of the last forced CUPTI flush:
  // every call that returned before it has been delivered). Launches that waited longer than
  // `wait_ns` by `now_ns` stop holding steps back (their work may have been dropped; CUPTI
  // counts drops).
  int64_t CompleteThroughNs(int64_t flushed_through_ns, int64_t now_ns, int64_t wait_ns);

  // Launch calls whose GPU work has not arrived.
  size_t waiting() const { return waiting_launches_.size(); }

 private:
  size_t calls_seen_ = 0;
  size_t activities_seen_ = 0;
  absl::flat_hash_map<uint32_t, int64_t> waiting_launches_;  // correlation -> call start ns
  // Work whose launch call has not arrived yet (CUPTI may deliver them in either order), with
  // the work's start, so a call that never arrives is forgotten in time.
  absl::flat_hash_map<uint32_t, int64_t> early_activities_;
};

}  // namespace tfprof
