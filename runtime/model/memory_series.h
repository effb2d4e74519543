// Bytes allocated over time per device, derived from whatever a trace holds about memory: the
// PyTorch profiler's "[memory]" events, the GPU memory counter tfprof makes of CUPTI's allocation
// records, TensorFlow's allocator statistics (kept as counters by the StepStats reader) and other
// counters the file names as memory. The one place that reads memory out of a Trace: the summary,
// the report and the event-file scalars all start here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof {

// The counter series under which readers keep an allocator's bytes in use (TensorFlow's
// AllocatorMemoryUsed.allocator_bytes_in_use), one counter per allocator, named as it.
inline constexpr std::string_view kAllocatorBytesInUseSeries = "allocator bytes in use";

// One change of the bytes in use on a device.
struct MemorySample {
  int64_t ns = 0;     // on the trace's clock
  int64_t bytes = 0;  // bytes in use after the event
  int64_t delta = 0;  // what the event allocated (negative: released)
  uint32_t track = 0;  // Trace::tracks: the thread that allocated, or the counter's row
  // Trace::names: the innermost host op open on `track` at `ns`, and the outermost one (the
  // top-level op, as torch.profiler's tables list them); kNoName when none is open or the source
  // has no thread (counters).
  uint32_t op = kNoName;
  uint32_t top_op = kNoName;
  uint64_t address = 0;  // the block allocated or released, where the source says (0: unknown)
};

// Where a series' figures come from (MemorySeries::source says it in words).
enum class MemorySource : uint8_t {
  kPytorchMemoryEvents,   // "[memory] events"
  kCuptiAllocations,      // "CUPTI allocations": tfprof's "GPU memory" counter
  kAllocatorStatistics,   // "allocator statistics": TensorFlow's per-allocator bytes in use
  kCounter,               // "counter NAME": another counter about memory
};

// One device's (or the host's) bytes in use over time, from one source.
struct MemorySeries {
  uint32_t process = 0;  // Trace::processes
  int32_t device = -1;   // the GPU's index; -1: host memory
  std::string label;     // "GPU 0", "CPU"; for allocator statistics the allocator ("GPU_0_bfc")
  std::string source;    // "[memory] events", "CUPTI allocations", "allocator statistics",
                         // "counter NAME"
  MemorySource kind = MemorySource::kPytorchMemoryEvents;
  // The file gives no totals (PyTorch before 1.10 wrote only each event's "Bytes"): `bytes`
  // counts from 0 at the first event, so it is what was allocated since then, not what was in use.
  bool relative = false;
  bool has_addresses = false;  // samples carry the blocks' addresses (live blocks can be followed)
  std::vector<MemorySample> samples;  // in time order
};

// The most bytes in use in [begin_ns, end_ns) of a series' `samples` (time order): as the window
// begins (the last sample before it, else `initial`, the level the series started from) or after
// any sample in it. The one rule for a step's memory peak: `tfprof summary`'s and the event
// files' step scalars.
int64_t PeakBytesIn(const std::vector<MemorySample> &samples, int64_t begin_ns, int64_t end_ns,
                    int64_t initial);

// Whether a counter (its name and series, as Trace::names hold them) is about memory, and so one
// of MemoryInUse()'s series: CUPTI's allocations, an allocator's bytes in use, or a name or series
// that says "memory" or "bytes". The report draws the other counters on their own.
bool IsMemoryCounter(std::string_view name, std::string_view series);

// Every memory series `trace` holds, ordered by process, then host before GPUs, then device and
// source. Empty, at the cost of one look at the names and the counters, when the trace holds
// nothing about memory.
std::vector<MemorySeries> MemoryInUse(const Trace &trace);

}  // namespace tfprof
