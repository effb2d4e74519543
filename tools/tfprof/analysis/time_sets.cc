#include "tools/tfprof/analysis/time_sets.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "tools/tfprof/analysis/op_classes.h"

namespace tfprof::cli {
namespace {

Interval Of(const Activity &activity) { return {activity.begin_ns, activity.end_ns}; }

// The class bits the time sets read. Python frames (with_stack, function tracing) are code, named
// by file and function: a frame "model.py(28): run_on_input" is not the input pipeline.
// Annotations are.
uint8_t TimeSetBits(const std::vector<uint8_t> &classes, const Activity &activity) {
  const uint8_t bits = classes[activity.name];
  return activity.kind == ActivityKind::kPythonFunction ? static_cast<uint8_t>(bits & ~kOpInput)
                                                        : bits;
}

// How many of a list of times (AddPoint), or how much of a list of intervals (AddLength), falls
// inside each window ([begin, end), as a lower_bound difference or LengthWithin over the sorted
// list would tell), without keeping the list: each time, or each interval's part between two of
// the windows' bounds, is tallied in the slot between those bounds. Millions of kernels, a few
// thousand windows.
class WindowTally {
 public:
  explicit WindowTally(const std::vector<Interval> &windows) {
    bounds_.reserve(2 * windows.size());
    for (const Interval &window : windows) {
      bounds_.push_back(window.begin);
      bounds_.push_back(window.end);
    }
    std::sort(bounds_.begin(), bounds_.end());
    bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
    below_.assign(bounds_.size() + 1, 0);
  }

  void AddPoint(int64_t t) { ++below_[SlotOf(t)]; }

  void AddLength(Interval interval) {
    if (interval.end <= interval.begin) return;
    size_t slot = SlotOf(interval.begin);
    for (int64_t at = interval.begin;; ++slot) {
      const int64_t slot_end =
          slot < bounds_.size() ? std::min(bounds_[slot], interval.end) : interval.end;
      below_[slot] += slot_end - at;
      at = slot_end;
      if (at == interval.end) break;
    }
    slot_ = slot;
  }

  // After the last Add: below_[i] becomes the tally below bounds_[i], that of the slots up to i.
  void Finish() {
    int64_t sum = 0;
    for (int64_t &tally : below_) tally = sum += tally;
  }

  int64_t Within(const Interval &window) const { return Below(window.end) - Below(window.begin); }

 private:
  // The slot holding `t`: slot s holds [bounds_[s - 1], bounds_[s]). What is tallied comes
  // nearly in order: the last slot usually holds the next one too.
  size_t SlotOf(int64_t t) {
    const bool fits = (slot_ == 0 || bounds_[slot_ - 1] <= t) &&
                      (slot_ == bounds_.size() || t < bounds_[slot_]);
    if (!fits) {
      slot_ = static_cast<size_t>(std::upper_bound(bounds_.begin(), bounds_.end(), t) -
                                  bounds_.begin());
    }
    return slot_;
  }

  int64_t Below(int64_t bound) const {
    return below_[static_cast<size_t>(
        std::lower_bound(bounds_.begin(), bounds_.end(), bound) - bounds_.begin())];
  }

