// The tracks of a Perfetto trace (TrackDescriptors, and tracks events name without one) and the
// rows of the model they become once the whole file is read: a thread's, a named row per process
// and name, a process's counters (as Perfetto's track_event_tracker resolves them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/formats/perfetto/perfetto_annotations.h"
#include "runtime/formats/perfetto/perfetto_sequence_state.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/model/trace.h"
#include "runtime/model/trace_builder.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"

namespace tfprof {

// One track event waiting for its track's end of file, when begins are paired with ends.
// Activity::name of a place kept for an activity not made yet (Pending::slot).
inline constexpr uint32_t kHole = UINT32_MAX;

struct Pending {
  int64_t ns = 0;
  uint64_t aux = 0;  // copies and memsets: bytes; counters: the value's bits
  uint32_t name = 0;
  uint32_t detail = kNoDetail;  // Trace::gpu_details index; steps and ranges: an Extra's
  uint32_t category = 0;
  uint8_t type = 0;
  uint8_t flags = 0;  // kActivity* bits
  CopyKind copy = CopyKind::kNone;
  // A begin's place in Trace::activities, taken when it is paired: activities stay in the order
  // their spans began, as in the JSON (equal spans keep the outer first, which the analysis's
  // self times follow).
  uint32_t slot = UINT32_MAX;
};
static_assert(sizeof(Pending) == 40);

// A step's span, placed on its process and marking thread once the tracks are all known.
struct PendingStep {
  int64_t number = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t thread = 0;
  uint32_t track = 0;  // PerfettoTracks index
  bool has_thread = false;
  bool on_own_row = false;  // the PyTorch profiler's ProfilerStep#N: marked by its own row
  uint32_t name = kNoName;  // Step::name, Step::category
  uint8_t category = kDefaultCategory;
  bool incomplete = false;
  uint64_t infos_before = 0;  // "tfprof trace info" packets read before its end
};

// A track of the file (a TrackDescriptor's uuid, or one events name without describing it).
struct TrackInfo {
  uint64_t uuid = 0;
  uint64_t parent = 0;
  bool has_parent = false;
  bool described = false;
  bool is_process = false;
  bool is_thread = false;
  bool is_counter = false;
  bool has_pid = false;
  int64_t pid = 0;
  int64_t tid = 0;
  bool has_implicit_pid = false;
  int64_t implicit_pid = 0;  // the trusted pid of the sequence that first used it
  std::string name;
  std::string unit_name;
  std::optional<int64_t> sort_index;
  // GPU rows: the device and stream their work's annotations name.
  bool has_device = false;
  bool has_stream = false;
  int64_t device = 0;
  int64_t stream = 0;
  // Slices are paired as they come while the track's events are in time order (the reader's
  // OpenSpans hold the begins not yet ended). From its first event out of order on, the track's
  // events (and the begins still open then) wait in `events`, to be sorted and paired at the end.
  std::vector<Pending> events;
  bool buffered = false;
  uint32_t counter_name = kAbsent;  // a counter track's samples: name, series and row
  uint32_t counter_series = kAbsent;
  uint32_t counter_row = kNoTrack;
  int64_t last_ns = INT64_MIN;
  uint32_t row = kNoTrack;  // its Trace::tracks row, once resolved
};

struct ProcessInfo {
  std::string name;
  std::string labels;
  std::optional<int64_t> sort_index;
};

struct ThreadInfo {
  std::string name;
  std::optional<int64_t> sort_index;
};

// What a row of the model learned from the events placed on it.
struct RowState {
  bool gpu_work = false;
  bool sync = false;
  bool own_events = false;
  bool thread = false;  // a thread's row
  bool device_known = false;
  bool stream_known = false;
};

class PerfettoTracks {
 public:
  // Processes and rows are made by `builder` (which must outlive this).
  PerfettoTracks(Trace *trace, TraceBuilder *builder) : trace_(trace), builder_(builder) {}

  // The track of uuid `uuid` (a tracks index), made on first use by a sequence.
  uint32_t TrackAt(uint64_t uuid, const SequenceState &sequence) {
    if (last_track_ != kAbsent && tracks_[last_track_].uuid == uuid) return last_track_;
    return FindOrAddTrack(uuid, sequence);
  }
  TrackInfo &operator[](uint32_t index) { return tracks_[index]; }
  uint32_t size() const { return static_cast<uint32_t>(tracks_.size()); }

  void Describe(const tfprof::perfetto::TrackDescriptor &descriptor, const SequenceState &sequence);

  // Spans, instants, counter samples and steps were kept with their tracks index (ranges' threads
  // in `range_threads`, per activity): now that every track is described, each goes on its row.
  void PlaceOnRows(const std::vector<Extra> &range_threads,
                   const std::vector<PendingStep> &pending_steps);
  // What each row is, from what went on it (as the Chrome reader decides it from the args).
  void ResolveRows();

  // The process of pid `pid`: its Trace::processes index once a row made it, and its
  // descriptor's name.
  std::optional<uint32_t> ProcessIndex(int64_t pid) const;
  const ProcessInfo *DescribedProcess(int64_t pid) const;

 private:
  uint32_t FindOrAddTrack(uint64_t uuid, const SequenceState &sequence);
  const TrackInfo *Parent(const TrackInfo &track) const;
  int64_t PidOf(const TrackInfo &track) const;
  uint32_t ProcessFor(int64_t pid);
  RowState &State(uint32_t row) {
    if (row >= row_states_.size()) row_states_.resize(row + 1);
    return row_states_[row];
  }
  uint32_t ThreadRow(int64_t pid, int64_t tid);
  uint32_t NamedRow(const TrackInfo &track);
  uint32_t RowOf(TrackInfo &track, int depth = 0);
  uint32_t CounterRowOf(TrackInfo &track);

  Trace *const trace_;
  TraceBuilder *const builder_;
  std::vector<TrackInfo> tracks_;
  absl::flat_hash_map<uint64_t, uint32_t> track_index_;
  uint32_t last_track_ = kAbsent;
  absl::flat_hash_map<int64_t, ProcessInfo> process_infos_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, ThreadInfo> thread_infos_;

  // Named rows by pid and name (unnamed tracks: by uuid); the builder keeps the other rows.
  std::map<std::pair<int64_t, std::string>, uint32_t> named_rows_;
  std::vector<RowState> row_states_;  // per Trace::tracks row
};

}  // namespace tfprof
