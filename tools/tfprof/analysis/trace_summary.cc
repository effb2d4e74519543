#include "tools/tfprof/analysis/trace_summary.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "runtime/model/step_index.h"
#include "tools/tfprof/analysis/diagnosis.h"
#include "tools/tfprof/analysis/intervals.h"
#include "tools/tfprof/analysis/median.h"
#include "tools/tfprof/analysis/op_classes.h"

namespace tfprof::cli {
namespace {

bool IsHostSpan(ActivityKind kind) {
  return kind == ActivityKind::kHostOp || kind == ActivityKind::kPythonFunction ||
         kind == ActivityKind::kRuntimeApi;
}

Interval Of(const Activity &activity) { return {activity.begin_ns, activity.end_ns}; }

// The intervals every part of the summary measures against, each a sorted disjoint union.
struct TimeSets {
  std::vector<Interval> kernels;        // K
  std::vector<Interval> gpu_busy;       // K u copies
  std::vector<Interval> copies_only;    // copies \ K
  std::vector<Interval> host_only;      // a thread computes (outside input ops) \ GPU busy
  std::vector<Interval> input_only;     // a thread is in an input op \ (GPU busy u computing)
  std::vector<Interval> sync;           // host blocked in a synchronising call
  std::vector<Interval> launch;         // host in a launch call
  std::vector<int64_t> kernel_begins;   // sorted
  std::vector<int64_t> launch_begins;   // sorted
};

struct NamedInterval {
  Interval interval;
  uint32_t name = 0;
};

// Host time is judged per thread: a thread is in the input pipeline while any input op is open
// on it (its children included), and computing while other spans are open. Across threads,
// computing wins over input: an input thread prefetching while the main thread computes is not
// waiting. Async ranges (NVTX start/end) named like input ops count as input.
TimeSets BuildTimeSets(const Trace &trace, const std::vector<uint8_t> &classes,
                       std::vector<NamedInterval> *input_spans) {
  std::vector<Interval> kernels, copies, sync, launch, input_ranges;
  std::vector<std::vector<Interval>> thread_spans(trace.tracks.size());
  std::vector<std::vector<Interval>> thread_input(trace.tracks.size());
  TimeSets sets;
  for (const Activity &activity : trace.activities) {
    const uint8_t bits = classes[activity.name];
    switch (activity.kind) {
      case ActivityKind::kKernel:
        kernels.push_back(Of(activity));
        sets.kernel_begins.push_back(activity.begin_ns);
        break;
      case ActivityKind::kMemcpy:
      case ActivityKind::kMemset:
        copies.push_back(Of(activity));
        break;
      case ActivityKind::kHostOp:
      case ActivityKind::kPythonFunction:
      case ActivityKind::kRuntimeApi:
        thread_spans[activity.track].push_back(Of(activity));
        if (bits & kOpInput) thread_input[activity.track].push_back(Of(activity));
        if (bits & kOpSync) sync.push_back(Of(activity));
        if (bits & kOpLaunch) {
          launch.push_back(Of(activity));
          sets.launch_begins.push_back(activity.begin_ns);
        }
        break;
      case ActivityKind::kRange:
        if (bits & kOpInput) input_ranges.push_back(Of(activity));
        break;
      case ActivityKind::kGpuAnnotation:
      case ActivityKind::kInstant:
      case ActivityKind::kSync:
      case ActivityKind::kOverhead:
        break;
    }
    if ((bits & kOpInput) && activity.kind != ActivityKind::kGpuAnnotation &&
        !IsGpuWork(activity.kind)) {
      input_spans->push_back({Of(activity), activity.name});
    }
  }
  std::vector<Interval> computing, input = std::move(input_ranges);
  for (size_t track = 0; track < trace.tracks.size(); ++track) {
    if (thread_spans[track].empty()) continue;
    const std::vector<Interval> in_input = Union(std::move(thread_input[track]));
    const std::vector<Interval> busy = Union(std::move(thread_spans[track]));
    for (const Interval &piece : Subtract(busy, in_input)) computing.push_back(piece);
    input.insert(input.end(), in_input.begin(), in_input.end());
  }
  std::sort(sets.kernel_begins.begin(), sets.kernel_begins.end());
  std::sort(sets.launch_begins.begin(), sets.launch_begins.end());
  std::sort(input_spans->begin(), input_spans->end(),
            [](const NamedInterval &a, const NamedInterval &b) {
              return a.interval.begin < b.interval.begin;
            });
  sets.kernels = Union(std::move(kernels));
  copies = Union(std::move(copies));
  std::vector<Interval> busy = sets.kernels;
  busy.insert(busy.end(), copies.begin(), copies.end());
  sets.gpu_busy = Union(std::move(busy));
  sets.copies_only = Subtract(copies, sets.kernels);
  const std::vector<Interval> host_computing = Union(std::move(computing));
  sets.host_only = Subtract(host_computing, sets.gpu_busy);
  sets.input_only = Subtract(Subtract(Union(std::move(input)), sets.gpu_busy), host_computing);
  sets.sync = Union(std::move(sync));
  sets.launch = Union(std::move(launch));
  return sets;
}

uint64_t CountWithin(const std::vector<int64_t> &sorted, int64_t begin, int64_t end) {
  return static_cast<uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), end) -
                               std::lower_bound(sorted.begin(), sorted.end(), begin));
}

