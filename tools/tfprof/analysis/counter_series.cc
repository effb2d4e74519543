#include "tools/tfprof/analysis/counter_series.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "runtime/model/memory_series.h"

namespace tfprof::cli {
namespace {

// A later sample of a slice: a new highest comes after the lowest, a new lowest after the highest.
void Take(CounterPoint &point, double value) {
  if (value > point.value) {
    point.value = value;
    point.min_first = true;
  } else if (value < point.min) {
    point.min = value;
    point.min_first = false;
  }
}

}  // namespace

std::vector<CounterSeries> SummarizeCounters(const Trace &trace, int64_t begin_ns,
                                             int64_t end_ns) {
  std::vector<CounterSeries> out;
  if (trace.counters.empty()) return out;
  // Whether each (name, series) pair is about memory, decided once per pair.
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, bool> memory;
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> index_of;
  const double span = static_cast<double>(std::max<int64_t>(end_ns - begin_ns, 1));
  for (const CounterSample &sample : trace.counters) {
    auto [pair, new_pair] = memory.try_emplace(std::make_pair(sample.name, sample.series), false);
    if (new_pair) {
      pair->second =
          IsMemoryCounter(trace.names.Get(sample.name), trace.names.Get(sample.series));
    }
    if (pair->second) continue;
    const uint32_t process =
        sample.track < trace.tracks.size() ? trace.tracks[sample.track].process : 0;
    auto [found, added] =
        index_of.try_emplace(std::make_tuple(process, sample.name, sample.series), out.size());
    if (added) {
      CounterSeries series;
      series.name = trace.names.Get(sample.name);
      series.series = trace.names.Get(sample.series);
      series.process_index = process;
      if (process < trace.processes.size()) series.process = trace.processes[process].name;
      series.min = series.max = sample.value;
      series.first_ns = sample.ns;
      out.push_back(std::move(series));
    }
    CounterSeries &series = out[found->second];
    ++series.samples;
    series.min = std::min(series.min, sample.value);
    series.max = std::max(series.max, sample.value);
    // Samples come in time order per counter; a file that breaks it still gets its latest value.
    if (sample.ns >= series.last_ns) {
      series.last = sample.value;
      series.last_ns = sample.ns;
    }
    const auto bucket = static_cast<int64_t>(
        std::clamp(static_cast<double>(sample.ns - begin_ns) / span *
                       static_cast<double>(kCounterTimelineBuckets),
                   0.0, static_cast<double>(kCounterTimelineBuckets - 1)));
    const int64_t bucket_ns =
        begin_ns + static_cast<int64_t>(span * static_cast<double>(bucket) /
                                        static_cast<double>(kCounterTimelineBuckets));
    if (!series.timeline.empty() && series.timeline.back().ns == bucket_ns) {
      Take(series.timeline.back(), sample.value);
    } else {
      series.timeline.push_back(CounterPoint{bucket_ns, sample.value, sample.value, false});
    }
  }
  for (CounterSeries &series : out) {
    // Out-of-order samples can leave a slice twice: merge them, in time order.
    std::stable_sort(series.timeline.begin(), series.timeline.end(),
                     [](const CounterPoint &a, const CounterPoint &b) { return a.ns < b.ns; });
    std::vector<CounterPoint> merged;
    for (const CounterPoint &point : series.timeline) {
      if (!merged.empty() && merged.back().ns == point.ns) {
        // The later part's extremes, in the order it saw them.
        Take(merged.back(), point.min_first ? point.min : point.value);
        Take(merged.back(), point.min_first ? point.value : point.min);
      } else {
        merged.push_back(point);
      }
    }
    series.timeline = std::move(merged);
  }
  return out;
}

}  // namespace tfprof::cli
