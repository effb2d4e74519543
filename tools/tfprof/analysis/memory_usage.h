// What the summary says about memory: per device and source (runtime/model/memory_series.h), the
// peak of bytes in use and when, the peak in each step, the top-level host ops that hold the most
// at the peak, and the bytes over time in buckets for charts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/model/memory_series.h"
#include "runtime/model/trace.h"

namespace tfprof::cli {

struct MemoryStepPeak {
  int64_t number = 0;
  // The most bytes in use at any moment of the step: after any event in it, or as it began (the
  // last value before it).
  int64_t peak_bytes = 0;
};

struct MemoryOpBytes {
  std::string name;  // a top-level host op ("(no op)" for what was allocated outside any)
  int64_t bytes = 0;
};

// The bytes in use in one bucket of time: the most at any moment of it.
struct MemoryPoint {
  int64_t ns = 0;  // the bucket's start, on the trace's clock
  int64_t bytes = 0;
};

// How DeviceMemory::top_ops_at_peak was measured.
enum class PeakOpsBasis : uint8_t {
  kNone,        // the source names no ops (counters)
  kLiveBlocks,  // the blocks still allocated at the peak, by the op that allocated them
  kAllocatedInStep,  // no addresses: the bytes each op allocated in the peak's step (or, without
                     // steps, before the peak)
};

struct DeviceMemory {
  uint32_t process = 0;
  std::string process_name;
  int32_t device = -1;  // -1: host memory
  std::string label;    // MemorySeries::label
  std::string source;   // MemorySeries::source
  bool relative = false;  // MemorySeries::relative: counted from 0 at the first event
  uint64_t events = 0;
  int64_t peak_bytes = 0;
  int64_t peak_ns = 0;               // the first moment the peak was reached
  std::optional<int64_t> peak_step;  // the step number holding it
  std::vector<MemoryStepPeak> steps;  // the recording's steps, in time order
  PeakOpsBasis top_ops_basis = PeakOpsBasis::kNone;
  std::vector<MemoryOpBytes> top_ops_at_peak;  // most first, at most five
  std::vector<MemoryPoint> timeline;  // kMemoryTimelineBuckets buckets over the trace's events
};

inline constexpr size_t kMemoryTimelineBuckets = 200;
inline constexpr size_t kMemoryTopOps = 5;

// The memory figures of `series` (MemoryInUse(trace)); the timeline's buckets span
// [begin_ns, end_ns] (the trace's events).
std::vector<DeviceMemory> AnalyseMemory(const Trace &trace, const std::vector<MemorySeries> &series,
                                        int64_t begin_ns, int64_t end_ns);

// "live at the peak", "allocated in the peak's step", "" for kNone.
const char *PeakOpsBasisName(PeakOpsBasis basis);

}  // namespace tfprof::cli
