#include "tools/tfprof/analysis/memory_usage.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "runtime/model/step_index.h"

namespace tfprof::cli {
namespace {

std::vector<MemoryOpBytes> TopOps(const Trace &trace,
                                  const absl::flat_hash_map<uint32_t, int64_t> &bytes_by_op) {
  std::vector<MemoryOpBytes> ops;
  for (const auto &[op, bytes] : bytes_by_op) {
    if (bytes <= 0) continue;
    ops.push_back(MemoryOpBytes{op == kNoName ? std::string("(no op)") : trace.names.Get(op),
                                bytes});
  }
  std::sort(ops.begin(), ops.end(), [](const MemoryOpBytes &a, const MemoryOpBytes &b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
  if (ops.size() > kMemoryTopOps) ops.resize(kMemoryTopOps);
  return ops;
}

// The blocks allocated and not yet released when the sample at `peak` was applied, summed by the
// top-level op that allocated them. Blocks allocated before the trace began are not known.
absl::flat_hash_map<uint32_t, int64_t> LiveAtPeak(const std::vector<MemorySample> &samples,
                                                  size_t peak) {
  struct Block {
    int64_t bytes;
    uint32_t op;
  };
  absl::flat_hash_map<uint64_t, Block> live;
  for (size_t index = 0; index <= peak; ++index) {
    const MemorySample &sample = samples[index];
    if (sample.address == 0) continue;
    if (sample.delta > 0) {
      live[sample.address] = Block{sample.delta, sample.top_op};
    } else if (sample.delta < 0) {
      live.erase(sample.address);
    }
  }
  absl::flat_hash_map<uint32_t, int64_t> by_op;
  for (const auto &[address, block] : live) by_op[block.op] += block.bytes;
  return by_op;
}

std::vector<MemoryPoint> Buckets(const std::vector<MemorySample> &samples, int64_t initial,
                                 int64_t begin_ns, int64_t end_ns) {
  const int64_t span = std::max<int64_t>(end_ns - begin_ns, 0) + 1;
  const int64_t buckets = static_cast<int64_t>(kMemoryTimelineBuckets);
  const int64_t width = std::max<int64_t>((span + buckets - 1) / buckets, 1);
  std::vector<MemoryPoint> points;
  size_t next = 0;
  int64_t level = initial;
  for (int64_t start = begin_ns; start <= end_ns; start += width) {
    // Samples before the first bucket set the level it starts from.
    while (next < samples.size() && samples[next].ns < start) level = samples[next++].bytes;
    int64_t most = level;
    while (next < samples.size() && samples[next].ns < start + width) {
      level = samples[next++].bytes;
      most = std::max(most, level);
    }
    points.push_back(MemoryPoint{start, most});
  }
  return points;
}

}  // namespace

const char *PeakOpsBasisName(PeakOpsBasis basis) {
  switch (basis) {
    case PeakOpsBasis::kLiveBlocks:
      return "live at the peak";
    case PeakOpsBasis::kAllocatedInStep:
      return "allocated in the peak's step";
    case PeakOpsBasis::kNone:
      break;
  }
  return "";
}

std::vector<DeviceMemory> AnalyseMemory(const Trace &trace, const std::vector<MemorySeries> &series,
                                        int64_t begin_ns, int64_t end_ns) {
  std::vector<DeviceMemory> devices;
  if (series.empty()) return devices;
  const StepIndex step_index(trace);
  for (const MemorySeries &one : series) {
    const std::vector<MemorySample> &samples = one.samples;
    if (samples.empty()) continue;
    DeviceMemory device;
    device.process = one.process;
    if (one.process < trace.processes.size()) {
      device.process_name = trace.processes[one.process].name;
    }
    device.device = one.device;
    device.label = one.label;
    device.source = one.source;
    device.relative = one.relative;
    device.events = samples.size();
    const int64_t initial = samples.front().bytes - samples.front().delta;

    size_t peak = 0;
    for (size_t index = 1; index < samples.size(); ++index) {
      if (samples[index].bytes > samples[peak].bytes) peak = index;
    }
    device.peak_bytes = samples[peak].bytes;
    device.peak_ns = samples[peak].ns;

    const uint32_t group = step_index.GroupOf(one.process);
    std::optional<size_t> peak_step = step_index.FindInGroup(group, device.peak_ns);
    if (peak_step) device.peak_step = trace.steps[*peak_step].number;
    for (const Step &step : trace.steps) {
      if (step_index.GroupOf(step.process) != group) continue;
      device.steps.push_back(
          MemoryStepPeak{step.number, PeakBytesIn(samples, step.begin_ns, step.end_ns, initial)});
    }

    if (one.kind == MemorySource::kPytorchMemoryEvents) {
      absl::flat_hash_map<uint32_t, int64_t> by_op;
      if (one.has_addresses) {
        device.top_ops_basis = PeakOpsBasis::kLiveBlocks;
        by_op = LiveAtPeak(samples, peak);
      } else {
        device.top_ops_basis = PeakOpsBasis::kAllocatedInStep;
        const int64_t from = peak_step ? trace.steps[*peak_step].begin_ns : INT64_MIN;
        const int64_t until = peak_step ? trace.steps[*peak_step].end_ns : device.peak_ns + 1;
        for (const MemorySample &sample : samples) {
          if (sample.delta > 0 && sample.ns >= from && sample.ns < until) {
            by_op[sample.top_op] += sample.delta;
          }
        }
      }
      device.top_ops_at_peak = TopOps(trace, by_op);
    }
    device.timeline = Buckets(samples, initial, begin_ns, end_ns);
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace tfprof::cli
