#include "tools/tfprof/analysis/trace_summary.h"

#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "runtime/model/cut_recovery.h"
#include "runtime/model/gpu_names.h"
#include "runtime/model/step_index.h"
#include "tools/tfprof/analysis/diagnosis.h"
#include "tools/tfprof/analysis/intervals.h"
#include "tools/tfprof/analysis/launch_split.h"
#include "tools/tfprof/analysis/median.h"
#include "tools/tfprof/analysis/op_gpu_time.h"
#include "tools/tfprof/analysis/op_classes.h"
#include "tools/tfprof/analysis/outside_steps.h"
#include "tools/tfprof/analysis/time_sets.h"

namespace tfprof::cli {
namespace {

Interval Of(const Activity &activity) { return {activity.begin_ns, activity.end_ns}; }

// Adds the time each input op spent inside [begin, end) to `time_by_name`.
void AddInputOpTime(const std::vector<NamedInterval> &spans, int64_t longest_span, int64_t begin,
                    int64_t end, absl::flat_hash_map<uint32_t, int64_t> *time_by_name) {
  auto it = std::lower_bound(spans.begin(), spans.end(), begin - longest_span,
                             [](const NamedInterval &span, int64_t t) {
                               return span.interval.begin < t;
                             });
  for (; it != spans.end() && it->interval.begin < end; ++it) {
    const int64_t overlap = std::min(end, it->interval.end) - std::max(begin, it->interval.begin);
    if (overlap > 0) (*time_by_name)[it->name] += overlap;
  }
}

// The input op with the most time (ties: the lowest name id), "" when none.
std::string LongestInputOp(const Trace &trace,
                           const absl::flat_hash_map<uint32_t, int64_t> &time_by_name) {
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
  total.communication_ns += step.communication_ns;
  total.memcpy_ns += step.memcpy_ns;
  total.input_wait_ns += step.input_wait_ns;
  total.host_compute_ns += step.host_compute_ns;
  total.idle_ns += step.idle_ns;
  total.gpu_idle_ns += step.gpu_idle_ns;
  total.sync_ns += step.sync_ns;
  total.launch_ns += step.launch_ns;
  total.one_time_launch_ns += step.one_time_launch_ns;
  total.kernels += step.kernels;
  total.launches += step.launches;
  total.one_time_launches += step.one_time_launches;
}

// "MainThread (tid 4242)", or "tid 4242" for a thread without a name.
std::string ThreadLabel(const Trace &trace, uint32_t track) {
  const Track &row = trace.tracks[track];
  const std::string tid = std::to_string(row.tid);
  if (row.name.empty()) return "tid " + tid;
  if (row.tid < 0) return row.name;  // a tid the file gave as text ("stream 7"): not an OS id
  // Kineto names threads "thread 4242 (python3)": the tid is said already.
  return row.name.find(tid) != std::string::npos ? row.name : row.name + " (tid " + tid + ")";
}

std::string ProcessName(const Trace &trace, uint32_t process) {
  if (trace.processes.size() <= 1 || process >= trace.processes.size()) return "";
  const Process &p = trace.processes[process];
  return p.name.empty() ? "pid " + std::to_string(p.pid) : p.name;
}

// Self and total time of host ops: each thread's spans walked in begin order with a stack of the
// open ones; a span's self time is its duration less its direct children's. Returns the spans in
// that order, and the calls and total time per name, for the GPU time by op.
HostSpansByTrack HostOpStats(const Trace &trace, const SummaryOptions &options,
                             TraceSummary *summary) {
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

  std::vector<Accumulator> by_name(trace.names.size());
  // Total time is the union of a name's spans on each thread: a recursive call, or a span that
  // overlaps another of its name without nesting in it, adds only the time not yet covered.
  std::vector<int64_t> covered_until(trace.names.size(), 0);
  std::vector<uint32_t> covered_on(trace.names.size(), UINT32_MAX);
  std::vector<uint32_t> stack;
  for (size_t track = 0; track + 1 < offsets.size(); ++track) {
    const auto first = order.begin() + offsets[track];
    const auto last = order.begin() + offsets[track + 1];
    SortEnclosingFirst(trace.activities, std::span<uint32_t>(first, last));
    stack.clear();
    for (auto it = first; it != last; ++it) {
      const Activity &span = trace.activities[*it];
      while (!stack.empty() && trace.activities[stack.back()].end_ns <= span.begin_ns) {
        stack.pop_back();
      }
      const int64_t duration = span.end_ns - span.begin_ns;
      Accumulator &op = by_name[span.name];
      op.kind = span.kind;
      ++op.count;
      op.self_ns += duration;
      op.max_ns = std::max(op.max_ns, duration);
      int64_t &until = covered_until[span.name];
      if (covered_on[span.name] != track) {
        covered_on[span.name] = static_cast<uint32_t>(track);
        until = INT64_MIN;
      }
      if (span.end_ns > until) {
        op.total_ns += span.end_ns - std::max(span.begin_ns, until);
        until = span.end_ns;
      }
      if (!stack.empty()) {
        const Activity &parent = trace.activities[stack.back()];
        by_name[parent.name].self_ns -= std::min(span.end_ns, parent.end_ns) - span.begin_ns;
      }
      stack.push_back(*it);
    }
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
  HostSpansByTrack spans;
  spans.calls.resize(by_name.size());
  spans.total_ns.resize(by_name.size());
  for (size_t name = 0; name < by_name.size(); ++name) {
    spans.calls[name] = by_name[name].count;
    spans.total_ns[name] = by_name[name].total_ns;
  }
  spans.offsets = std::move(offsets);
  spans.order = std::move(order);
  return spans;
}

void KernelStats(const Trace &trace, const std::vector<uint8_t> &classes,
                 const SummaryOptions &options, TraceSummary *summary) {
  absl::flat_hash_map<uint32_t, KernelStat> by_name;
  std::vector<int64_t> durations;
  durations.reserve(static_cast<size_t>(
      std::count_if(trace.activities.begin(), trace.activities.end(),
                    [](const Activity &activity) { return activity.kind == ActivityKind::kKernel; })));
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kKernel) continue;
    const int64_t duration = activity.end_ns - activity.begin_ns;
    durations.push_back(duration);
    KernelStat &kernel = by_name[activity.name];
    kernel.communication = (classes[activity.name] & kOpCollectiveKernel) != 0;
    if (kernel.communication) ++summary->communication_kernel_count;
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

// "memset", the model's "HtoD", "DtoH" or "DtoD" (CoarseCopyText), else "other".
std::string CopyLabel(const Activity &activity) {
  if (activity.kind == ActivityKind::kMemset) return "memset";
  const std::string_view direction = CoarseCopyText(activity.copy);
  return direction.empty() || direction == "Unknown" ? "other" : std::string(direction);
}

void CopyStats(const Trace &trace, TraceSummary *summary) {
  std::map<std::string, CopyStat> by_label;
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kMemcpy && activity.kind != ActivityKind::kMemset) continue;
    std::string label = CopyLabel(activity);
    CopyStat &copy = by_label[label];
    copy.kind = activity.kind == ActivityKind::kMemset ? CopyKind::kOther : activity.copy;
    copy.label = std::move(label);
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
                 const std::vector<uint32_t> &group_of_track, std::vector<IdleGap> *gaps) {
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
      // Only the host of the gap's own recording explains it (another rank's ops do not).
      if (gap.process_index < trace.processes.size() &&
          trace.processes[gap.process_index].group != group_of_track[activity.track]) {
        continue;
      }
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

// A device's activity, by kind.
struct DeviceWork {
  std::vector<Interval> all, kernels, collectives;
  size_t work = 0;     // pieces of GPU work: `all`'s size before the streams' unions
  size_t unioned = 0;  // `all`'s first entries: the unions of the streams measured so far
};

void GpuUtilization(const Trace &trace, const std::vector<uint8_t> &classes,
                    const SummaryOptions &options, const StepIndex &steps,
                    const std::vector<uint32_t> &group_of_track,
                    const std::vector<Interval> &group_windows, TraceSummary *summary) {
  // Sizes first, so that each list is reserved once: a list grown by doubling holds its old and
  // new copies at once, and these hold every kernel of the trace.
  std::vector<uint32_t> work_on_track(trace.tracks.size(), 0);
  std::vector<uint32_t> kernels_on_track(trace.tracks.size(), 0);
  std::vector<uint32_t> collectives_on_track(trace.tracks.size(), 0);
  for (const Activity &activity : trace.activities) {
    if (!IsGpuWork(activity.kind)) continue;
    ++work_on_track[activity.track];
    if (activity.kind != ActivityKind::kKernel) continue;
    ++kernels_on_track[activity.track];
    if (classes[activity.name] & kOpCollectiveKernel) ++collectives_on_track[activity.track];
  }
  // Devices keyed by (process, device) in a stable order. A device's work is one list, its
  // streams' stretches one after another in track order (a counting sort): each stream's union
  // is taken in place, then moved down behind the ones before it, so the device's busy time needs
  // no list beside those of its streams (a list growing stream by stream would be copied).
  std::map<std::pair<uint32_t, int32_t>, DeviceWork> by_device;
  std::vector<DeviceWork *> device_of_track(trace.tracks.size(), nullptr);
  std::vector<size_t> stretch_begin(trace.tracks.size(), 0);  // in its device's list
  for (size_t index = 0; index < trace.tracks.size(); ++index) {
    if (work_on_track[index] == 0) continue;
    const Track &track = trace.tracks[index];
    DeviceWork &device = by_device[{track.process, track.device}];
    device_of_track[index] = &device;
    stretch_begin[index] = device.work;
    device.work += work_on_track[index];
  }
  for (auto &[key, device] : by_device) {
    device.all.resize(device.work);
  }
  std::vector<size_t> fill(stretch_begin);
  std::vector<StreamUtilization> streams(trace.tracks.size());
  for (const Activity &activity : trace.activities) {
    if (!IsGpuWork(activity.kind)) continue;
    device_of_track[activity.track]->all[fill[activity.track]++] = Of(activity);
    // Counted in the window its busy time is measured in (as a step counts its kernels).
    const Interval window = group_windows[group_of_track[activity.track]];
    if (activity.begin_ns >= window.begin &&
        (activity.begin_ns < window.end || activity.end_ns <= window.end)) {
      StreamUtilization &stream = streams[activity.track];
      (activity.kind == ActivityKind::kKernel ? stream.kernels : stream.copies) += 1;
    }
  }
  // Each device is measured in its own recording's window (a rank's steps, in a merged trace).
  const auto window_of_track = [&](size_t track) { return group_windows[group_of_track[track]]; };
  fill = {};
  for (size_t index = 0; index < trace.tracks.size(); ++index) {
    if (work_on_track[index] == 0) continue;
    const Track &track = trace.tracks[index];
    const int64_t window_begin = window_of_track(index).begin;
    const int64_t window_end = window_of_track(index).end;
    const int64_t window = std::max<int64_t>(window_end - window_begin, 1);
    StreamUtilization stream = streams[index];
    stream.process = ProcessName(trace, track.process);
    stream.device = track.device;
    stream.stream = track.stream;
    // A device's busy time is the union of its streams' unions.
    DeviceWork &device = *device_of_track[index];
    const auto stretch = std::span<Interval>(device.all).subspan(stretch_begin[index],
                                                                  work_on_track[index]);
    const std::span<Interval> busy = stretch.first(UnionInPlace(stretch));
    stream.busy_ns = LengthWithin(busy, window_begin, window_end);
    if (device.unioned != stretch_begin[index]) {  // down, onto what was read already
      std::copy(busy.begin(), busy.end(),
                device.all.begin() + static_cast<std::ptrdiff_t>(device.unioned));
    }
    device.unioned += busy.size();
    stream.utilization = static_cast<double>(stream.busy_ns) / static_cast<double>(window);
    summary->streams.push_back(stream);
  }
  std::sort(summary->streams.begin(), summary->streams.end(),
            [](const StreamUtilization &a, const StreamUtilization &b) {
              return std::tie(a.process, a.device, a.stream) < std::tie(b.process, b.device, b.stream);
            });

  const size_t buckets = std::max<size_t>(options.timeline_buckets, 1);
  // Only the `top` longest gaps are reported, so only they are kept (a heap whose root is the
  // shortest kept); a trace has a gap between most kernels, millions of them. Their median is
  // taken from the devices' busy lists afterwards, not from a list of their lengths.
  struct GapCandidate {
    int64_t duration_ns;
    int64_t begin_ns;
    uint32_t process_index;
    int32_t device;
    size_t device_index;  // in summary->devices, for the process's name
  };
  // Longer first, then earlier, then by process and device: a total order, so ties are reported
  // the same way on every run.
  const auto longer = [](const GapCandidate &a, const GapCandidate &b) {
    return std::tie(b.duration_ns, a.begin_ns, a.process_index, a.device) <
           std::tie(a.duration_ns, b.begin_ns, b.process_index, b.device);
  };
  const size_t keep = options.top;
  std::vector<GapCandidate> longest;  // a heap under `longer`: its front is the shortest kept
  // Each device's busy time and window, in by_device's order, held until the gaps' median.
  std::vector<std::pair<std::vector<Interval>, Interval>> busy_of_device;
  busy_of_device.reserve(by_device.size());
  constexpr int64_t kMinGapNs = 1000;  // below 1 us is launch jitter, not idleness
  uint64_t gap_count = 0;
  for (auto &[key, activity] : by_device) {
    const uint32_t group = steps.GroupOf(key.first);
    const int64_t window_begin = group_windows[group].begin;
    const int64_t window_end = group_windows[group].end;
    const int64_t window = std::max<int64_t>(window_end - window_begin, 1);
    const int64_t bucket_ns = std::max<int64_t>(
        (window + static_cast<int64_t>(buckets) - 1) / static_cast<int64_t>(buckets), 1);
    DeviceUtilization device;
    device.process = ProcessName(trace, key.first);
    device.device = key.second;
    activity.all.resize(activity.unioned);
    std::vector<Interval> busy = Union(std::move(activity.all));
    device.busy_ns = LengthWithin(busy, window_begin, window_end);
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
    ForEachGap(busy, window_begin, window_end, [&](const Interval &gap) {
      if (gap.end - gap.begin < kMinGapNs) return;
      ++gap_count;
      const GapCandidate candidate{gap.end - gap.begin, gap.begin, key.first, device.device,
                                   summary->devices.size()};
      if (longest.size() < keep) {
        longest.push_back(candidate);
        std::push_heap(longest.begin(), longest.end(), longer);
      } else if (keep > 0 && longer(candidate, longest.front())) {
        std::pop_heap(longest.begin(), longest.end(), longer);
        longest.back() = candidate;
        std::push_heap(longest.begin(), longest.end(), longer);
      }
    });
    summary->devices.push_back(std::move(device));
    busy_of_device.emplace_back(std::move(busy), Interval{window_begin, window_end});
  }
  summary->idle_gap_count = gap_count;
  summary->idle_gap_median_ns = MedianNsOf(
      [&](auto visit) {
        for (const auto &[busy, window] : busy_of_device) {
          ForEachGap(busy, window.begin, window.end, [&](const Interval &gap) {
            if (gap.end - gap.begin >= kMinGapNs) visit(gap.end - gap.begin);
          });
        }
      },
      gap_count);
  busy_of_device = {};

  // The devices' kernel and collective time, gathered once their busy time is released (every
  // track with a kernel has a device by now: device_of_track).
  for (size_t index = 0; index < trace.tracks.size(); ++index) {
    if (kernels_on_track[index] == 0) continue;
    DeviceWork &device = *device_of_track[index];
    device.kernels.reserve(device.kernels.capacity() + kernels_on_track[index]);
    device.collectives.reserve(device.collectives.capacity() + collectives_on_track[index]);
  }
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kKernel) continue;
    DeviceWork &device = *device_of_track[activity.track];
    device.kernels.push_back(Of(activity));
    if (classes[activity.name] & kOpCollectiveKernel) device.collectives.push_back(Of(activity));
  }
  size_t device_index = summary->devices.size() - by_device.size();  // the first of the loop's
  for (auto &[key, activity] : by_device) {
    const Interval window = group_windows[steps.GroupOf(key.first)];
    DeviceUtilization &device = summary->devices[device_index++];
    device.kernel_ns = LengthWithin(Union(std::move(activity.kernels)), window.begin, window.end);
    device.communication_ns =
        LengthWithin(Union(std::move(activity.collectives)), window.begin, window.end);
    activity = DeviceWork();
  }
  std::sort_heap(longest.begin(), longest.end(), longer);  // longest first
  std::vector<IdleGap> gaps;
  gaps.reserve(longest.size());
  for (const GapCandidate &candidate : longest) {
    IdleGap idle;
    idle.process_index = candidate.process_index;
    idle.process = summary->devices[candidate.device_index].process;
    idle.device = candidate.device;
    idle.begin_ns = candidate.begin_ns;
    idle.duration_ns = candidate.duration_ns;
    gaps.push_back(std::move(idle));
  }
  // The step a gap starts in, by the model's one rule (a GPU's gaps: its recording's steps).
  for (IdleGap &gap : gaps) {
    if (const std::optional<size_t> step = steps.Find(gap.process_index, gap.begin_ns)) {
      gap.step = trace.steps[*step].number;
    }
  }
  ExplainGaps(trace, classes, group_of_track, &gaps);
  summary->idle_gaps = std::move(gaps);
}

}  // namespace