StepBreakdown Breakdown(const TimeSets &sets, int64_t begin, int64_t end) {
  StepBreakdown step;
  step.begin_ns = begin;
  step.duration_ns = end - begin;
  step.gpu_compute_ns = LengthWithin(sets.kernels, begin, end);
  step.memcpy_ns = LengthWithin(sets.copies_only, begin, end);
  step.input_wait_ns = LengthWithin(sets.input_only, begin, end);
  step.host_compute_ns = LengthWithin(sets.host_only, begin, end);
  step.idle_ns = step.duration_ns - step.gpu_compute_ns - step.memcpy_ns - step.input_wait_ns -
                 step.host_compute_ns;
  step.gpu_idle_ns = step.duration_ns - LengthWithin(sets.gpu_busy, begin, end);
  step.sync_ns = LengthWithin(sets.sync, begin, end);
  step.launch_ns = LengthWithin(sets.launch, begin, end);
  step.kernels = CountWithin(sets.kernel_begins, begin, end);
  step.launches = CountWithin(sets.launch_begins, begin, end);
  return step;
}

// The input op with the most time inside [begin, end).
std::string LongestInputOp(const Trace &trace, const std::vector<NamedInterval> &spans,
                           int64_t longest_span, int64_t begin, int64_t end) {
  absl::flat_hash_map<uint32_t, int64_t> time_by_name;
  auto it = std::lower_bound(spans.begin(), spans.end(), begin - longest_span,
                             [](const NamedInterval &span, int64_t t) {
                               return span.interval.begin < t;
                             });
  for (; it != spans.end() && it->interval.begin < end; ++it) {
    const int64_t overlap = std::min(end, it->interval.end) - std::max(begin, it->interval.begin);
    if (overlap > 0) time_by_name[it->name] += overlap;
  }
  uint32_t best = 0;
  int64_t best_time = 0;
  for (const auto &[name, time] : time_by_name) {
    if (time > best_time || (time == best_time && name < best)) {
      best = name;
      best_time = time;
    }
  }
  return best_time > 0 ? trace.names.Get(best) : std::string();
}

void AddInto(StepBreakdown &total, const StepBreakdown &step) {
  total.duration_ns += step.duration_ns;
  total.gpu_compute_ns += step.gpu_compute_ns;
  total.memcpy_ns += step.memcpy_ns;
  total.input_wait_ns += step.input_wait_ns;
  total.host_compute_ns += step.host_compute_ns;
  total.idle_ns += step.idle_ns;
  total.gpu_idle_ns += step.gpu_idle_ns;
  total.sync_ns += step.sync_ns;
  total.launch_ns += step.launch_ns;
  total.kernels += step.kernels;
  total.launches += step.launches;
}

std::string ProcessName(const Trace &trace, uint32_t process) {
  if (trace.processes.size() <= 1 || process >= trace.processes.size()) return "";
  const Process &p = trace.processes[process];
  return p.name.empty() ? "pid " + std::to_string(p.pid) : p.name;
}

