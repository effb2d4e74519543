// The counters a trace holds that are not about memory (tfprof.counter("loss", ...), PyTorch's
// and Perfetto's counter tracks): each one's values over the trace, for the summary's table and
// the report's charts. Memory counters are the Memory section's (memory_usage.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof::cli {

// Points of a counter's timeline: the trace's extent cut into this many slices.
inline constexpr size_t kCounterTimelineBuckets = 200;

// A slice's lowest and highest value: a chart of a slice's highest only would hide a counter's
// dips (a queue that drains between fills), one of every sample would not stay small.
struct CounterPoint {
  int64_t ns = 0;  // the slice's start (the trace's clock)
  double value = 0;  // the highest value sampled in the slice
  double min = 0;    // the lowest
  bool min_first = false;  // the lowest was sampled before the highest
};

struct CounterSeries {
  std::string name;     // the counter's
  std::string series;   // the value's name within it ("value" for a plain counter)
  std::string process;  // its process's name (several processes: who recorded it)
  uint32_t process_index = 0;  // in Trace::processes
  uint64_t samples = 0;
  double min = 0;
  double max = 0;
  double last = 0;  // the last sample's value
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  std::vector<CounterPoint> timeline;  // slices with samples only, in time order
};

// One series per (process, counter, series) that is not a memory counter (IsMemoryCounter), in
// the order of their first sample; timelines over [begin_ns, end_ns).
std::vector<CounterSeries> SummarizeCounters(const Trace &trace, int64_t begin_ns,
                                             int64_t end_ns);

}  // namespace tfprof::cli
