// What keeps a session's collected records within its options: the keep= window (eviction) and
// max_memory_mb (spilling, and dropping what the spill writer cannot take). The collector calls
// these under the model lock; they never touch the hot path.
#pragma once

#include <cstdint>

#include "runtime/session/session_log.h"

namespace tfprof {

// How far spill writes may fall behind (and then wait) with a memory limit of `max_memory_mb`:
// a quarter of the limit, and at least a few of the largest chunks (1.5 MiB).
int64_t WriterSlackBytes(uint32_t max_memory_mb);

// Evicts, for good and counted, every record that started before `threshold_ticks`: host events
// exactly, GPU records up to the first one inside the window (they arrive roughly in time order).
void EvictBefore(SessionLog &model, uint64_t threshold_ticks);

// With a streamed output: once what the session holds passes its limit (0: none), lets go of the
// records the output already holds (`written`: TraceStream::Written()), host events and GPU
// records, counted in the store's records_released, so that they are neither kept nor spilled a
// second time. Exports then read them back from the output.
void ReleaseWrittenRecords(SessionLog &model, uint32_t max_memory_mb, const LogPositions &written);

// Frees chunks whose spill writes are done; then, with a limit (0: none), spills the oldest chunks
// until what stays in memory (writes in flight and the chunk each live thread appends to aside)
// is within it, and drops, counted, the oldest chunks waiting beyond the writer's slack.
void EnforceMemoryLimit(SessionLog &model, uint32_t max_memory_mb);

// Which one-time warnings about the spill file a session has given.
struct SpillWarnings {
  bool cannot_spill = false;
  bool in_memory = false;
  bool writer_behind = false;
  bool out_of_memory = false;
};

// Prints, once per session each, why records are dropped or memory is not saved.
void WarnAboutSpilling(const ChunkStore &store, uint32_t max_memory_mb, SpillWarnings &given);

// Prints, once per session, that records were dropped because memory ran out (a chunk, a name,
// a thread's row or buffer could not be allocated), where no spill failure explains them.
void WarnAboutMemoryDrops(const ChunkStore &store, uint64_t events_without_buffer,
                          SpillWarnings &given);

}  // namespace tfprof