// Self and total time of host ops: each thread's spans walked in begin order with a stack of the
// open ones; a span's self time is its duration less its direct children's.
void HostOpStats(const Trace &trace, const SummaryOptions &options, TraceSummary *summary) {
  struct Accumulator {
    uint64_t count = 0;
    int64_t total_ns = 0;
    int64_t self_ns = 0;
    int64_t max_ns = 0;
    ActivityKind kind = ActivityKind::kHostOp;
  };
  // Host span indices grouped by track (a counting sort), each group then put in begin order.
  std::vector<uint32_t> offsets(trace.tracks.size() + 1, 0);
  for (const Activity &activity : trace.activities) {
    if (IsHostSpan(activity.kind)) ++offsets[activity.track + 1];
  }
  for (size_t i = 1; i < offsets.size(); ++i) offsets[i] += offsets[i - 1];
  std::vector<uint32_t> order(offsets.back());
  std::vector<uint32_t> fill(offsets.begin(), offsets.end() - 1);
  for (uint32_t i = 0; i < trace.activities.size(); ++i) {
    if (IsHostSpan(trace.activities[i].kind)) order[fill[trace.activities[i].track]++] = i;
  }
  const auto outer_first = [&](uint32_t a, uint32_t b) {
    const Activity &x = trace.activities[a];
    const Activity &y = trace.activities[b];
    return std::tie(x.begin_ns, y.end_ns) < std::tie(y.begin_ns, x.end_ns);
  };

  std::vector<Accumulator> by_name(trace.names.size());
  std::vector<uint32_t> open_count(trace.names.size(), 0);
  std::vector<uint32_t> stack;
  for (size_t track = 0; track + 1 < offsets.size(); ++track) {
    const auto first = order.begin() + offsets[track];
    const auto last = order.begin() + offsets[track + 1];
    if (!std::is_sorted(first, last, outer_first)) std::sort(first, last, outer_first);
    stack.clear();
    for (auto it = first; it != last; ++it) {
      const Activity &span = trace.activities[*it];
      while (!stack.empty() && trace.activities[stack.back()].end_ns <= span.begin_ns) {
        --open_count[trace.activities[stack.back()].name];
        stack.pop_back();
      }
      const int64_t duration = span.end_ns - span.begin_ns;
      Accumulator &op = by_name[span.name];
      op.kind = span.kind;
      ++op.count;
      op.self_ns += duration;
      op.max_ns = std::max(op.max_ns, duration);
      if (open_count[span.name] == 0) op.total_ns += duration;  // a recursive call counts once
      if (!stack.empty()) {
        const Activity &parent = trace.activities[stack.back()];
        by_name[parent.name].self_ns -= std::min(span.end_ns, parent.end_ns) - span.begin_ns;
      }
      ++open_count[span.name];
      stack.push_back(*it);
    }
    for (uint32_t index : stack) --open_count[trace.activities[index].name];
  }

  std::vector<OpStat> ops;
  for (uint32_t name = 0; name < by_name.size(); ++name) {
    const Accumulator &op = by_name[name];
    if (op.count == 0) continue;
    ops.push_back({trace.names.Get(name), op.kind, op.count, op.total_ns, op.self_ns, op.max_ns});
  }
  const auto top = [&](auto key) {
    std::vector<OpStat> sorted = ops;
    std::sort(sorted.begin(), sorted.end(), [&](const OpStat &a, const OpStat &b) {
      return key(a) != key(b) ? key(a) > key(b) : a.name < b.name;
    });
    if (sorted.size() > options.top) sorted.resize(options.top);
    return sorted;
  };
  summary->top_ops_by_self = top([](const OpStat &op) { return op.self_ns; });
  summary->top_ops_by_total = top([](const OpStat &op) { return op.total_ns; });
}

void KernelStats(const Trace &trace, const SummaryOptions &options, TraceSummary *summary) {
  absl::flat_hash_map<uint32_t, KernelStat> by_name;
  std::vector<int64_t> durations;
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kKernel) continue;
    const int64_t duration = activity.end_ns - activity.begin_ns;
    durations.push_back(duration);
    KernelStat &kernel = by_name[activity.name];
    if (kernel.count == 0 || duration < kernel.min_ns) kernel.min_ns = duration;
    kernel.max_ns = std::max(kernel.max_ns, duration);
    ++kernel.count;
    kernel.total_ns += duration;
    summary->kernel_total_ns += duration;
  }
  summary->kernel_count = durations.size();
  summary->kernel_median_ns = MedianNs(durations);
  std::vector<KernelStat> kernels;
  for (auto &[name, kernel] : by_name) {
    kernel.name = trace.names.Get(name);
    kernel.share = summary->kernel_total_ns > 0
                       ? static_cast<double>(kernel.total_ns) /
                             static_cast<double>(summary->kernel_total_ns)
                       : 0;
    kernels.push_back(kernel);
  }
  std::sort(kernels.begin(), kernels.end(), [](const KernelStat &a, const KernelStat &b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (kernels.size() > options.top) kernels.resize(options.top);
  summary->top_kernels = std::move(kernels);
}

const char *CopyLabel(const Activity &activity) {
  if (activity.kind == ActivityKind::kMemset) return "memset";
  switch (activity.copy) {
    case CopyKind::kHostToDevice: return "HtoD";
    case CopyKind::kDeviceToHost: return "DtoH";
    case CopyKind::kDeviceToDevice: return "DtoD";
    default: return "other";
  }
}

void CopyStats(const Trace &trace, TraceSummary *summary) {
  std::map<std::string, CopyStat> by_label;
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kMemcpy && activity.kind != ActivityKind::kMemset) continue;
    CopyStat &copy = by_label[CopyLabel(activity)];
    copy.kind = activity.kind == ActivityKind::kMemset ? CopyKind::kOther : activity.copy;
    copy.label = CopyLabel(activity);
    ++copy.count;
    copy.bytes += activity.bytes;
    copy.total_ns += activity.end_ns - activity.begin_ns;
  }
  for (auto &[label, copy] : by_label) {
    // Bytes per nanosecond is gigabytes (1e9 bytes) per second.
    copy.gigabytes_per_second =
        copy.total_ns > 0 ? static_cast<double>(copy.bytes) / static_cast<double>(copy.total_ns) : 0;
    summary->copies.push_back(copy);
  }
}