  std::vector<int64_t> bounds_;  // the windows' begins and ends, sorted, unique
  std::vector<int64_t> below_;   // per slot, then (Finish) below each bound
  size_t slot_ = 0;
};

// `into` u `other` (both sorted by begin) in `into`'s storage, merged from the back so that
// nothing is copied aside; then made disjoint.
std::vector<Interval> MergeInto(std::vector<Interval> into, const std::vector<Interval> &other) {
  if (other.empty()) return into;
  size_t a = into.size();
  size_t b = other.size();
  into.resize(a + b);
  for (size_t out = a + b; b > 0;) {
    if (a > 0 && into[a - 1].begin > other[b - 1].begin) {
      into[--out] = into[--a];
    } else {
      into[--out] = other[--b];
    }
  }
  return Union(std::move(into));
}

void Release(std::vector<Interval> &list) { list = std::vector<Interval>(); }

// Async copy calls that held the host while their copy ran: from pageable memory,
// cudaMemcpyAsync stages the data through a driver buffer and returns only near the copy's end,
// so the call is synchronisation. "Held": the call overlaps at least half of its copy (the call
// of an asynchronous copy returns before the copy starts).
std::vector<Interval> BlockingCopyCalls(const Trace &trace, const std::vector<uint8_t> &classes,
                                        const GroupMembers &members, uint32_t group) {
  absl::flat_hash_map<uint32_t, Interval> copies;  // by correlation id
  std::vector<const Activity *> calls;
  members.ForEach(group, [&](const Activity &activity) {
    if (activity.kind != ActivityKind::kRuntimeApi && !IsGpuWork(activity.kind)) return;
    const GpuDetail detail = trace.gpu_details.Get(activity.detail);
    if (!(detail.fields & kGpuHasCorrelation)) return;
    if (activity.kind == ActivityKind::kMemcpy || activity.kind == ActivityKind::kMemset) {
      copies[detail.correlation] = Of(activity);
    } else if (activity.kind == ActivityKind::kRuntimeApi &&
               (classes[activity.name] & kOpAsyncCopyCall)) {
      calls.push_back(&activity);
    }
  });
  std::vector<Interval> blocking;
  for (const Activity *call : calls) {
    const auto found = copies.find(trace.gpu_details.Get(call->detail).correlation);
    if (found == copies.end()) continue;
    const Interval copy = found->second;
    const int64_t overlap = std::min(copy.end, call->end_ns) - std::max(copy.begin, call->begin_ns);
    if (overlap > 0 && 2 * overlap >= copy.end - copy.begin) blocking.push_back(Of(*call));
  }
  return blocking;
}

}  // namespace

TimeSetMeasures MeasureTimeSets(const Trace &trace, const std::vector<uint8_t> &classes,
                                const GroupMembers &members, uint32_t group,
                                const std::vector<bool> &step_tracks, bool step_threads_known,
                                const std::vector<Interval> &windows,
                                std::vector<NamedInterval> *input_spans) {
  TimeSetMeasures out;
  out.windows.resize(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    out.windows[i].begin_ns = windows[i].begin;
    out.windows[i].duration_ns = windows[i].end - windows[i].begin;
  }
  const auto measure = [&](const std::vector<Interval> &set, int64_t StepBreakdown::*field) {
    for (size_t i = 0; i < windows.size(); ++i) {
      out.windows[i].*field = LengthWithin(set, windows[i].begin, windows[i].end);
    }
  };
  // `a` less `b`, measured as its pieces come rather than listed.
  const auto measure_difference = [&](const std::vector<Interval> &a,
                                      const std::vector<Interval> &b,
                                      int64_t StepBreakdown::*field) {
    WindowTally lengths(windows);
    ForEachDifference(a, b, [&](const Interval &piece) { lengths.AddLength(piece); });
    lengths.Finish();
    for (size_t i = 0; i < windows.size(); ++i) out.windows[i].*field = lengths.Within(windows[i]);
  };
  const auto is_input = [&](const Activity &activity, uint8_t bits) {
    return (bits & kOpInput) != 0 &&
           (!step_threads_known || step_tracks[activity.track] || (bits & kOpStepInput) != 0);
  };

  // First pass: how long each list will be, so that each is reserved once (a list grown by
  // doubling holds its old and new copies at once), and the kernels and launches per window.
  size_t kernel_count = 0, collective_count = 0, copy_count = 0, host_collective_count = 0;
  size_t sync_count = 0, launch_count = 0, input_range_count = 0;
  std::vector<uint32_t> track_offsets(trace.tracks.size() + 1, 0);  // host spans by track
  bool any_gpu_work = false;
  WindowTally kernel_begins(windows), launch_begins(windows);
  members.ForEach(group, [&](const Activity &activity) {
    const uint8_t bits = TimeSetBits(classes, activity);
    any_gpu_work = any_gpu_work || IsGpuWork(activity.kind);
    const bool input = is_input(activity, bits);
    switch (activity.kind) {
      case ActivityKind::kKernel:
        ++((bits & kOpCollectiveKernel) ? collective_count : kernel_count);
        kernel_begins.AddPoint(activity.begin_ns);
        break;
      case ActivityKind::kMemcpy:
      case ActivityKind::kMemset:
        ++copy_count;
        break;
      case ActivityKind::kHostOp:
      case ActivityKind::kPythonFunction:
      case ActivityKind::kRuntimeApi:
        ++track_offsets[activity.track + 1];
        if (bits & kOpHostCollective) ++host_collective_count;
        if (bits & kOpSync) ++sync_count;
        if (bits & kOpLaunch) {
          ++launch_count;
          launch_begins.AddPoint(activity.begin_ns);
        }
        break;
      case ActivityKind::kRange:
        if (input) ++input_range_count;
        break;
      case ActivityKind::kGpuAnnotation:
      case ActivityKind::kInstant:
      case ActivityKind::kSync:
      case ActivityKind::kOverhead:
        break;
    }
    if (input && activity.kind != ActivityKind::kGpuAnnotation && !IsGpuWork(activity.kind)) {
      input_spans->push_back({Of(activity), activity.name});
    }
  });
  kernel_begins.Finish();
  launch_begins.Finish();
  for (size_t i = 0; i < windows.size(); ++i) {
    out.windows[i].kernels = static_cast<uint64_t>(kernel_begins.Within(windows[i]));
    out.windows[i].launches = static_cast<uint64_t>(launch_begins.Within(windows[i]));
  }

  // The GPU's sets. `compute` has room for what is merged into it in place later (collective
  // kernels, copies, communication): capacity never written to is never mapped in.
  std::vector<Interval> compute, collectives, copies, communication;
  compute.reserve(kernel_count + 2 * collective_count + copy_count + host_collective_count);
  collectives.reserve(collective_count);
  copies.reserve(copy_count);
  communication.reserve(collective_count + host_collective_count);
  members.ForEach(group, [&](const Activity &activity) {
    if (activity.kind == ActivityKind::kKernel) {
      ((classes[activity.name] & kOpCollectiveKernel) ? collectives : compute)
          .push_back(Of(activity));
    } else if (activity.kind == ActivityKind::kMemcpy || activity.kind == ActivityKind::kMemset) {
      copies.push_back(Of(activity));
    } else if (IsHostSpan(activity.kind) &&
               (TimeSetBits(classes, activity) & kOpHostCollective)) {
      communication.push_back(Of(activity));
    }
  });
  compute = Union(std::move(compute));  // kernels other than collectives
  measure(compute, &StepBreakdown::gpu_compute_ns);
  collectives = Union(std::move(collectives));  // all of their time, overlapped or not
  out.collective_kernel_ns.resize(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    out.collective_kernel_ns[i] = LengthWithin(collectives, windows[i].begin, windows[i].end);
  }
  // Collective kernels and host collectives, less compute.
  communication = Union(std::move(communication));
  communication = Subtract(MergeInto(std::move(communication), collectives), compute);
  measure(communication, &StepBreakdown::communication_ns);
  std::vector<Interval> kernels = MergeInto(std::move(compute), collectives);
  Release(collectives);
  copies = Union(std::move(copies));
  measure_difference(Subtract(copies, kernels), communication, &StepBreakdown::memcpy_ns);
  std::vector<Interval> gpu_busy = MergeInto(std::move(kernels), copies);  // every kernel u copies
  Release(copies);
  for (size_t i = 0; i < windows.size(); ++i) {
    out.windows[i].gpu_idle_ns =
        out.windows[i].duration_ns - LengthWithin(gpu_busy, windows[i].begin, windows[i].end);
  }
  // What every later part is measured without.
  std::vector<Interval> accounted = MergeInto(std::move(gpu_busy), communication);
  Release(communication);

  // The host's sets, one thread at a time: its spans' indices, grouped by track (a counting sort).
  for (size_t i = 1; i < track_offsets.size(); ++i) track_offsets[i] += track_offsets[i - 1];
  std::vector<uint32_t> by_track(track_offsets.back());
  std::vector<Interval> input;
  input.reserve(input_range_count);
  {
    std::vector<uint32_t> fill(track_offsets.begin(), track_offsets.end() - 1);
    members.ForEach(group, [&](const Activity &activity) {
      if (IsHostSpan(activity.kind)) {
        // ForEach hands out the trace's own activities: the address gives the index.
        by_track[fill[activity.track]++] =
            static_cast<uint32_t>(&activity - trace.activities.data());
      } else if (activity.kind == ActivityKind::kRange &&
                 is_input(activity, TimeSetBits(classes, activity))) {
        input.push_back(Of(activity));
      }
    });
  }
  // A thread's busy time and input wait, built as its spans come; the buffers are reused from
  // thread to thread, with room for the busiest one (only what they hold is mapped in).
  std::vector<Interval> computing, busy, in_input;
  uint32_t most_spans = 0;
  for (size_t track = 0; track + 1 < track_offsets.size(); ++track) {
    most_spans = std::max(most_spans, track_offsets[track + 1] - track_offsets[track]);
  }
  busy.reserve(most_spans);
  in_input.reserve(most_spans);
  for (size_t track = 0; track + 1 < track_offsets.size(); ++track) {
    if (track_offsets[track] == track_offsets[track + 1]) continue;
    UnionBuilder busy_union(std::move(busy)), input_union(std::move(in_input));
    for (uint32_t k = track_offsets[track]; k < track_offsets[track + 1]; ++k) {
      const Activity &activity = trace.activities[by_track[k]];
      busy_union.Add(Of(activity));
      if (is_input(activity, TimeSetBits(classes, activity))) input_union.Add(Of(activity));
    }
    busy = busy_union.Take();
    in_input = input_union.Take();
    for (const Interval &piece : Subtract(busy, in_input)) computing.push_back(piece);
    input.insert(input.end(), in_input.begin(), in_input.end());
  }
  by_track = std::vector<uint32_t>();
  track_offsets = std::vector<uint32_t>();
  Release(busy);
  Release(in_input);
  {
    const std::vector<Interval> host_computing = Union(std::move(computing));
    input = Subtract(Union(std::move(input)), accounted);
    // Step threads known: their input wait comes before other threads' work. Else computing wins.
    const std::vector<Interval> input_only =
        step_threads_known ? std::move(input) : Subtract(input, host_computing);
    Release(input);
    measure(input_only, &StepBreakdown::input_wait_ns);
    // Host compute: the threads' computing less all of the above, the input wait first (a list
    // the size of the two), then the GPU's time, measured as its pieces come: with the GPU busy
    // in millions of short kernels, they are millions. (Merging the input wait into `accounted`
    // instead would copy the GPU's list whenever the pieces outgrow its room.)
    measure_difference(Subtract(host_computing, input_only), accounted,
                       &StepBreakdown::host_compute_ns);
  }
  Release(accounted);

  // Synchronisation and launch calls, after the sets above are released.
  {
    std::vector<Interval> sync;
    sync.reserve(sync_count);
    members.ForEach(group, [&](const Activity &activity) {
      if (IsHostSpan(activity.kind) && (TimeSetBits(classes, activity) & kOpSync)) {
        sync.push_back(Of(activity));
      }
    });
    const std::vector<Interval> blocking = BlockingCopyCalls(trace, classes, members, group);
    sync.insert(sync.end(), blocking.begin(), blocking.end());
    measure(Union(std::move(sync)), &StepBreakdown::sync_ns);
  }
  const auto for_each_launch = [&](absl::FunctionRef<void(const Activity &)> visit) {
    members.ForEach(group, [&](const Activity &activity) {
      if (IsHostSpan(activity.kind) && (TimeSetBits(classes, activity) & kOpLaunch)) visit(activity);
    });
  };
  {
    std::vector<Interval> launch;
    launch.reserve(launch_count);
    for_each_launch([&](const Activity &activity) { launch.push_back(Of(activity)); });
    measure(Union(std::move(launch)), &StepBreakdown::launch_ns);
  }
  out.launches = SplitLaunches(
      trace, launch_count,
      [&](absl::FunctionRef<void(const LaunchCall &)> visit) {
        for_each_launch([&](const Activity &activity) {
          visit({Of(activity), activity.name,
                 DetailIsFileArgs(activity.kind) ? kNoDetail : activity.detail});
        });
      },
      any_gpu_work,
      [&](absl::FunctionRef<void(const Activity &)> visit) { members.ForEach(group, visit); });
  measure(out.launches.one_time, &StepBreakdown::one_time_launch_ns);
  const std::vector<int64_t> &one_time_begins = out.launches.one_time_begins;
  for (size_t i = 0; i < windows.size(); ++i) {
    StepBreakdown &step = out.windows[i];
    step.one_time_launches = static_cast<uint64_t>(
        std::lower_bound(one_time_begins.begin(), one_time_begins.end(), windows[i].end) -
        std::lower_bound(one_time_begins.begin(), one_time_begins.end(), windows[i].begin));
    step.idle_ns = step.duration_ns - step.gpu_compute_ns - step.communication_ns -
                   step.memcpy_ns - step.input_wait_ns - step.host_compute_ns;
  }
  return out;
}

}  // namespace tfprof::cli
