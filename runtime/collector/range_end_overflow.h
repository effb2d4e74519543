// Where a range end goes when the ending thread's ring is full.
//
// A range may end on another thread than the one that started it, so its end cannot have a slot
// reserved in advance the way a span's end has. Dropping it would keep the start and show the
// range running to the end of the session. Instead the end goes to this shared, bounded,
// lock-free queue (any thread pushes, the collector pops), and the collector files it on the
// ending thread's row. Only when this queue is full too is the end dropped, and counted.
#pragma once

#include <atomic>
#include <cstdint>

namespace tfprof {

struct OverflowRangeEnd {
  uint64_t generation = 0;  // the session word when it was recorded
  uint64_t ticks = 0;
  uint64_t range_id = 0;
  int64_t os_tid = 0;  // the ending thread
};

// Any thread, lock-free and allocation-free: false when the queue is full.
bool PushOverflowRangeEnd(const OverflowRangeEnd &end);

// The collector (one consumer at a time): takes the oldest end, false when none is ready.
bool PopOverflowRangeEnd(OverflowRangeEnd *end);

// In a fork() child, where no other thread exists: empties the queue (a push the fork cut in
// half would block it for good).
void ResetOverflowRangeEndsAfterFork();

}  // namespace tfprof
