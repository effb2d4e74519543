// The one Perfetto trace writer (docs/perfetto.md): the trace model as Perfetto's protobuf
// TrackEvent format (.pftrace), which the Perfetto UI and trace processor read natively. The
// runtime's export and stream, `tfprof convert`/`merge` and prof_convert() all write through it.
//
// A Perfetto trace is a plain sequence of packets (field 1 of `Trace`), so a file grows by
// appending: Begin() once, then Append() for each batch of the model (every step settled, or the
// whole trace), then Finish() (the trace info packet) after each batch. Each batch's slices are written as BEGIN/END pairs
// per row, in nesting order; names, categories and annotation names are interned on the one
// packet sequence, timestamps are deltas on an incremental clock of that sequence, and a track is
// described before its first event. Packets are encoded by hand (runtime/common/proto_wire.h)
// with the field numbers of runtime/formats/proto/tfprof/perfetto/perfetto_trace.proto: the
// generated classes would cost an object per event, and a run of ten million spans should be
// written at the speed of the JSON.
//
// Append() writes its packets in batches of about kBatchBytes, each deflated into one
// TracePacket.compressed_packets (perfetto_compressed_packets.h), as Perfetto's own service
// writes compressed traces, and Finish() its trace info packet as a batch of its own; Begin()'s
// packet stays plain, so that the file starts like any Perfetto trace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/common/first_fit_lanes.h"
#include "runtime/formats/format_writer.h"
#include "runtime/formats/perfetto/perfetto_compressed_packets.h"
#include "runtime/model/trace.h"

namespace tfprof {

// Bytes of a packet being encoded: a buffer written through a pointer, grown only when a write
// would not fit, so that appending a varint costs a compare and a few stores (std::string's
// append, a call and a copy per field, was a third of the writer's time).
class WireBuffer {
 public:
  void clear() { size_ = 0; }
  bool empty() const { return size_ == 0; }
  operator std::string_view() const { return std::string_view(storage_.data(), size_); }
  char *Room(size_t bytes) {
    if (storage_.size() - size_ < bytes) [[unlikely]] Grow(bytes);
    return storage_.data() + size_;
  }
  void Advance(char *end) { size_ = static_cast<size_t>(end - storage_.data()); }
  void Append(std::string_view bytes) {
    char *at = Room(bytes.size());
    if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
    size_ += bytes.size();
  }
  WireBuffer &operator+=(std::string_view bytes) {
    Append(bytes);
    return *this;
  }

 private:
  void Grow(size_t bytes);
  std::string storage_;
  size_t size_ = 0;
};

class PerfettoWriter final : public FormatWriter {
 public:
  // zlib's level for the batches: 1, the fastest. Measured (benchmarks/RESULTS.md, "Issue 36:
  // compressed .pftrace"): 3 and 6 (Perfetto's) are 1-30% smaller, 6 writes 3x slower, and every
  // level is far past 3.5x smaller than the JSON. kUncompressed writes every packet plain.
  static constexpr int kDefaultZlibLevel = 1;
  static constexpr int kUncompressed = 0;
  // Packets are deflated in batches of about this many bytes (Perfetto's service: a read of its
  // buffers; larger batches gain little, and a reader holds one inflated batch at a time).
  static constexpr size_t kBatchBytes = size_t{128} << 10;

  explicit PerfettoWriter(int zlib_level = kDefaultZlibLevel) : zlib_level_(zlib_level) {}

  Ending ending() const override { return Ending::kRepeated; }

  // The file's first packet: the sequence's defaults, its incremental state cleared.
  std::string Begin(int64_t start_wall_ns) override;

  // Appends to `out` the packets for the steps, activities and counters `trace` holds now, and
  // for the processes and tracks they need that were not described yet. A launch's flow reaches
  // its GPU work only when both are in the same piece. `drain`, when given, is called whenever
  // `out` holds more than kDrainBytes.
  static constexpr size_t kDrainBytes = size_t{1} << 20;
  void Append(const Trace &trace, bool last, int64_t end_ns, std::string &out,
              const Drain &drain) override;

  // The "tfprof trace info" packet: what the trace says about itself and its losses as of now
  // (the reader keeps the last one).
  std::string Finish(const Trace &trace, int64_t end_ns) override;

  // The packets written since the last Append() were lost (a streamed piece was dropped): the
  // next packet starts the sequence's state afresh (interned names, clock, track descriptors),
  // marked previous_packet_dropped.
  void Restart() override;

 private:
  // A slice still open on a lane, ended when a later slice starts after it (or the batch ends).
  struct Open {
    int64_t end_ns;
  };
  // A row's track (lane 0) or one of its extra lanes, for slices that do not nest in the others.
  struct Lane {
    uint64_t uuid = 0;
    // An END packet's bytes after its timestamp, the same for every END of the lane.
    std::string end_tail;
    int64_t written_until_ns = INT64_MIN;  // the last END written on it, in earlier batches too
    std::vector<Open> open;
  };
  // Where slices of one row go: a thread's or stream's track, a process's Steps row, or a
  // process's track of one range name.
  struct Row {
    uint64_t parent_uuid = 0;  // extra lanes' parent (the row's track; for ranges its process)
    std::string lane_name;
    std::vector<Lane> lanes;
    FirstFitLanes fit;  // each lane's keys, as Place asks them (KeepFit sets them)
    // Every open slice's (end, lane), earliest first: the order EndBefore writes ENDs in.
    std::priority_queue<std::pair<int64_t, uint32_t>, std::vector<std::pair<int64_t, uint32_t>>,
                        std::greater<>>
        ends;
  };

