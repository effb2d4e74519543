#include "runtime/model/memory_series.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/model/event_args.h"

namespace tfprof {
namespace {

constexpr std::string_view kMemoryEventName = "[memory]";
// tfprof's counter of CUPTI's allocation records (runtime/export/session_trace.cc).
constexpr std::string_view kCuptiMemoryName = "GPU memory";
constexpr std::string_view kCuptiMemorySeries = "bytes in use";

// PyTorch's c10::DeviceType: 0 is the CPU; the others (CUDA 1, HIP 6, ...) are accelerators.
constexpr int64_t kPytorchCpu = 0;

std::string DeviceLabel(int32_t device) {
  return device < 0 ? std::string("CPU") : absl::StrCat("GPU ", device);
}

// What a [memory] event's args say ("Bytes", "Total Allocated", ...), as numbers.
struct MemoryEventArgs {
  std::optional<int64_t> bytes;
  std::optional<int64_t> total_allocated;
  int64_t device_type = kPytorchCpu;
  int64_t device_id = -1;
  uint64_t address = 0;
};

std::optional<int64_t> NumberOf(std::string_view value) {
  int64_t integer = 0;
  if (absl::SimpleAtoi(ToAbsl(value), &integer)) return integer;
  double real = 0;
  if (absl::SimpleAtod(ToAbsl(value), &real) && std::isfinite(real)) {
    return static_cast<int64_t>(real);
  }
  return std::nullopt;
}

MemoryEventArgs ParseMemoryArgs(std::string_view members) {
  MemoryEventArgs args;
  ForEachFileArg(members, [&](std::string_view member, EventArg) {
    const size_t colon = member.find("\":");
    if (member.empty() || member.front() != '"' || colon == std::string_view::npos) return;
    const std::string_view key = member.substr(1, colon - 1);
    const std::optional<int64_t> value = NumberOf(member.substr(colon + 2));
    if (!value) return;
    if (key == "Bytes") {
      args.bytes = *value;
    } else if (key == "Total Allocated") {
      args.total_allocated = *value;
    } else if (key == "Device Type") {
      args.device_type = *value;
    } else if (key == "Device Id") {
      args.device_id = *value;
    } else if (key == "Addr") {
      args.address = static_cast<uint64_t>(*value);
    }
  });
  return args;
}

std::optional<uint32_t> FindName(const Trace &trace, std::string_view name) {
  for (uint32_t index = 0; index < trace.names.size(); ++index) {
    if (trace.names.Get(index) == name) return index;
  }
  return std::nullopt;
}

// Fills MemorySample::op and top_op of `samples` (all of them [memory] events) from the host ops
// open on each sample's thread: one sweep per thread over its ops in nesting order.
void AttributeToOps(const Trace &trace, std::vector<MemorySample *> &samples) {
  // The host ops of the threads that allocate. A thread is a process and a thread id; a file
  // that wrote a thread's id as a number on some events and as text on others (Kineto 1.9: "tid":
  // 25738 on [memory] events, "25738" on ops) has two rows for it: the text one has an id of the
  // reader's own (negative) and is named "thread 25738 (python)" by the file.
  const auto thread_of = [&](uint32_t track) {
    const Track &row = trace.tracks[track];
    if (row.tid >= 0) return std::pair(row.process, row.tid);
    std::string_view name = row.name;
    if (name.rfind("thread ", 0) == 0) name.remove_prefix(7);
    int64_t tid = 0;
    if (absl::SimpleAtoi(ToAbsl(name.substr(0, name.find(' '))), &tid)) {
      return std::pair(row.process, tid);
    }
    return std::pair(row.process, row.tid);
  };
  absl::flat_hash_map<std::pair<uint32_t, int64_t>, uint32_t> thread_index;
  for (const MemorySample *sample : samples) {
    thread_index.try_emplace(thread_of(sample->track), static_cast<uint32_t>(thread_index.size()));
  }
  // Each track's thread among those that allocate (kNoTrack: none).
  std::vector<uint32_t> allocating_thread(trace.tracks.size(), kNoTrack);
  for (uint32_t track = 0; track < trace.tracks.size(); ++track) {
    auto found = thread_index.find(thread_of(track));
    if (found != thread_index.end()) allocating_thread[track] = found->second;
  }
  std::vector<std::vector<uint32_t>> ops_of(thread_index.size());
  for (size_t index = 0; index < trace.activities.size(); ++index) {
    const Activity &activity = trace.activities[index];
    if (activity.kind == ActivityKind::kHostOp && allocating_thread[activity.track] != kNoTrack) {
      ops_of[allocating_thread[activity.track]].push_back(static_cast<uint32_t>(index));
    }
  }
  std::sort(samples.begin(), samples.end(), [&](const MemorySample *a, const MemorySample *b) {
    return std::make_pair(allocating_thread[a->track], a->ns) <
           std::make_pair(allocating_thread[b->track], b->ns);
  });
  std::vector<uint32_t> open;  // activities, outermost first
  size_t next_op = 0;
  uint32_t current_thread = kNoTrack;
  for (MemorySample *sample : samples) {
    const uint32_t thread = allocating_thread[sample->track];
    std::vector<uint32_t> &ops = ops_of[thread];
    if (thread != current_thread) {
      current_thread = thread;
      SortEnclosingFirst(trace.activities, ops);
      open.clear();
      next_op = 0;
    }
    const auto close_ended = [&](int64_t ns) {
      while (!open.empty() && trace.activities[open.back()].end_ns <= ns) open.pop_back();
    };
    while (next_op < ops.size() && trace.activities[ops[next_op]].begin_ns <= sample->ns) {
      close_ended(trace.activities[ops[next_op]].begin_ns);
      open.push_back(ops[next_op++]);
    }
    close_ended(sample->ns);  // an op holds the moments in [begin, end)
    if (!open.empty()) {
      sample->op = trace.activities[open.back()].name;
      sample->top_op = trace.activities[open.front()].name;
    }
  }
}

// The [memory] events of `trace` (PyTorch's profile_memory), one series per process and device.
void AddPytorchSeries(const Trace &trace, uint32_t memory_name, std::vector<MemorySeries> &out) {
  struct Key {
    uint32_t process;
    int64_t device_type;
    int64_t device_id;
  };
  std::vector<Key> keys;
  std::vector<MemorySeries> series;
  std::vector<std::vector<std::optional<int64_t>>> totals;  // per series, per sample
  for (const Activity &activity : trace.activities) {
    if (activity.name != memory_name || activity.kind != ActivityKind::kInstant) continue;
    const MemoryEventArgs args = ParseMemoryArgs(FileArgsOf(trace, activity));
    if (!args.bytes && !args.total_allocated) continue;
    const uint32_t process = trace.tracks[activity.track].process;
    const int64_t type = args.device_type;
    const int64_t id = type == kPytorchCpu ? -1 : args.device_id;
    size_t which = 0;
    while (which < keys.size() && !(keys[which].process == process &&
                                    (keys[which].device_type == kPytorchCpu) ==
                                        (type == kPytorchCpu) &&
                                    keys[which].device_id == id)) {
      ++which;
    }
    if (which == keys.size()) {
      keys.push_back(Key{process, type, id});
      MemorySeries made;
      made.process = process;
      made.device = static_cast<int32_t>(std::max<int64_t>(id, -1));
      made.label = DeviceLabel(made.device);
      made.source = "[memory] events";
      made.kind = MemorySource::kPytorchMemoryEvents;
      series.push_back(std::move(made));
      totals.emplace_back();
    }
    MemorySample sample;
    sample.ns = activity.begin_ns;
    sample.delta = args.bytes.value_or(0);
    sample.track = activity.track;
    sample.address = args.address;
    if (args.address != 0) series[which].has_addresses = true;
    series[which].samples.push_back(sample);
    totals[which].push_back(args.total_allocated);
  }
  std::vector<MemorySample *> all;
  for (size_t which = 0; which < series.size(); ++which) {
    MemorySeries &one = series[which];
    // Time order; events at one time keep the file's order (the allocator's).
    std::vector<uint32_t> order(one.samples.size());
    for (uint32_t index = 0; index < order.size(); ++index) order[index] = index;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return one.samples[a].ns < one.samples[b].ns;
    });
    std::vector<MemorySample> sorted;
    sorted.reserve(order.size());
    one.relative = std::any_of(totals[which].begin(), totals[which].end(),
                               [](const std::optional<int64_t> &total) { return !total; });
    int64_t running = 0;
    for (uint32_t index : order) {
      MemorySample sample = one.samples[index];
      running += sample.delta;
      sample.bytes = one.relative ? running : *totals[which][index];
      sorted.push_back(sample);
    }
    one.samples = std::move(sorted);
    for (MemorySample &sample : one.samples) all.push_back(&sample);
  }
  AttributeToOps(trace, all);
  for (MemorySeries &one : series) out.push_back(std::move(one));
}

