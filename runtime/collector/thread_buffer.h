// Everything one recording thread owns for one profiling session: its ring, its name cache, the
// state of its open spans and step, its loss counters, and who it is (OS thread id and name).
// A thread gets a fresh buffer on its first event of each session (sized by that session's
// options); the old one is handed to the collector, which drains and frees it.
//
// Writer-side fields are touched only by the owning thread. Counters that the collector reads are
// relaxed atomics with a single writer. Collector-side fields are touched only under the
// registry's drain lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <mutex>
#include "runtime/collector/ring.h"
#include "runtime/collector/span_stack.h"
#include "runtime/collector/thread_name_cache.h"

namespace tfprof {

// Increments a counter that only one thread writes: a plain load and store, no locked RMW.
inline void BumpSingleWriter(std::atomic<uint64_t> &counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

struct ThreadBuffer {
  ThreadBuffer(uint32_t ring_capacity, int64_t thread_id, uint64_t session_word)
      : generation(session_word), ring(ring_capacity), os_tid(thread_id) {}

  // The session word this buffer belongs to. It and the writer state after it share a cache line
  // with the ring's producer fields: the hot path touches as few lines as possible.
  const uint64_t generation;
  // Writer state, owner thread only.
  SpanStack spans;
  bool step_open = false;
  bool step_end_reserved = false;  // while an open step's begin is in the ring (its end's slot
                                   // is reserved)
  // Nonzero while the session traces the GPU: this thread's serial in the external ids its spans
  // push to CUPTI (SpanExternalId), and how many spans it has opened.
  uint32_t gpu_thread_serial = 0;
  uint32_t gpu_span_serial = 0;

  EventRing ring;
  ThreadNameCache names;

  // Identity. `os_tid` never changes; names are guarded by `name_mutex`.
  const int64_t os_tid;
  std::mutex name_mutex;
  std::string explicit_name;  // prof_set_thread_name()
  std::string os_name;        // refreshed by the collector

  // Counters for this session, single writer (the owner thread).
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> unmatched_span_ends{0};
  std::atomic<uint64_t> unmatched_step_ends{0};

  // Set when the owner exits or moves to a newer session's buffer: the owner never touches this
  // buffer again, so the collector drains it one last time and frees it.
  std::atomic<bool> retired{false};

  // Collector state (drain lock held): local name id -> global name id, and the model track this
  // thread's events go to.
  std::vector<uint32_t> global_name_ids;
  int32_t track_index = -1;
  std::string drain_scratch;
};

}  // namespace tfprof