// For each gap, the host op that best explains it: the shortest one covering at least half of
// it (input ops first), else the one overlapping it most. One pass over the activities for all
// gaps, which are few.
void ExplainGaps(const Trace &trace, const std::vector<uint8_t> &classes,
                 std::vector<IdleGap> *gaps) {
  struct Best {
    int64_t covering_duration = -1;
    bool covering_is_input = false;
    uint32_t covering = 0;
    int64_t most_overlap = 0;
    uint32_t overlapping = 0;
  };
  std::vector<size_t> by_begin(gaps->size());
  for (size_t i = 0; i < by_begin.size(); ++i) by_begin[i] = i;
  std::sort(by_begin.begin(), by_begin.end(),
            [&](size_t a, size_t b) { return (*gaps)[a].begin_ns < (*gaps)[b].begin_ns; });
  int64_t longest = 0;
  for (const IdleGap &gap : *gaps) longest = std::max(longest, gap.duration_ns);
  std::vector<Best> best(gaps->size());
  for (const Activity &activity : trace.activities) {
    if (!IsHostSpan(activity.kind)) continue;
    // Gaps that begin before the activity ends and may still reach into it.
    auto it = std::lower_bound(by_begin.begin(), by_begin.end(), activity.begin_ns - longest,
                               [&](size_t index, int64_t t) { return (*gaps)[index].begin_ns < t; });
    for (; it != by_begin.end() && (*gaps)[*it].begin_ns < activity.end_ns; ++it) {
      const IdleGap &gap = (*gaps)[*it];
      const int64_t gap_end = gap.begin_ns + gap.duration_ns;
      const int64_t overlap =
          std::min(gap_end, activity.end_ns) - std::max(gap.begin_ns, activity.begin_ns);
      if (overlap <= 0) continue;
      Best &b = best[*it];
      const int64_t duration = activity.end_ns - activity.begin_ns;
      const bool is_input = (classes[activity.name] & kOpInput) != 0;
      if (2 * overlap >= gap.duration_ns &&
          (b.covering_duration < 0 || (is_input && !b.covering_is_input) ||
           (is_input == b.covering_is_input && duration < b.covering_duration))) {
        b.covering = activity.name;
        b.covering_duration = duration;
        b.covering_is_input = is_input;
      }
      if (overlap > b.most_overlap) {
        b.most_overlap = overlap;
        b.overlapping = activity.name;
      }
    }
  }
  for (size_t i = 0; i < gaps->size(); ++i) {
    const Best &b = best[i];
    if (b.covering_duration >= 0) {
      (*gaps)[i].host_activity = trace.names.Get(b.covering);
    } else if (b.most_overlap > 0) {
      (*gaps)[i].host_activity = trace.names.Get(b.overlapping);
    }
  }
}