// The GPU a row belongs to: its own device, else its process's name ("GPU 3", a merge's
// "rank 1 · GPU 3", "GPU 3 (NVIDIA H200)"); -1 for the host.
int32_t DeviceOfRow(const Trace &trace, const Track &row) {
  if (row.device >= 0) return row.device;
  if (row.process < trace.processes.size()) {
    const std::string_view name = trace.processes[row.process].name;
    const size_t gpu = name.rfind("GPU ");
    if (gpu == std::string_view::npos) return -1;
    const std::string_view rest = name.substr(gpu + 4);
    const size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
    int32_t device = 0;
    if (digits > 0 && absl::SimpleAtoi(ToAbsl(rest.substr(0, digits)), &device)) return device;
  }
  return -1;
}

// TensorFlow's allocator names say their device: "GPU_0_bfc", "gpu_host_bfc", "cpu".
int32_t DeviceOfAllocator(std::string_view allocator) {
  int32_t device = 0;
  if (allocator.rfind("GPU_", 0) == 0) {
    const std::string_view rest = allocator.substr(4);
    if (absl::SimpleAtoi(ToAbsl(rest.substr(0, rest.find('_'))), &device)) return device;
  }
  return -1;
}

bool SaysMemory(std::string_view text) {
  const std::string lower = absl::AsciiStrToLower(ToAbsl(text));
  return absl::StrContains(lower, "memory") || absl::StrContains(lower, "bytes");
}

}  // namespace

