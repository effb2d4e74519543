#include "runtime/formats/perfetto/perfetto_tracks.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "runtime/common/ascii_text.h"

namespace tfprof {

namespace {

constexpr int kMaxTrackDepth = 64;  // parent links followed (a hostile file may make a cycle)
// Rows that are no thread (streams, ranges, Steps): tids no thread has, as the JSON writer's.
constexpr int64_t kNamedRowTidBase = 1000000000;

}  // namespace

uint32_t PerfettoTracks::FindOrAddTrack(uint64_t uuid, const SequenceState &sequence) {
  auto [entry, added] = track_index_.try_emplace(uuid, 0);
  if (added) {
    entry->second = static_cast<uint32_t>(tracks_.size());
    TrackInfo &track = tracks_.emplace_back();
    track.uuid = uuid;
    track.has_implicit_pid = sequence.has_pid;
    track.implicit_pid = sequence.pid;
  }
  last_track_ = entry->second;
  return entry->second;
}

void PerfettoTracks::Describe(const tfprof::perfetto::TrackDescriptor &descriptor,
                              const SequenceState &sequence) {
  TrackInfo &track = tracks_[TrackAt(descriptor.uuid(), sequence)];
  track.described = true;
  if (descriptor.has_parent_uuid()) {
    track.has_parent = true;
    track.parent = descriptor.parent_uuid();
  }
  if (descriptor.has_name()) {
    track.name = descriptor.name();
  } else if (descriptor.has_static_name()) {
    track.name = descriptor.static_name();
  }
  if (descriptor.has_sibling_order_rank()) track.sort_index = descriptor.sibling_order_rank();
  if (descriptor.has_process()) {
    const auto &process = descriptor.process();
    track.is_process = true;
    track.has_pid = true;
    track.pid = process.pid();
    ProcessInfo &info = process_infos_[track.pid];
    if (process.has_process_name()) info.name = process.process_name();
    if (process.process_labels_size() > 0) {
      info.labels.clear();
      for (const std::string &label : process.process_labels()) {
        if (!info.labels.empty()) info.labels += ", ";
        info.labels += label;
      }
    }
    if (process.has_legacy_sort_index()) info.sort_index = process.legacy_sort_index();
    if (track.name.empty()) track.name = info.name;
  }
  if (descriptor.has_thread()) {
    const auto &thread = descriptor.thread();
    track.is_thread = true;
    track.has_pid = thread.has_pid();
    track.pid = thread.pid();
    track.tid = thread.tid();
    if (thread.has_thread_name()) track.name = thread.thread_name();
    if (thread.has_legacy_sort_index() && !track.sort_index) {
      track.sort_index = thread.legacy_sort_index();
    }
    if (track.has_pid) {
      ThreadInfo &info = thread_infos_[{track.pid, track.tid}];
      info.name = track.name;
      if (track.sort_index) info.sort_index = track.sort_index;
    }
  }
  if (descriptor.has_counter()) {
    track.is_counter = true;
    track.unit_name = descriptor.counter().unit_name();
  }
}

const TrackInfo *PerfettoTracks::Parent(const TrackInfo &track) const {
  if (!track.has_parent) return nullptr;
  auto found = track_index_.find(track.parent);
  return found == track_index_.end() ? nullptr : &tracks_[found->second];
}

// The pid of the process a track belongs to.
int64_t PerfettoTracks::PidOf(const TrackInfo &track) const {
  const TrackInfo *at = &track;
  for (int depth = 0; at != nullptr && depth < kMaxTrackDepth; ++depth) {
    if ((at->is_process || at->is_thread) && at->has_pid) return at->pid;
    at = Parent(*at);
  }
  return track.has_implicit_pid ? track.implicit_pid : 0;
}

uint32_t PerfettoTracks::ProcessFor(int64_t pid) {
  bool added = false;
  const uint32_t index = builder_->ProcessFor(pid, &added);
  if (added) {
    if (auto info = process_infos_.find(pid); info != process_infos_.end()) {
      Process &process = trace_->processes[index];
      process.name = info->second.name;
      process.labels = info->second.labels;
      process.sort_index = info->second.sort_index;
    }
  }
  return index;
}

uint32_t PerfettoTracks::ThreadRow(int64_t pid, int64_t tid) {
  bool added = false;
  const uint32_t row = builder_->ThreadRow(ProcessFor(pid), tid, &added);
  if (added) {
    if (auto info = thread_infos_.find({pid, tid}); info != thread_infos_.end()) {
      trace_->tracks[row].name = info->second.name;
      trace_->tracks[row].sort_index = info->second.sort_index;
    }
    State(row).thread = true;
  }
  return row;
}

// A row that is no thread (a stream, a sync row, a named track): one per process and name.
uint32_t PerfettoTracks::NamedRow(const TrackInfo &track) {
  const int64_t pid = PidOf(track);
  const std::string key = track.name.empty() ? absl::StrCat("\x1f", track.uuid) : track.name;
  auto [entry, added] = named_rows_.try_emplace(std::make_pair(pid, key), 0);
  if (added) {
    int64_t stream = 0;
    const int64_t tid = NumberAfter(track.name, "stream ", &stream)
                            ? stream
                            : kNamedRowTidBase + static_cast<int64_t>(named_rows_.size());
    entry->second = builder_->NewRow(ProcessFor(pid), tid, track.name, TrackKind::kHostThread);
    trace_->tracks[entry->second].sort_index = track.sort_index;
  }
  return entry->second;
}

// The row a track's slices and instants go on: a thread's, a lane's parent's, its own.
uint32_t PerfettoTracks::RowOf(TrackInfo &track, int depth) {
  if (track.row != kNoTrack) return track.row;
  uint32_t row = kNoTrack;
  const TrackInfo *parent = Parent(track);
  if (track.is_thread) {
    row = ThreadRow(PidOf(track), track.tid);
    if (!track.name.empty() && trace_->tracks[row].name.empty()) trace_->tracks[row].name = track.name;
  } else if (!track.described) {
    // Events on a track never described: a thread of the sequence's process.
    row = ThreadRow(PidOf(track), static_cast<int64_t>(track.uuid & INT64_MAX));
  } else if (track.is_process) {
    row = ThreadRow(track.pid, 0);
  } else if (parent != nullptr && depth < kMaxTrackDepth && !parent->is_process &&
             !parent->is_counter && parent->described && parent->name == track.name) {
    // A lane: the writer's extra row for overlapping slices of its parent's row.
    row = RowOf(const_cast<TrackInfo &>(*parent), depth + 1);
  } else {
    row = NamedRow(track);
  }
  track.row = row;
  return row;
}

// The row a counter track's samples are shown on: its parent's, or its process's counters.
uint32_t PerfettoTracks::CounterRowOf(TrackInfo &track) {
  const TrackInfo *parent = Parent(track);
  if (parent != nullptr && !parent->is_process && !parent->is_counter) {
    return RowOf(const_cast<TrackInfo &>(*parent));
  }
  if (!track.is_counter && track.described && !track.is_process) return RowOf(track);
  return builder_->CounterRow(ProcessFor(PidOf(track)));
}

void PerfettoTracks::PlaceOnRows(const std::vector<Extra> &range_threads,
                                 const std::vector<PendingStep> &pending_steps) {
  for (Activity &activity : trace_->activities) {
    TrackInfo &track = tracks_[activity.track];
    if (activity.kind == ActivityKind::kRange) {
      const Extra *threads =
          activity.detail < range_threads.size() ? &range_threads[activity.detail] : nullptr;
      const int64_t pid = threads != nullptr ? PidOf(track) : 0;
      activity.detail = kNoDetail;
      activity.track = threads != nullptr && threads->has_thread ? ThreadRow(pid, threads->thread)
                                                                 : RowOf(track);
      if (threads != nullptr && threads->has_end_thread) {
        const uint32_t end_track = ThreadRow(pid, threads->end_thread);
        if (end_track != activity.track) activity.detail = end_track;
      }
      State(activity.track).own_events = true;
      continue;
    }
    const uint32_t row = RowOf(track);
    activity.track = row;
    RowState &state = State(row);
    state.own_events = true;
    const ActivityKind kind = activity.kind;
    if (!(IsGpuWork(kind) || kind == ActivityKind::kGpuAnnotation || kind == ActivityKind::kSync)) {
      continue;
    }
    if (kind == ActivityKind::kSync) {
      state.sync = true;
    } else {
      state.gpu_work = true;
    }
    if (track.has_device && !state.device_known) {
      trace_->tracks[row].device =
          static_cast<int32_t>(std::clamp<int64_t>(track.device, INT32_MIN, INT32_MAX));
      state.device_known = true;
    }
    if (track.has_stream && !state.stream_known) {
      trace_->tracks[row].stream = track.stream;
      state.stream_known = true;
    }
  }
  for (CounterSample &sample : trace_->counters) {
    TrackInfo &track = tracks_[sample.track];
    if (track.counter_row == kNoTrack) {
      track.counter_row = CounterRowOf(track);
      if (!track.name.empty()) track.counter_name = trace_->names.Intern(track.name);
      track.counter_series = trace_->names.Intern(
          track.unit_name.empty() ? std::string_view("value") : std::string_view(track.unit_name));
    }
    sample.track = track.counter_row;
    if (track.counter_name != kAbsent) sample.name = track.counter_name;
    sample.series = track.counter_series;
  }
  for (const PendingStep &pending : pending_steps) {
    TrackInfo &track = tracks_[pending.track];
    const int64_t pid = PidOf(track);
    Step step;
    step.number = pending.number;
    step.begin_ns = pending.begin_ns;
    step.end_ns = pending.end_ns;
    step.process = ProcessFor(pid);
    step.track = pending.on_own_row   ? RowOf(track)
                 : pending.has_thread ? ThreadRow(pid, pending.thread)
                                      : kNoTrack;
    step.incomplete = pending.incomplete;
    step.name = pending.name;
    step.category = pending.category;
    builder_->AddStep(step);
  }
}

void PerfettoTracks::ResolveRows() {
  row_states_.resize(trace_->tracks.size());
  for (size_t index = 0; index < trace_->tracks.size(); ++index) {
    Track &row = trace_->tracks[index];
    const RowState &state = row_states_[index];
    if (row.kind == TrackKind::kCounters) {
      int64_t device = 0;
      if (NumberAfter(trace_->processes[row.process].name, "GPU ", &device)) {
        row.device = static_cast<int32_t>(std::min<int64_t>(device, INT32_MAX));
      }
      continue;
    }
    if (state.gpu_work || (state.sync && !state.thread)) {
      row.kind = state.gpu_work ? TrackKind::kGpuStream : TrackKind::kGpuSync;
      if (!state.device_known) {
        const Process &process = trace_->processes[row.process];
        int64_t device = -1;
        if (!NumberAfter(process.name, "GPU ", &device)) device = process.pid;
        if (device >= 0) row.device = static_cast<int32_t>(std::min<int64_t>(device, INT32_MAX));
      }
      if (!state.stream_known && row.kind == TrackKind::kGpuStream) {
        int64_t stream = 0;
        if (NumberAfter(row.name, "stream ", &stream)) {
          row.stream = stream;
        } else if (state.thread) {
          row.stream = row.tid;
        }
      }
      if (row.name.empty() && row.stream >= 0 && row.kind == TrackKind::kGpuStream) {
        row.name = absl::StrCat("stream ", row.stream);
      }
    } else if (!state.own_events && !state.thread && row.name.empty()) {
      row.kind = TrackKind::kCounters;  // a row with counters only, never named
    }
  }
}

std::optional<uint32_t> PerfettoTracks::ProcessIndex(int64_t pid) const {
  return builder_->FindProcess(pid);
}

const ProcessInfo *PerfettoTracks::DescribedProcess(int64_t pid) const {
  auto found = process_infos_.find(pid);
  return found == process_infos_.end() ? nullptr : &found->second;
}

}  // namespace tfprof