const std::vector<std::string> &DefaultInputOpPatterns() {
  static const std::vector<std::string> patterns = {
      "IteratorGetNext*",  "*IteratorGetNext*", "Iterator::*",  "*DataLoader*", "*dataloader*",
      "*_next_data*",      "*input_pipeline*",  "*input*",      "*Input*",
      "*load_batch*",      "*load_data*",       "*data_load*",  "*read_batch*",
      "*next_batch*",      "*get_batch*",       "*wait_for_batch*"};
  return patterns;
}

TraceSummary Summarize(const Trace &trace, const SummaryOptions &options) {
  TraceSummary summary;
  summary.path = trace.path;
  summary.damage = trace.damage;
  summary.cut = trace.cut;
  if (trace.cut) summary.cut_warning = CutWarning(*trace.cut);
  summary.format = InputFormatName(trace);
  summary.producer = trace.producer;
  summary.wall_offset_ns = trace.wall_offset_ns;
  summary.pid = trace.pid;
  summary.rank = trace.rank;
  summary.hostname = trace.hostname;
  summary.events = trace.events_in_file;
  summary.unknown_categories = trace.unknown_categories;
  summary.counter_samples = trace.counters.size();
  // Spans: instants, synchronisation waits and the tracer's own overhead are not counted.
  summary.activities = static_cast<uint64_t>(std::count_if(
      trace.activities.begin(), trace.activities.end(), [](const Activity &activity) {
        return activity.kind != ActivityKind::kInstant && activity.kind != ActivityKind::kSync &&
               activity.kind != ActivityKind::kOverhead;
      }));
  summary.losses = trace.losses;
  summary.has_steps = !trace.steps.empty();
  summary.framework = FrameworkOfTrace(trace.names, trace.producer);
  summary.gpu_tracing = trace.gpu;

  // The whole trace's extent, and each recording's (Process::group: one, unless a merge).
  if (const std::optional<TimeExtent> whole = EventExtent(trace)) {
    summary.begin_ns = whole->begin_ns;
    summary.end_ns = whole->end_ns;
  }
  const StepIndex step_index(trace);
  std::vector<uint32_t> group_of_track(trace.tracks.size());
  for (size_t index = 0; index < trace.tracks.size(); ++index) {
    group_of_track[index] = step_index.GroupOf(trace.tracks[index].process);
  }
  uint32_t groups = 1;
  for (const Process &process : trace.processes) groups = std::max(groups, process.group + 1);
  std::vector<std::optional<Interval>> extent(groups);  // of the recording's activities
  for (const Activity &activity : trace.activities) {
    summary.has_gpu = summary.has_gpu || IsGpuWork(activity.kind);
    std::optional<Interval> &span = extent[group_of_track[activity.track]];
    span = span ? Interval{std::min(span->begin, activity.begin_ns),
                           std::max(span->end, activity.end_ns)}
                : Of(activity);
    if (activity.kind == ActivityKind::kInstant && trace.names.Get(activity.name) == "[memory]") {
      ++summary.memory_events;
    }
    if (activity.kind == ActivityKind::kGpuAnnotation) ++summary.gpu_annotations;
  }
  std::vector<std::vector<size_t>> steps_of(groups);
  for (size_t index = 0; index < trace.steps.size(); ++index) {
    steps_of[step_index.GroupOf(trace.steps[index].process)].push_back(index);
  }
  // The window of each recording: its steps when there are any (warm-up before the first step
  // is not training), else all of it.
  std::vector<Interval> windows(groups);
  for (uint32_t group = 0; group < groups; ++group) {
    if (steps_of[group].empty()) {
      windows[group] = extent[group].value_or(Interval{});
      continue;
    }
    windows[group] = {trace.steps[steps_of[group].front()].begin_ns,
                      trace.steps[steps_of[group].front()].end_ns};
    for (size_t index : steps_of[group]) {
      windows[group].end = std::max(windows[group].end, trace.steps[index].end_ns);
    }
    if (const std::optional<Interval> &all = extent[group]) {
      summary.before_first_step_ns += std::max<int64_t>(0, windows[group].begin - all->begin);
      summary.after_last_step_ns += std::max<int64_t>(0, all->end - windows[group].end);
    }
  }

  const std::vector<uint8_t> classes = ClassifyNames(
      trace.names, options.input_ops.empty() ? DefaultInputOpPatterns() : options.input_ops,
      !options.input_ops.empty(), trace.producer);
  summary.step_total.number = -1;
  const GroupMembers members(trace, group_of_track, groups);
  absl::flat_hash_map<uint32_t, int64_t> input_time_by_name;  // over all windows
  std::vector<StepBreakdown> breakdowns(trace.steps.size());
  std::vector<std::vector<OutsideStretch>> outside_by_group(groups);
  std::array<OutsideSteps, kOutsideWheres> outside;
  for (uint32_t group = 0; group < groups; ++group) {
    // A trace with steps is summarised over its steps; recordings without any add nothing.
    if (summary.has_steps ? steps_of[group].empty() : !extent[group]) continue;
    // The threads that marked the group's steps, where input wait is judged.
    std::vector<bool> step_tracks(trace.tracks.size(), false);
    bool step_threads_known = false;
    for (size_t index : steps_of[group]) {
      const uint32_t track = trace.steps[index].track;
      if (track >= trace.tracks.size()) continue;
      step_tracks[track] = step_threads_known = true;
      if (summary.step_thread.empty()) summary.step_thread = ThreadLabel(trace, track);
    }
    // The windows the time sets are measured in: the recording's whole window, the stretches
    // outside its steps, its steps.
    if (summary.has_steps && extent[group]) {
      outside_by_group[group] = OutsideStretches(trace, steps_of[group], *extent[group]);
    }
    std::vector<Interval> measured_windows;
    measured_windows.reserve(1 + outside_by_group[group].size() + steps_of[group].size());
    measured_windows.push_back(windows[group]);
    for (const OutsideStretch &stretch : outside_by_group[group]) {
      measured_windows.push_back(stretch.interval);
    }
    for (size_t index : steps_of[group]) {
      measured_windows.push_back({trace.steps[index].begin_ns, trace.steps[index].end_ns});
    }
    std::vector<NamedInterval> input_spans;
    // The time sets are the largest structure after the trace itself: one recording's at a time,
    // and within it one set at a time.
    const TimeSetMeasures sets = MeasureTimeSets(trace, classes, members, group, step_tracks,
                                                 step_threads_known, measured_windows,
                                                 &input_spans);
    measured_windows = {};
    std::sort(input_spans.begin(), input_spans.end(),
              [](const NamedInterval &a, const NamedInterval &b) {
                return a.interval.begin < b.interval.begin;
              });
    int64_t longest_input = 0;
    for (const NamedInterval &span : input_spans) {
      longest_input = std::max(longest_input, span.interval.end - span.interval.begin);
    }
    AddInputOpTime(input_spans, longest_input, windows[group].begin, windows[group].end,
                   &input_time_by_name);
    summary.communication_kernel_ns += sets.collective_kernel_ns[0];
    summary.launch_calls += sets.launches.calls;
    summary.launches_without_gpu_work += sets.launches.without_gpu_work;
    summary.one_time_launches.insert(summary.one_time_launches.end(),
                                     sets.launches.one_time_calls.begin(),
                                     sets.launches.one_time_calls.end());
    size_t measured = 1;  // the next window of `sets`
    for (const OutsideStretch &stretch : outside_by_group[group]) {
      OutsideSteps &part = outside[static_cast<size_t>(stretch.where)];
      AddInto(part.breakdown, sets.windows[measured++]);
      ++part.stretches;
    }
    if (!summary.has_steps) {
      AddInto(summary.step_total, sets.windows[0]);
      continue;
    }
    for (size_t index : steps_of[group]) {
      const Step &step = trace.steps[index];
      StepBreakdown &breakdown = breakdowns[index];
      breakdown = sets.windows[measured++];
      breakdown.number = step.number;
      breakdown.process = ProcessName(trace, step.process);
      if (step.process < trace.processes.size()) breakdown.rank = trace.processes[step.process].rank;
      absl::flat_hash_map<uint32_t, int64_t> step_inputs;
      AddInputOpTime(input_spans, longest_input, step.begin_ns, step.end_ns, &step_inputs);
      breakdown.longest_input_op = LongestInputOp(trace, step_inputs);
    }
  }
  for (StepBreakdown &breakdown : breakdowns) {  // in the steps' time order
    AddInto(summary.step_total, breakdown);
    summary.steps.push_back(std::move(breakdown));
  }
  summary.step_total.begin_ns = summary.has_steps ? trace.steps.front().begin_ns : summary.begin_ns;
  summary.step_total.longest_input_op = LongestInputOp(trace, input_time_by_name);
  constexpr size_t kOutsideOps = 3;
  const auto outside_ops = OpsOutsideSteps(trace, group_of_track, outside_by_group, kOutsideOps);
  for (size_t where = 0; where < kOutsideWheres; ++where) {
    OutsideSteps &part = outside[where];
    if (part.stretches == 0 || part.breakdown.duration_ns <= 0) continue;
    part.where = OutsideWhereName(static_cast<OutsideWhere>(where));
    part.breakdown.number = -1;
    part.top_ops = outside_ops[where];
    summary.outside_steps.push_back(std::move(part));
  }
  constexpr size_t kOneTimeLaunchesKept = 5;
  std::stable_sort(summary.one_time_launches.begin(), summary.one_time_launches.end(),
                   [](const OneTimeLaunch &a, const OneTimeLaunch &b) {
                     return a.duration_ns > b.duration_ns;
                   });
  if (summary.one_time_launches.size() > kOneTimeLaunchesKept) {
    summary.one_time_launches.resize(kOneTimeLaunchesKept);
  }

  {
    // The host spans by thread, only while the GPU time by op reads them.
    const HostSpansByTrack host_spans = HostOpStats(trace, options, &summary);
    KernelStats(trace, classes, options, &summary);
    SummarizeGpuTimeByOp(trace, host_spans, step_index, options, &summary);
  }
  CopyStats(trace, &summary);
  summary.memory = AnalyseMemory(trace, MemoryInUse(trace), summary.begin_ns, summary.end_ns);
  summary.counters = SummarizeCounters(trace, summary.begin_ns, summary.end_ns);
  if (summary.has_gpu) {
    GpuUtilization(trace, classes, options, step_index, group_of_track, windows, &summary);
  }
  summary.findings = Diagnose(summary);
  return summary;
}

}  // namespace tfprof::cli