int64_t PeakBytesIn(const std::vector<MemorySample> &samples, int64_t begin_ns, int64_t end_ns,
                    int64_t initial) {
  auto at = std::lower_bound(
      samples.begin(), samples.end(), begin_ns,
      [](const MemorySample &sample, int64_t value) { return sample.ns < value; });
  int64_t peak = at == samples.begin() ? initial : std::prev(at)->bytes;
  for (; at != samples.end() && at->ns < end_ns; ++at) peak = std::max(peak, at->bytes);
  return peak;
}

bool IsMemoryCounter(std::string_view name, std::string_view series) {
  return (name == kCuptiMemoryName && series == kCuptiMemorySeries) ||
         series == kAllocatorBytesInUseSeries || SaysMemory(name) || SaysMemory(series);
}

namespace {

// Counters about memory: CUPTI's allocations, TensorFlow's allocators, and other counters whose
// name or series says memory or bytes. One series per counter row, name and series.
void AddCounterSeries(const Trace &trace, std::vector<MemorySeries> &out) {
  // Each counter's class, decided once per (name, series) pair.
  enum Class : uint8_t { kUnknown, kNotMemory, kCupti, kAllocator, kOther };
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, Class> classes;
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> series_of;
  std::vector<MemorySeries> series;
  for (const CounterSample &counter : trace.counters) {
    Class &kind = classes[{counter.name, counter.series}];
    if (kind == kUnknown) {
      const std::string &name = trace.names.Get(counter.name);
      const std::string &value = trace.names.Get(counter.series);
      kind = !IsMemoryCounter(name, value)                                   ? kNotMemory
             : name == kCuptiMemoryName && value == kCuptiMemorySeries ? kCupti
             : value == kAllocatorBytesInUseSeries                     ? kAllocator
                                                                       : kOther;
    }
    if (kind == kNotMemory) continue;
    auto [found, added] =
        series_of.try_emplace(std::make_tuple(counter.track, counter.name, counter.series),
                              series.size());
    if (added) {
      const Track &row = trace.tracks[counter.track];
      const std::string &name = trace.names.Get(counter.name);
      MemorySeries made;
      made.process = row.process;
      made.device = kind == kAllocator ? DeviceOfAllocator(name) : DeviceOfRow(trace, row);
      if (kind == kAllocator && made.device < 0) made.device = DeviceOfRow(trace, row);
      made.label = kind == kAllocator ? name : DeviceLabel(made.device);
      made.kind = kind == kCupti       ? MemorySource::kCuptiAllocations
                  : kind == kAllocator ? MemorySource::kAllocatorStatistics
                                       : MemorySource::kCounter;
      made.source = kind == kCupti       ? std::string("CUPTI allocations")
                    : kind == kAllocator ? std::string("allocator statistics")
                                         : absl::StrCat("counter ", name);
      if (kind == kOther && trace.names.Get(counter.series) != "value") {
        absl::StrAppend(&made.source, " ", trace.names.Get(counter.series));
      }
      series.push_back(std::move(made));
    }
    MemorySample sample;
    sample.ns = counter.ns;
    sample.bytes = static_cast<int64_t>(std::llround(counter.value));
    sample.track = counter.track;
    series[found->second].samples.push_back(sample);
  }
  for (MemorySeries &one : series) {
    std::stable_sort(one.samples.begin(), one.samples.end(),
                     [](const MemorySample &a, const MemorySample &b) { return a.ns < b.ns; });
    int64_t previous = 0;
    for (MemorySample &sample : one.samples) {
      sample.delta = sample.bytes - previous;
      previous = sample.bytes;
    }
    out.push_back(std::move(one));
  }
}

}  // namespace

std::vector<MemorySeries> MemoryInUse(const Trace &trace) {
  std::vector<MemorySeries> series;
  if (const std::optional<uint32_t> memory_name = FindName(trace, kMemoryEventName)) {
    AddPytorchSeries(trace, *memory_name, series);
  }
  if (!trace.counters.empty()) AddCounterSeries(trace, series);
  std::stable_sort(series.begin(), series.end(), [](const MemorySeries &a, const MemorySeries &b) {
    return std::make_tuple(a.process, a.device, static_cast<int>(a.kind)) <
           std::make_tuple(b.process, b.device, static_cast<int>(b.kind));
  });
  return series;
}

}  // namespace tfprof