void GpuUtilization(const Trace &trace, const std::vector<uint8_t> &classes,
                    const SummaryOptions &options, int64_t window_begin, int64_t window_end,
                    TraceSummary *summary) {
  std::vector<std::vector<Interval>> by_track(trace.tracks.size());
  std::vector<StreamUtilization> streams(trace.tracks.size());
  // Devices keyed by (process, device) in a stable order.
  std::map<std::pair<uint32_t, int32_t>, std::pair<std::vector<Interval>, std::vector<Interval>>>
      by_device;  // all activity, kernels only
  for (const Activity &activity : trace.activities) {
    if (!IsGpuWork(activity.kind)) continue;
    by_track[activity.track].push_back(Of(activity));
    StreamUtilization &stream = streams[activity.track];
    (activity.kind == ActivityKind::kKernel ? stream.kernels : stream.copies) += 1;
    if (activity.kind == ActivityKind::kKernel) {
      const Track &track = trace.tracks[activity.track];
      by_device[{track.process, track.device}].second.push_back(Of(activity));
    }
  }
  const int64_t window = std::max<int64_t>(window_end - window_begin, 1);
  for (size_t index = 0; index < trace.tracks.size(); ++index) {
    if (by_track[index].empty()) continue;
    const Track &track = trace.tracks[index];
    StreamUtilization stream = streams[index];
    stream.process = ProcessName(trace, track.process);
    stream.device = track.device;
    stream.stream = track.stream;
    // A device's busy time is the union of its streams' unions, which are already merged.
    std::vector<Interval> busy = Union(std::move(by_track[index]));
    by_track[index] = {};
    stream.busy_ns = LengthWithin(busy, window_begin, window_end);
    auto &device = by_device[{track.process, track.device}].first;
    device.insert(device.end(), busy.begin(), busy.end());
    stream.utilization = static_cast<double>(stream.busy_ns) / static_cast<double>(window);
    summary->streams.push_back(stream);
  }
  std::sort(summary->streams.begin(), summary->streams.end(),
            [](const StreamUtilization &a, const StreamUtilization &b) {
              return std::tie(a.process, a.device, a.stream) < std::tie(b.process, b.device, b.stream);
            });

  const size_t buckets = std::max<size_t>(options.timeline_buckets, 1);
  const int64_t bucket_ns =
      std::max<int64_t>((window + static_cast<int64_t>(buckets) - 1) / static_cast<int64_t>(buckets), 1);
  std::vector<IdleGap> gaps;
  std::vector<int64_t> gap_lengths;
  for (auto &[key, activity] : by_device) {
    DeviceUtilization device;
    device.process = ProcessName(trace, key.first);
    device.device = key.second;
    const std::vector<Interval> busy = Union(std::move(activity.first));
    device.busy_ns = LengthWithin(busy, window_begin, window_end);
    device.kernel_ns = LengthWithin(Union(std::move(activity.second)), window_begin, window_end);
    device.window_ns = window_end - window_begin;
    device.utilization = static_cast<double>(device.busy_ns) / static_cast<double>(window);
    device.timeline_begin_ns = window_begin;
    device.bucket_ns = bucket_ns;
    device.timeline.assign(buckets, 0.0);
    for (const Interval &interval : busy) {
      const int64_t begin = std::max(interval.begin, window_begin);
      const int64_t end = std::min(interval.end, window_end);
      for (int64_t t = begin; t < end;) {
        const auto bucket = static_cast<size_t>((t - window_begin) / bucket_ns);
        if (bucket >= buckets) break;
        const int64_t bucket_end = window_begin + static_cast<int64_t>(bucket + 1) * bucket_ns;
        const int64_t piece = std::min(end, bucket_end) - t;
        device.timeline[bucket] += static_cast<double>(piece) / static_cast<double>(bucket_ns);
        t += piece;
      }
    }
    for (const Interval &gap : Gaps(busy, window_begin, window_end)) {
      if (gap.end - gap.begin < 1000) continue;  // below 1 us is launch jitter, not idleness
      gap_lengths.push_back(gap.end - gap.begin);
      IdleGap idle;
      idle.process = device.process;
      idle.device = device.device;
      idle.begin_ns = gap.begin;
      idle.duration_ns = gap.end - gap.begin;
      gaps.push_back(std::move(idle));
    }
    summary->devices.push_back(std::move(device));
  }
  summary->idle_gap_count = gaps.size();
  summary->idle_gap_median_ns = MedianNs(gap_lengths);
  const size_t keep = std::min(options.top, gaps.size());
  std::partial_sort(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(keep), gaps.end(),
                    [](const IdleGap &a, const IdleGap &b) {
                      return a.duration_ns != b.duration_ns ? a.duration_ns > b.duration_ns
                                                            : a.begin_ns < b.begin_ns;
                    });
  gaps.resize(keep);
  // The step a gap starts in, by the model's one rule (a GPU's gaps: the host's steps).
  const StepIndex steps(trace);
  for (IdleGap &gap : gaps) {
    if (const std::optional<size_t> step = steps.Find(UINT32_MAX, gap.begin_ns)) {
      gap.step = trace.steps[*step].number;
    }
  }
  ExplainGaps(trace, classes, &gaps);
  summary->idle_gaps = std::move(gaps);
}

}  // namespace