  void Describe(const Trace &trace);
  uint64_t ProcessUuid(uint32_t process);
  uint64_t NewUuid() { return next_uuid_++; }
  // A new row whose first lane is `track_uuid`; `parent_uuid` parents a Steps or range row's track.
  uint32_t NewRow(uint64_t track_uuid, uint64_t parent_uuid, std::string_view name);
  uint64_t LaneUuid(Row &row, size_t lane);
  static void KeepFit(Row &row, size_t lane);
  void DescribeTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name,
                     const int64_t *sort_index);

  // Emitting packets: each appends one whole packet to out_.
  class Annotations;  // an event's debug annotations, written by WriteActivityArgs()
  void RestartIfPending();
  void StartPacket(int64_t ns);
  void FinishEventPacket();
  void Timestamp(int64_t ns);
  void SliceEnd(Lane &lane, int64_t ns);
  uint64_t NameIid(const Trace &trace, uint32_t name);
  uint64_t OwnNameIid(std::string_view name);
  uint64_t OpTextIid(const Trace &trace, uint32_t name);
  uint64_t ActivityCategoryIid(const Trace &trace, const Activity &activity);
  uint64_t CategoryIid(std::string_view category);
  uint64_t AnnotationIid(std::string_view name);
  uint64_t StringIid(std::string_view text);
  // The event of `activity`, started and carrying its annotations, then BEGIN on `track_uuid`.
  void SliceBegin(const Trace &trace, const Activity &activity, uint64_t track_uuid,
                  uint64_t flow_out, uint64_t flow_in);
  void StepBegin(const Trace &trace, const Step &step, uint64_t track_uuid);
  // Places a slice on the first lane of `row` where it nests, ending what it starts after.
  Lane &Place(Row &row, int64_t begin_ns, int64_t end_ns);
  void EndBefore(Row &row, int64_t ns);
  void EndAll(Row &row);
  // Moves the whole packets in batch_ to `out`, deflated (or plain when compression is off).
  void FlushBatch(std::string &out);

  // Compression: Append() writes its packets to batch_, FlushBatch() deflates them into its out.
  const int zlib_level_;
  std::optional<PacketDeflater> deflater_;
  std::string batch_;

  // The packet being built and its parts.
  std::string *out_ = nullptr;
  WireBuffer packet_;
  WireBuffer event_;
  WireBuffer interned_;    // InternedData entries the packet introduces
  WireBuffer annotation_;  // one debug annotation

  // Sequence state (Restart() clears it).
  bool restart_pending_ = false;
  bool clock_known_ = false;
  int64_t clock_ns_ = 0;  // the last timestamp on the incremental clock
  // Interned iids (0: not interned yet on the sequence). Event names are one iid space, the
  // model's names and the writer's own (steps, trace info); categories, annotation names and
  // annotation string values have theirs.
  std::vector<uint64_t> name_iids_;      // per model name id
  std::vector<uint64_t> op_text_iids_;   // per model name id, as an annotation string value
  uint64_t category_iids_[64] = {};      // per activity kind * 2 + driver flag
  absl::flat_hash_map<std::string, uint64_t> own_name_iids_, category_text_iids_,
      annotation_iids_, string_iids_;
  uint64_t next_name_iid_ = 1, next_category_iid_ = 1, next_annotation_iid_ = 1,
      next_string_iid_ = 1;
  // Annotation names are string literals: their iids are found by address before by hash.
  struct RecentAnnotation {
    const char *text = nullptr;
    uint64_t iid = 0;
  };
  static constexpr int kRecentAnnotationBits = 7;
  RecentAnnotation recent_annotations_[1 << kRecentAnnotationBits];
  std::vector<bool> process_described_, track_described_;
  absl::flat_hash_map<uint64_t, bool> extra_described_;  // lanes, Steps, ranges, counters

  // Tables that outlive a restart.
  uint64_t next_uuid_ = 1;
  std::vector<uint64_t> process_uuids_;  // 0: none yet
  std::vector<int64_t> pids_;            // the pid written for each process
  absl::flat_hash_map<int64_t, uint32_t> pid_owner_;
  int64_t highest_pid_ = 0;
  std::vector<uint64_t> track_uuids_;
  std::vector<int64_t> tids_;  // the tid written for each track
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> tid_owner_;
  std::vector<Row> rows_;
  absl::flat_hash_map<uint64_t, uint32_t> row_of_track_;  // track index -> rows_
  absl::flat_hash_map<uint64_t, uint32_t> steps_row_;     // process << 32 | marking track
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> range_row_;  // (process, name)
  absl::flat_hash_map<std::pair<uint32_t, std::pair<uint32_t, uint32_t>>, uint64_t> counter_uuid_;
  uint64_t info_uuid_ = 0;
  int64_t shift_ns_ = 0;  // added to every time: Perfetto's are unsigned
  std::optional<int64_t> wall_offset_ns_;  // the trace's, for the clock snapshots
  bool wrote_events_ = false;
  size_t last_slot_ = 0;  // Append(): the row group the last activity went to

  // Totals for Finish().
  uint64_t kernels_ = 0, memcpys_ = 0, memsets_ = 0, api_calls_ = 0;
  bool any_time_ = false;
  int64_t first_ns_ = 0, last_ns_ = 0;
};

}  // namespace tfprof
