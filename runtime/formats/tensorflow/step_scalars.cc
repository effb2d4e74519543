#include "runtime/formats/tensorflow/step_scalars.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/model/memory_series.h"
#include "runtime/model/step_index.h"

namespace tfprof {
namespace {

// Sets `tag` to `value` in a step's list, or to the larger of the two with `keep_max`.
void Put(std::vector<std::pair<std::string, double>> &scalars, const std::string &tag,
         double value, bool keep_max) {
  for (auto &[known, old] : scalars) {
    if (known == tag) {
      old = keep_max ? std::max(old, value) : value;
      return;
    }
  }
  scalars.emplace_back(tag, value);
}

}  // namespace

std::vector<std::vector<std::pair<std::string, double>>> StepScalars(const Trace &trace) {
  std::vector<std::vector<std::pair<std::string, double>>> out(trace.steps.size());
  if (trace.steps.empty()) return out;
  for (size_t index = 0; index < trace.steps.size(); ++index) {
    const Step &step = trace.steps[index];
    out[index].emplace_back("tfprof/step_time_ms",
                            static_cast<double>(step.end_ns - step.begin_ns) / 1e6);
  }
  const StepIndex steps(trace);
  if (!trace.counters.empty()) {
    absl::flat_hash_map<std::pair<uint32_t, uint32_t>, std::string> tag_of;  // "" for memory
    for (const CounterSample &sample : trace.counters) {
      auto [tag, added] = tag_of.try_emplace(std::make_pair(sample.name, sample.series));
      if (added) {
        const std::string &name = trace.names.Get(sample.name);
        const std::string &series = trace.names.Get(sample.series);
        if (!IsMemoryCounter(name, series)) {
          tag->second = series == "value" ? absl::StrCat("tfprof/counter/", ToAbsl(name))
                                          : absl::StrCat("tfprof/counter/", ToAbsl(name), "/",
                                                         ToAbsl(series));
        }
      }
      if (tag->second.empty() || sample.track >= trace.tracks.size()) continue;
      const std::optional<size_t> step = steps.Find(trace.tracks[sample.track].process, sample.ns);
      // Samples come in time order per counter: the last one put is the step's last value.
      if (step) Put(out[*step], tag->second, sample.value, false);
    }
  }
  const std::vector<MemorySeries> memory = MemoryInUse(trace);
  for (const MemorySeries &series : memory) {
    if (series.samples.empty()) continue;
    // A label two sources share (a GPU's [memory] events and its CUPTI counter) names its source.
    bool shared = false;
    for (const MemorySeries &other : memory) {
      shared = shared || (&other != &series && other.label == series.label);
    }
    const std::string tag = absl::StrCat("tfprof/memory/", ToAbsl(series.label),
                                         shared ? absl::StrCat(" (", ToAbsl(series.source), ")")
                                                : std::string(),
                                         "/peak_bytes");
    // Every step of the series' recording gets its peak as `tfprof summary` counts it
    // (memory_usage.cc): bytes held as the step begins count, so a step that only frees, or
    // allocates nothing, still has a value. A GPU's series sits in its own process, the steps in
    // the host's: the recording (Process::group) joins them.
    const uint32_t group = steps.GroupOf(series.process);
    const int64_t initial = series.samples.front().bytes - series.samples.front().delta;
    for (size_t index = 0; index < trace.steps.size(); ++index) {
      const Step &step = trace.steps[index];
      if (steps.GroupOf(step.process) != group) continue;
      Put(out[index], tag,
          static_cast<double>(PeakBytesIn(series.samples, step.begin_ns, step.end_ns, initial)), true);
    }
  }
  return out;
}

}  // namespace tfprof