const std::vector<std::string> &DefaultInputOpPatterns() {
  static const std::vector<std::string> patterns = {
      "IteratorGetNext*",  "*IteratorGetNext*", "*DataLoader*", "*dataloader*",
      "*_next_data*",      "*input_pipeline*",  "*input*",      "*Input*",
      "*load_batch*",      "*load_data*",       "*data_load*",  "*read_batch*",
      "*next_batch*",      "*get_batch*",       "*wait_for_batch*"};
  return patterns;
}

TraceSummary Summarize(const Trace &trace, const SummaryOptions &options) {
  TraceSummary summary;
  summary.path = trace.path;
  summary.damage = trace.damage;
  summary.format = InputFormatName(trace);
  summary.wall_offset_ns = trace.wall_offset_ns;
  summary.pid = trace.pid;
  summary.rank = trace.rank;
  summary.hostname = trace.hostname;
  summary.events = trace.events_in_file;
  // Spans: instants, synchronisation waits and the tracer's own overhead are not counted.
  summary.activities = static_cast<uint64_t>(std::count_if(
      trace.activities.begin(), trace.activities.end(), [](const Activity &activity) {
        return activity.kind != ActivityKind::kInstant && activity.kind != ActivityKind::kSync &&
               activity.kind != ActivityKind::kOverhead;
      }));
  summary.losses = trace.losses;
  summary.has_steps = !trace.steps.empty();

  bool any = false;
  for (const Activity &activity : trace.activities) {
    if (!any || activity.begin_ns < summary.begin_ns) summary.begin_ns = activity.begin_ns;
    if (!any || activity.end_ns > summary.end_ns) summary.end_ns = activity.end_ns;
    any = true;
    summary.has_gpu = summary.has_gpu || IsGpuWork(activity.kind);
  }
  for (const Step &step : trace.steps) {
    if (!any || step.begin_ns < summary.begin_ns) summary.begin_ns = step.begin_ns;
    if (!any || step.end_ns > summary.end_ns) summary.end_ns = step.end_ns;
    any = true;
  }

  const std::vector<uint8_t> classes = ClassifyNames(
      trace.names, options.input_ops.empty() ? DefaultInputOpPatterns() : options.input_ops);
  std::vector<NamedInterval> input_spans;
  // The time sets are the largest structure after the trace itself: freed before the other
  // tables are built, so that peak memory is one of them at a time.
  auto sets = std::make_unique<const TimeSets>(BuildTimeSets(trace, classes, &input_spans));
  int64_t longest_input = 0;
  for (const NamedInterval &span : input_spans) {
    longest_input = std::max(longest_input, span.interval.end - span.interval.begin);
  }

  // The window: the steps when there are any (warm-up before the first step is not training),
  // else the whole trace, which then counts as one step for the totals.
  int64_t window_begin = summary.begin_ns, window_end = summary.end_ns;
  summary.step_total.number = -1;
  if (summary.has_steps) {
    window_begin = trace.steps.front().begin_ns;
    window_end = window_begin;
    for (const Step &step : trace.steps) {
      StepBreakdown breakdown = Breakdown(*sets, step.begin_ns, step.end_ns);
      breakdown.number = step.number;
      breakdown.process = ProcessName(trace, step.process);
      breakdown.longest_input_op =
          LongestInputOp(trace, input_spans, longest_input, step.begin_ns, step.end_ns);
      AddInto(summary.step_total, breakdown);
      summary.steps.push_back(std::move(breakdown));
      window_end = std::max(window_end, step.end_ns);
    }
    summary.step_total.begin_ns = window_begin;
  } else if (any) {
    summary.step_total = Breakdown(*sets, window_begin, window_end);
    summary.step_total.number = -1;
  }
  summary.step_total.longest_input_op =
      LongestInputOp(trace, input_spans, longest_input, window_begin, window_end);
  sets.reset();

  HostOpStats(trace, options, &summary);
  KernelStats(trace, options, &summary);
  CopyStats(trace, &summary);
  if (summary.has_gpu) {
    GpuUtilization(trace, classes, options, window_begin, window_end, &summary);
  }
  summary.findings = Diagnose(summary);
  return summary;
}

}  // namespace tfprof::cli
