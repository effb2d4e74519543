// The one XPlane writer: the trace model as the XSpace TensorFlow's and JAX's profilers save
// (logdir/plugins/profile/<run>/<host>.xplane.pb), which TensorBoard's Profile tab (XProf) reads:
// its trace viewer, overview page, framework op stats and kernel stats.
//   - "/host:CPU": a line per host thread (its ops, launch calls with their correlation_id, Python
//     functions, instants, ranges), and the steps as events of the thread that marked them, each
//     with `_r` = 1 and `step_num`: XProf groups a step's work under it (its group_id), as it does
//     for Keras' "train" marker and JAX's StepTraceAnnotation. A step that names no thread (a
//     RunMetadata's) is marked on its process's busiest host thread. The rows that are no thread's
//     (GPU syncs, the tracer's overhead, GPU annotations) get host lines of their own, so that
//     XProf never counts them as device time.
//   - "/device:GPU:N": a line per stream, "Stream #S(...)" (line id S); kernels with
//     `kernel_details` (regs, static_shared, dynamic_shared, grid, block), copies with
//     `memcpy_details` (size, dest), memsets with `memset_details` (num_bytes), each with its
//     `correlation_id` and `context_id`, and `tf_op` (the host op open at the launch); the
//     device's properties as plane stats.
//   - "Task Environment": profile_start_time and profile_stop_time, the recording's wall clock
//     (left out when the trace has none).
// Times are on lines that start at the recording's start (timestamp_ns 0, as TensorFlow's own
// profiles have them), offsets in picoseconds.
//
// An XSpace is one message whose lines hold their events: nothing can be written before the last
// piece. Each piece's events are encoded into their line's bytes as it comes (about 20-70 bytes an
// event, sorted per line within the piece, enclosing spans first, as XProf's nesting needs), and
// the last piece writes the planes, each line let go of once written: the profile is held once.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/formats/format_writer.h"
#include "runtime/model/trace.h"

namespace tfprof {

class XPlaneWriter final : public FormatWriter {
 public:
  Ending ending() const override { return Ending::kOnce; }

  // Nothing: the XSpace is written whole at the end.
  std::string Begin(int64_t start_wall_ns) override;

  // Encodes the piece's steps and activities into their lines; the last piece (`last`) also
  // writes the whole XSpace to `out`, handing it to `drain` a megabyte at a time.
  void Append(const Trace &trace, bool last, int64_t end_ns, std::string &out,
              const Drain &drain) override;

  // The XSpace, when no last piece wrote it; else nothing.
  std::string Finish(const Trace &trace, int64_t end_ns) override;

  // What XPlane cannot hold: counters, flows, the files' args.
  std::vector<std::string> Notes(const Trace &trace) const override;

 private:
  // A line's plane: the host's, or a GPU's (its device index).
  static constexpr int32_t kHostPlane = -1;
  struct Line {
    int32_t plane = kHostPlane;
    int64_t id = 0;
    uint32_t track = 0;   // the trace's row (named when written: the tables may still grow)
    bool device = false;  // GPU work on a device plane, else a host line
    std::string events;   // serialized XEvent entries (XLine field 4)
    // The last event encoded, and whether every event so far came after the one before.
    int64_t last_begin_ns = INT64_MIN;
    int64_t last_end_ns = INT64_MIN;
    bool sorted = true;
  };
  struct Plane {
    absl::flat_hash_map<uint32_t, int64_t> metadata_of;  // Trace::names index -> metadata id
    std::vector<uint32_t> names;                         // by metadata id - 1
  };
  // One event to encode: an activity, or a step (`step` set).
  struct Pending {
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    uint32_t index = 0;
    bool step = false;
  };

  size_t LineFor(const Trace &trace, uint32_t track, bool device);
  std::string LineName(const Trace &trace, const Line &line, bool several_processes) const;
  void NoteOrder(Line &line, int64_t begin_ns, int64_t end_ns);
  // Puts a line whose pieces came out of order back in order (enclosing first).
  static void SortEvents(Line &line);
  // Which of tfprof's own stats (bit 1 << id) file args name.
  uint64_t OwnStatsIn(std::string_view members);
  // Where a step that names no thread is marked (a RunMetadata's, a hand-made trace's): its
  // process's host thread with the most spans, chosen once per process; kNoTrack when none.
  uint32_t BusiestThreadOf(const Trace &trace, uint32_t process);
  int64_t MetadataId(int32_t plane, uint32_t name);
  void EncodeActivity(const Trace &trace, const Activity &activity, Line &line, std::string &out);
  void EncodeStep(const Trace &trace, const Step &step, Line &line, std::string &out);
  // The stat metadata id of stat `name`: tfprof's own, or one the file args brought.
  int64_t StatIdOf(std::string_view name);
  // The members of file args (runtime/model/event_args.h) as XStats: integers, doubles, text;
  // arrays and objects as their JSON text.
  // tfprof's own stats already `written` (bits 1 << id), and XProf's grouping stats (group_id,
  // _r, step_num), are left out.
  void AppendArgStats(std::string_view members, uint64_t written, std::string &stats);
  // A plane's event and stat metadata and its stats: what follows its lines.
  std::string PlaneTail(const Trace &trace, int32_t plane) const;
  // The XSpace, lines let go of as they are written, `drain` (when given) taking the bytes.
  void WriteSpace(const Trace &trace, int64_t end_ns, std::string &out, const Drain &drain);
  static constexpr size_t kDrainBytes = size_t{1} << 20;

  std::optional<int64_t> origin_ns_;  // the model-clock time of offset 0
  int64_t last_ns_ = 0;               // the latest end written (for profile_stop_time)
  std::vector<Line> lines_;
  // (track, device?) -> lines_ index.
  absl::flat_hash_map<uint64_t, size_t> line_of_;
  absl::flat_hash_set<std::pair<int32_t, int64_t>> line_ids_;  // (plane, line id) taken
  std::map<int32_t, Plane> planes_;  // kHostPlane first, then the GPUs in order
  // Stat names the file args brought, their ids after tfprof's own.
  absl::flat_hash_map<std::string, int64_t> arg_stat_ids_;
  std::vector<std::string> arg_stat_names_;  // by id - kStatCount
  std::string key_;  // the member being read: its key, unescaped
  bool written_ = false;  // WriteSpace() has run (the last piece's Append, or Finish)
  absl::flat_hash_map<uint32_t, uint32_t> busiest_thread_;  // process -> track
  uint64_t steps_without_thread_ = 0;
  uint64_t counters_left_out_ = 0;
  uint64_t flows_left_out_ = 0;
  uint64_t times_clamped_ = 0;
};

}  // namespace tfprof
