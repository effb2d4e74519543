#include "runtime/formats/perfetto/perfetto_reader.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/common/file_bytes.h"
#include "runtime/common/proto_wire.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/formats/cut_file.h"
#include "runtime/formats/proto_damage.h"
#include "runtime/formats/read_threads.h"
#include "runtime/formats/perfetto/perfetto_annotations.h"
#include "runtime/formats/perfetto/perfetto_compressed_packets.h"
#include "runtime/formats/perfetto/perfetto_fields.h"
#include "runtime/formats/perfetto/perfetto_inflate_ahead.h"
#include "runtime/common/ascii_text.h"
#include "runtime/formats/perfetto/perfetto_packet_decoder.h"
#include "runtime/formats/perfetto/perfetto_sequence_state.h"
#include "runtime/formats/perfetto/perfetto_trace_stats.h"
#include "runtime/formats/perfetto/perfetto_trace_info.h"
#include "runtime/formats/perfetto/perfetto_tracks.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/model/trace_builder.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"

// The reader's pipeline, one file per job (as Perfetto's TrackEvent importer): packets are cut
// out and their fields collected by number (perfetto_packet_decoder.h); a sequence's interned
// ids and clocks (perfetto_sequence_state) resolve names and times; annotations become an event's
// args (perfetto_annotations); this file pairs each track's begins and ends into spans; at the
// end the tracks become rows (perfetto_tracks) and the trace info is applied
// (perfetto_trace_info).

namespace tfprof {

namespace {

using namespace perfetto_fields;  // NOLINT: the field numbers, by message
constexpr uint32_t kTracePacketField = kTracePacket;

// ---- the reader ------------------------------------------------------------------------------------

class PerfettoReader {
 public:
  // `file` (may be null) is told how far the walk has come: what it has read. `ahead` (may be
  // null) inflates the file's batches ahead of the walk.
  PerfettoReader(uint64_t file_size, ProgressListener *progress, Trace *trace, FileBytes *file,
                 InflateAhead *ahead)
      : file_size_(file_size), packet_bytes_(file_size), progress_(progress), file_(file),
        ahead_(ahead), trace_(trace), builder_(trace), tracks_(trace, &builder_) {
    progress_what_ = absl::StrCat("reading ", trace_->path);
    ReserveActivities();
  }

  absl::Status Read(std::string_view data) {
    absl::Status status = Parse(data);
    if (status.ok() && infos_read_ > 0 && !last_packet_was_info_) {
      // tfprof ends every trace, and each piece of a stream, with its trace info: a file of
      // whole packets after the last one is a stream cut between two packets of a piece.
      status = EndsEarly(data, data.size(), "the file ends after a packet that is not its last",
                         "between the packets of a piece");
    }
    if (status.ok() || absl::IsDataLoss(status)) Finish();
    if (std::optional<CutFacts> cut = FileEndsEarly(status); cut && infos_read_ > 0) {
      // tfprof's stream ends each piece with its trace info: the steps ended after the last one
      // read are the cut piece's, which may be partial; those before are whole.
      cut->partial_from_ns = INT64_MAX;
      for (const PendingStep &step : pending_steps_) {
        if (step.infos_before == infos_read_) {
          cut->partial_from_ns = std::min(*cut->partial_from_ns, step.begin_ns);
        }
      }
      status = MarkFileEndsEarly(status, *cut);
    }
    return status;
  }

 private:
  // ---- packets ----

  absl::Status Parse(std::string_view data) {
    size_t at = 0;
    uint64_t reported = 0;
    while (at < data.size()) {
      const size_t start = at;
      WireField field;
      if (!NextWireField(data, &at, &field)) return TopLevelDamage(data, start);
      if (field.number != kTracePacketField || field.wire_type != 2) continue;  // not a packet
      const auto payload_offset = static_cast<uint64_t>(field.payload.data() - data.data());
      last_packet_was_info_ = false;
      if (absl::Status status = Packet(field.payload, payload_offset); !status.ok()) return status;
      if (at - reported >= (size_t{4} << 20)) {
        reported = at;
        if (progress_ != nullptr) progress_->Update(progress_what_, at, file_size_);
        if (file_ != nullptr) file_->Consumed(start);
      }
    }
    if (progress_ != nullptr) progress_->Update(progress_what_, at, file_size_);
    return absl::OkStatus();
  }

  // Why the field at `start` cannot be read: the file ends inside it, or it is no field.
  absl::Status TopLevelDamage(std::string_view data, size_t start) const {
    size_t at = start;
    uint64_t tag = 0;
    if (ReadWireVarint(data, &at, &tag) && (tag >> 3) != 0) {
      const auto wire_type = static_cast<int>(tag & 7);
      uint64_t length = 0;
      if (wire_type == 2 && (!ReadWireVarint(data, &at, &length) || length > data.size() - at)) {
        return EndsEarly(data, start, "the file is cut short: it ends inside a packet",
                         "inside a packet");
      }
      if ((wire_type == 0 || wire_type == 1 || wire_type == 5) && data.size() - start < 10) {
        return EndsEarly(data, start, "the file is cut short: it ends inside a field",
                         "inside a field");
      }
    } else if (data.size() - start < 10 && at == data.size()) {
      return EndsEarly(data, start, "the file is cut short: it ends inside a field", "inside a field");
    }
    // Bytes inside the file that are no field: corrupt, whatever comes after them.
    return Damage(start, absl::StrCat("corrupt bytes between packets: ",
                                      DescribeWireFieldDamage(data, start, "file").problem));
  }

  // Damage at `start` that is the file (`data`) ending early: a cut, not damage.
  absl::Status EndsEarly(std::string_view data, size_t start, std::string_view problem,
                         std::string_view where) const {
    CutFacts cut;
    cut.file = trace_->path;
    cut.file_bytes = data.size();
    cut.problem = std::string(where);
    return MarkFileEndsEarly(Damage(start, problem), cut);
  }

  // Inside a batch of compressed_packets, `offset` is into the inflated packets, and the message
  // names the batch's place in the file too.
  absl::Status Damage(uint64_t offset, std::string_view problem) const {
    if (batch_offset_ != kNoBatch) {
      return absl::DataLossError(absl::StrCat(trace_->path, ": byte ", batch_offset_,
                                              ": compressed_packets: inflated byte ", offset, ": ",
                                              ToAbsl(problem)));
    }
    return absl::DataLossError(absl::StrCat(trace_->path, ": byte ", offset, ": ", ToAbsl(problem)));
  }

  // A compressed_packets payload (`bytes`, at `offset` in the file): inflated, and its packets
  // read in order as if they stood in its place, as Perfetto's trace processor reads them.
  absl::Status CompressedPackets(std::string_view bytes, uint64_t offset) {
    if (batch_offset_ != kNoBatch) {
      return Damage(offset, "compressed_packets inside compressed_packets");
    }
    std::string problem;
    if ((ahead_ == nullptr || !ahead_->Take(bytes, &inflated_)) &&
        !InflatePackets(bytes, kMaxInflatedBatchBytes, &inflated_, &problem)) {
      return Damage(offset, absl::StrCat("compressed_packets: ", problem));
    }
    batch_offset_ = offset;
    if (!saw_compressed_) {
      // The file's packets are compressed: what it holds is its size times the first batch's
      // ratio, not its size (tfprof's compress ~6x; taken as at most 16x, so that a batch of
      // repeats does not reserve gigabytes of address space), and the tables are sized for that.
      saw_compressed_ = true;
      const uint64_t ratio =
          std::max<uint64_t>(1, inflated_.size() / std::max<size_t>(bytes.size(), 1));
      packet_bytes_ = file_size_ * std::min<uint64_t>(ratio, 16);
      ReserveActivities();
      if (!trace_->gpu_details.empty()) ReserveGpuDetails();
    }
    const std::string_view packets = inflated_;
    size_t at = 0;
    absl::Status status;
    while (at < packets.size() && status.ok()) {
      const size_t start = at;
      WireField field;
      if (!NextWireField(packets, &at, &field)) {
        status = Damage(start, "corrupt bytes between the packets");
        break;
      }
      if (field.number != kTracePacketField || field.wire_type != 2) continue;  // not a packet
      last_packet_was_info_ = false;
      status = Packet(field.payload, static_cast<uint64_t>(field.payload.data() - packets.data()));
    }
    batch_offset_ = kNoBatch;
    return status;
  }

  absl::Status Packet(std::string_view bytes, uint64_t offset) {
    PacketFields p;
    if (const size_t end = p.Decode(bytes); end < bytes.size()) {
      return Damage(offset + end, "a damaged TracePacket");
    }
    using F = PacketField;
    SequenceState &sequence = sequences_.Sequence(static_cast<uint32_t>(p.Varint(F::kSequenceId)));
    if (p.Has(F::kTrustedPid)) {
      sequence.has_pid = true;
      sequence.pid = static_cast<int32_t>(p.Varint(F::kTrustedPid));
    }
    if (p.Varint(F::kPreviousPacketDropped) != 0) sequence.valid = false;
    const auto flags = static_cast<uint32_t>(p.Varint(F::kSequenceFlags));
    if (p.Varint(F::kIncrementalStateCleared) != 0 ||
        (flags & packet::kSeqIncrementalStateCleared) != 0) {
      sequence.ClearIncremental();
    }
    if ((flags & packet::kSeqNeedsIncrementalState) != 0 && !sequence.valid) {
      return absl::OkStatus();  // its names and tracks were in what was lost
    }
    if (p.Has(F::kDefaults)) {
      tfprof::perfetto::TracePacketDefaults defaults;
      if (!Parse(p.Bytes(F::kDefaults), &defaults)) {
        return Damage(offset + Offset(bytes, p.Bytes(F::kDefaults)), "a damaged TracePacketDefaults");
      }
      sequence.has_default_clock = defaults.has_timestamp_clock_id();
      sequence.default_clock = defaults.timestamp_clock_id();
      sequence.has_default_track = defaults.track_event_defaults().has_track_uuid();
      sequence.default_track = defaults.track_event_defaults().track_uuid();
    }
    if (p.Has(F::kInternedData) && !ReadInternedData(p.Bytes(F::kInternedData), sequence,
                                                     categories_, trace_->names, annotations_)) {
      return Damage(offset + Offset(bytes, p.Bytes(F::kInternedData)), "damaged InternedData");
    }
    if (p.Has(F::kClockSnapshot)) {
      tfprof::perfetto::ClockSnapshot snapshot;
      if (!Parse(p.Bytes(F::kClockSnapshot), &snapshot)) {
        return Damage(offset + Offset(bytes, p.Bytes(F::kClockSnapshot)), "a damaged ClockSnapshot");
      }
      clocks_.Snapshot(snapshot, sequence);
    }
    if (p.Has(F::kTrackDescriptor)) {
      tfprof::perfetto::TrackDescriptor descriptor;
      if (!Parse(p.Bytes(F::kTrackDescriptor), &descriptor)) {
        return Damage(offset + Offset(bytes, p.Bytes(F::kTrackDescriptor)),
                      "a damaged TrackDescriptor");
      }
      tracks_.Describe(descriptor, sequence);
    }
    if (p.Has(F::kTraceStats) &&
        !ReadPerfettoTraceStats(p.Bytes(F::kTraceStats), &trace_->losses.perfetto)) {
      return Damage(offset + Offset(bytes, p.Bytes(F::kTraceStats)), "a damaged TraceStats");
    }
    if (p.Has(F::kServiceEvent) &&
        !ReadPerfettoServiceEvent(p.Bytes(F::kServiceEvent), &trace_->losses.perfetto)) {
      return Damage(offset + Offset(bytes, p.Bytes(F::kServiceEvent)),
                    "a damaged TracingServiceEvent");
    }
    if (p.Has(F::kCompressedPackets)) {
      const std::string_view batch = p.Bytes(F::kCompressedPackets);
      if (absl::Status status = CompressedPackets(batch, offset + Offset(bytes, batch));
          !status.ok()) {
        return status;
      }
    }
    if (p.Has(F::kTrackEvent)) {
      const bool timed = p.Has(F::kTimestamp);
      int64_t ns = 0;
      if (timed) {
        const uint32_t clock =
            p.Has(F::kTimestampClockId) ? static_cast<uint32_t>(p.Varint(F::kTimestampClockId))
            : sequence.has_default_clock ? sequence.default_clock
                                         : 0;
        ns = clocks_.ToTraceTime(sequence, clock, p.Varint(F::kTimestamp));
      }
      const std::string_view event = p.Bytes(F::kTrackEvent);
      if (!TrackEvent(event, timed, ns, sequence)) {
        return Damage(offset + Offset(bytes, event) + event_damage_at_, "a damaged TrackEvent");
      }
    }
    return absl::OkStatus();
  }


  static size_t Offset(std::string_view whole, std::string_view part) {
    return static_cast<size_t>(part.data() - whole.data());
  }

  template <typename Message>
  static bool Parse(std::string_view bytes, Message *message) {
    return bytes.size() <= static_cast<size_t>(INT_MAX) &&
           message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }
  // ---- track events ----

  // A TrackEvent at `ns` (`timed`: the packet had a timestamp). False when its bytes are damaged
  // (event_damage_at_ then says where in them).
  bool TrackEvent(std::string_view bytes, bool timed, int64_t ns, SequenceState &sequence) {
    uint8_t type = 0;
    bool has_track = false;
    uint64_t track_uuid = 0;
    uint32_t category = kAbsent;
    uint32_t name = kAbsent;
    std::string_view inline_name;
    bool has_inline_name = false;
    bool has_counter = false;
    double counter = 0;
    uint64_t flows = 0;
    if (args_dirty_) {
      args_.Clear();
      args_dirty_ = false;
    }
    size_t at = 0;
    WireField field;
    while (NextWireField(bytes, &at, &field)) {
      switch (field.number) {
        case event::kType:
          if (field.wire_type == 0) type = field.varint <= 4 ? static_cast<uint8_t>(field.varint) : 0;
          break;
        case event::kTrackUuid:
          if (field.wire_type == 0) {
            has_track = true;
            track_uuid = field.varint;
          }
          break;
        case event::kCategoryIids:
          if (category != kAbsent) break;  // the first category decides
          if (field.wire_type == 0) {
            category = sequence.categories.Find(field.varint);
            if (category == kAbsent) category = 0;
          } else if (field.wire_type == 2) {  // packed
            size_t inner = 0;
            uint64_t iid = 0;
            if (ReadWireVarint(field.payload, &inner, &iid)) {
              category = sequence.categories.Find(iid);
              if (category == kAbsent) category = 0;
            }
          }
          break;
        case event::kCategories:
          if (field.wire_type == 2 && category == kAbsent) category = categories_.For(field.payload);
          break;
        case event::kNameIid:
          if (field.wire_type == 0) name = sequence.names.Find(field.varint);
          break;
        case event::kName:
          if (field.wire_type == 2) {
            inline_name = field.payload;
            has_inline_name = true;
          }
          break;
        case event::kCounterValue:
          if (field.wire_type == 0) {
            has_counter = true;
            counter = static_cast<double>(static_cast<int64_t>(field.varint));
          }
          break;
        case event::kDoubleCounterValue:
          if (field.wire_type == 1) {
            has_counter = true;
            counter = std::bit_cast<double>(WireFixed64(field.payload));
          }
          break;
        case event::kFlowIds:
        case event::kTerminatingFlowIds:
          flows += field.wire_type == 1 ? 1 : field.wire_type == 2 ? field.payload.size() / 8 : 0;
          break;
        case event::kFlowIdsOld:
        case event::kTerminatingFlowIdsOld:
          if (field.wire_type == 0) {
            ++flows;
          } else if (field.wire_type == 2) {
            for (char byte : field.payload) flows += (static_cast<unsigned char>(byte) & 0x80) == 0;
          }
          break;
        case event::kDebugAnnotations:
          if (field.wire_type == 2) {
            args_dirty_ = true;
            Arg key = Arg::kOther;
            ArgValue value;
            if (!annotations_.ScanArg(field.payload, sequence, &key, &value)) {
              event_damage_at_ = Offset(bytes, field.payload);
              return false;
            }
            ApplyArg(key, value, field.payload, &args_);
          }
          break;
        case event::kTimestampAbsoluteUs:
          if (field.wire_type == 0 && !timed) {
            ns = static_cast<int64_t>(static_cast<uint64_t>(field.varint) * 1000);
          }
          break;
        case event::kTimestampDeltaUs:
        default:
          break;
      }
    }
    if (at < bytes.size()) {
      event_damage_at_ = at;
      return false;
    }
    trace_->events_in_file += (type == event::kSliceEnd ? 0 : 1) + flows;
    if (type == 0) return true;  // a legacy event without a type: counted, not kept
    if (!has_track) {
      has_track = sequence.has_default_track;
      track_uuid = sequence.default_track;
    }
    const uint32_t track_index = tracks_.TrackAt(track_uuid, sequence);
    TrackInfo &track = tracks_[track_index];
    builder_.NoteTime(ns);
    Pending pending;
    pending.ns = ns;
    pending.type = type;
    if (type != event::kSliceEnd) {
      if (name == kAbsent) name = trace_->names.Intern(has_inline_name ? inline_name : "");
      pending.name = name;
    }
    switch (type) {
      case event::kSliceBegin:
        pending.category = category == kAbsent ? 0 : category;
        DescribeBegin(track, &pending);
        break;
      case event::kSliceEnd:
        if (args_.incomplete) pending.flags |= kActivityIncomplete;
        if (args_.extra.has_thread || args_.extra.has_end_thread) pending.detail = KeepExtra();
        break;
      case event::kInstant:
        if (args_.has_tfprof && trace_->names.Get(name) == "tfprof trace info") {
          --trace_->events_in_file;  // the trace's header, not an event of the recording
          ReadTraceInfo(args_.tfprof, sequence);
          ++infos_read_;
          last_packet_was_info_ = true;
          return true;
        }
        break;
      case event::kCounter:
        pending.aux = std::bit_cast<uint64_t>(has_counter ? counter : 0.0);
        break;
      default:
        break;
    }
    if (track.buffered || ns < track.last_ns) {
      if (!track.buffered) {
        track.buffered = true;
        track.events = open_.Take(track_index);
      }
      track.events.push_back(pending);
    } else {
      track.last_ns = ns;
      Pair(track_index, pending);
    }
    return true;
  }

  // One event of a track, in time order after those before it (open_: the begins not yet ended,
  // per track).
  void Pair(uint32_t track, const Pending &pending) {
    switch (pending.type) {
      case event::kSliceBegin: {
        Pending begin = pending;
        if (begin.slot == UINT32_MAX) {
          begin.slot = static_cast<uint32_t>(trace_->activities.size());
          trace_->activities.emplace_back().name = kHole;
        }
        open_.Begin(track, begin);
        break;
      }
      case event::kSliceEnd:
        // An end whose begin is not in the file is dropped (as the Chrome reader does).
        if (std::optional<Pending> begin = open_.End(track)) {
          EmitSlice(track, *begin, &pending, pending.ns);
        }
        break;
      case event::kInstant:
        EmitInstant(track, pending);
        break;
      case event::kCounter:
        EmitCounter(track, pending);
        break;
      default:
        break;
    }
  }

  uint32_t KeepExtra() {
    extras_.push_back(args_.extra);
    return static_cast<uint32_t>(extras_.size() - 1);
  }

  // What a slice's begin says beyond its time and name, kept in `*pending` (as the Chrome reader
  // makes of the same args).
  void DescribeBegin(TrackInfo &track, Pending *pending) {
    Category &category = categories_[pending->category];
    category.used = true;
    if (category.role.role == Role::kUnknown) ++category.unknown_events;
    const ActivityKind kind = category.role.kind;
    if (args_.incomplete) pending->flags |= kActivityIncomplete;
    if (category.role.role == Role::kStep || kind == ActivityKind::kRange) {
      pending->detail = KeepExtra();
      return;
    }
    if (category.role.role != Role::kActivity) return;
    if (IsGpuWork(kind) || kind == ActivityKind::kGpuAnnotation || kind == ActivityKind::kSync) {
      if (args_.has_device && !track.has_device) {
        track.has_device = true;
        track.device = args_.device;
      }
      if (args_.has_stream && !track.has_stream) {
        track.has_stream = true;
        track.stream = args_.stream;
      }
    }
    if (kind == ActivityKind::kMemcpy) {
      pending->copy = CopyKindOf(trace_->names.Get(pending->name), args_);
    }
    if (kind == ActivityKind::kMemcpy || kind == ActivityKind::kMemset) pending->aux = args_.bytes;
    if (kind == ActivityKind::kRuntimeApi && category.driver) pending->flags |= kActivityDriverApi;
    const std::optional<GpuDetail> detail = GpuDetailOf(
        kind, args_, args_.has_value ? std::optional<double>(args_.value) : std::nullopt,
        trace_->names, trace_->work_shapes);
    if (!detail) return;
    if (trace_->gpu_details.empty()) ReserveGpuDetails();
    pending->detail = trace_->gpu_details.Add(kind, *detail);
  }

  // The activities and GPU details are reserved from the size of the packets (the file's, or
  // what its compressed batches inflate to), so that they are not moved as they grow: a vector
  // grown by doubling holds its old and new copies at once, which set a summary's peak. The
  // estimates err high, as a copy at the last doubling costs the most; untouched capacity costs
  // no memory.
  void ReserveActivities() {
    // tfprof writes ~40 bytes of packets an event (a begin and an end, ~25 bytes of host spans).
    trace_->activities.reserve(
        static_cast<size_t>(std::min<uint64_t>(packet_bytes_ / 20, 50'000'000)));
  }
  void ReserveGpuDetails() {
    // GPU traces have a detail for most launches and GPU events (~80 bytes of packets each).
    trace_->gpu_details.reserve(
        static_cast<size_t>(std::min<uint64_t>(packet_bytes_ / 40, 50'000'000)));
  }

  // The "tfprof" dict of a "tfprof trace info" instant; the last one read is the one that counts.
  void ReadTraceInfo(std::string_view bytes, const SequenceState &sequence) {
    ArgNode root;
    if (annotations_.ReadArgNode(bytes, sequence, 0, &root)) info_ = TraceInfoFrom(root);
  }

  // ---- the end: begins and ends become spans, tracks become rows ----

  void Finish() {
    bool late_counters = false;
    for (uint32_t index = 0; index < tracks_.size(); ++index) {
      TrackInfo &track = tracks_[index];
      if (track.buffered) {
        std::vector<Pending> &events = track.events;
        std::stable_sort(events.begin(), events.end(),
                         [](const Pending &a, const Pending &b) { return a.ns < b.ns; });
        for (const Pending &pending : events) {
          late_counters = late_counters || pending.type == event::kCounter;
          Pair(index, pending);
        }
        std::vector<Pending>().swap(events);
      }
      // Spans still open when the file ends (a killed writer) end at its last timestamp. Track
      // by track, right after its late events are paired (not OpenSpans::EndAll after them all):
      // the steps they make keep the order in which rows were made and equal steps are listed.
      for (const Pending &begin : open_.Take(index)) {
        EmitSlice(index, begin, nullptr, builder_.end_ns());
      }
    }
    // The places of begins that made no activity (steps, ignored categories) go.
    std::vector<Activity> &activities = trace_->activities;
    activities.erase(std::remove_if(activities.begin(), activities.end(),
                                    [](const Activity &activity) { return activity.name == kHole; }),
                     activities.end());
    if (late_counters) {
      std::stable_sort(trace_->counters.begin(), trace_->counters.end(),
                       [](const CounterSample &a, const CounterSample &b) { return a.ns < b.ns; });
    }
    tracks_.PlaceOnRows(range_threads_, pending_steps_);
    tracks_.ResolveRows();
    ApplyInfo();
    builder_.Finish();  // steps sorted, launches linked, steps assigned
  }

  // Whether name `name` is the PyTorch profiler's "ProfilerStep#N" (remembered per name).
  bool ProfilerStepNumber(uint32_t name, int64_t *number) {
    if (name >= profiler_step_names_.size()) profiler_step_names_.resize(trace_->names.size(), 0);
    uint8_t &known = profiler_step_names_[name];
    if (known == 1) return false;
    const bool step = NumberAfter(trace_->names.Get(name), "ProfilerStep#", number);
    known = step ? 2 : 1;
    return step;
  }

  // A span of track `track` (a tracks_ index), kept with that index for a row until the end.
  void EmitSlice(uint32_t track, const Pending &begin, const Pending *end, int64_t end_ns) {
    const Category &category = categories_[begin.category];
    if (category.role.role == Role::kIgnored) return;
    end_ns = std::max(end_ns, begin.ns);
    uint8_t flags = begin.flags;
    if (end == nullptr || (end->flags & kActivityIncomplete) != 0) flags |= kActivityIncomplete;
    const bool has_extra = category.role.role == Role::kStep ||
                           category.role.kind == ActivityKind::kRange;
    const Extra *extra =
        has_extra && begin.detail < extras_.size() ? &extras_[begin.detail] : nullptr;
    int64_t number = 0;
    if (category.role.role == Role::kStep &&
        ((extra != nullptr && extra->has_step) ||
         NumberAfter(trace_->names.Get(begin.name), "step ", &number))) {
      PendingStep step;
      step.number = extra != nullptr && extra->has_step ? extra->step : number;
      // A name of the file's own (a converted PyTorch trace's "ProfilerStep#4") is kept.
      if (!NumberAfter(trace_->names.Get(begin.name), "step ", &number)) step.name = begin.name;
      step.begin_ns = begin.ns;
      step.end_ns = end_ns;
      step.track = track;
      step.has_thread = extra != nullptr && extra->has_thread;
      step.thread = extra != nullptr ? extra->thread : 0;
      step.incomplete = (flags & kActivityIncomplete) != 0;
      step.infos_before = infos_read_;
      pending_steps_.push_back(step);
      return;
    }
    const ActivityKind kind = category.role.role == Role::kActivity ? category.role.kind
                                                                     : ActivityKind::kHostOp;
    if (kind == ActivityKind::kHostOp && ProfilerStepNumber(begin.name, &number)) {
      pytorch_steps_ = true;
      PendingStep step;
      step.number = number;
      step.name = begin.name;
      step.category = builder_.Category(category.text, "step");
      step.begin_ns = begin.ns;
      step.end_ns = end_ns;
      step.track = track;
      step.on_own_row = true;
      step.incomplete = (flags & kActivityIncomplete) != 0;
      step.infos_before = infos_read_;
      pending_steps_.push_back(step);
      return;
    }
    Activity activity;
    activity.begin_ns = begin.ns;
    activity.end_ns = end_ns;
    activity.name = begin.name;
    activity.kind = kind;
    activity.copy = begin.copy;
    activity.flags = flags;
    activity.track = track;
    // The file's category where it is not the kind's own (PyTorch's "cpu_op").
    if (!category.text.empty()) {
      activity.category = builder_.Category(category.text, CategoryOfActivity(kind, flags));
    }
    if (kind == ActivityKind::kRange) {
      // The threads that began and ended it, placed once the tracks are known.
      const Extra *end_extra =
          end != nullptr && end->detail < extras_.size() ? &extras_[end->detail] : nullptr;
      if (extra != nullptr || end_extra != nullptr) {
        Extra threads = extra != nullptr ? *extra : Extra();
        if (end_extra != nullptr && end_extra->has_end_thread) {
          threads.has_end_thread = true;
          threads.end_thread = end_extra->end_thread;
        }
        activity.detail = static_cast<uint32_t>(range_threads_.size());
        range_threads_.push_back(threads);
      }
    } else {
      activity.detail = begin.detail;
      activity.bytes = begin.aux;
    }
    if (begin.slot < trace_->activities.size()) {
      trace_->activities[begin.slot] = activity;
    } else {
      trace_->activities.push_back(activity);
    }
  }

  void EmitInstant(uint32_t track, const Pending &pending) {
    Activity activity;
    activity.begin_ns = pending.ns;
    activity.end_ns = pending.ns;
    activity.name = pending.name;
    activity.kind = ActivityKind::kInstant;
    activity.track = track;
    trace_->activities.push_back(activity);
  }

  void EmitCounter(uint32_t track, const Pending &pending) {
    CounterSample sample;
    sample.ns = pending.ns;
    sample.value = std::bit_cast<double>(pending.aux);
    sample.name = pending.name;  // the counter's, when its track has no name
    sample.track = track;
    trace_->counters.push_back(sample);
  }

  void ApplyInfo() {
    Trace &trace = *trace_;
    for (const Category &category : categories_.all()) {
      if (category.unknown_events > 0) {
        trace.unknown_categories.emplace_back(category.text, category.unknown_events);
      }
    }
    std::sort(trace.unknown_categories.begin(), trace.unknown_categories.end());
    if (clocks_.wall_offset()) trace.wall_offset_ns = clocks_.wall_offset();
    if (!info_.seen) {
      bool pytorch = pytorch_steps_;
      for (const Category &category : categories_.all()) {
        pytorch = pytorch || (category.used && category.pytorch);
      }
      trace.producer = pytorch ? Producer::kPytorch : Producer::kOther;
      return;
    }
    trace.producer = Producer::kTfprof;
    ApplyTraceInfo(info_, tracks_, trace_);
  }

  const uint64_t file_size_;
  uint64_t packet_bytes_;  // the packets' size: the file's, times its compression ratio
  bool saw_compressed_ = false;
  ProgressListener *const progress_;
  FileBytes *const file_;
  InflateAhead *const ahead_;
  Trace *const trace_;
  std::string progress_what_;

  SequenceTable sequences_;
  PerfettoClocks clocks_;
  CategoryTable categories_;
  AnnotationTables annotations_;
  TraceBuilder builder_;
  PerfettoTracks tracks_;
  OpenSpans<Pending> open_;  // per tracks_ index

  // The batch of compressed_packets being read: its packets, and its payload's offset in the file.
  static constexpr uint64_t kNoBatch = UINT64_MAX;
  std::string inflated_;
  uint64_t batch_offset_ = kNoBatch;

  EventArgs args_;
  size_t event_damage_at_ = 0;
  bool args_dirty_ = true;
  std::vector<Extra> extras_;
  std::vector<Extra> range_threads_;  // per range activity, until PlaceOnRows()
  std::vector<PendingStep> pending_steps_;
  uint64_t infos_read_ = 0;  // "tfprof trace info" packets: one ends each piece of a stream
  bool last_packet_was_info_ = false;
  std::vector<uint8_t> profiler_step_names_;  // per name: 0 unknown, 1 no, 2 "ProfilerStep#N"
  bool pytorch_steps_ = false;
  TraceInfo info_;
};

// The wire type a TracePacket's field of that number has, for the ones a trace starts with;
// -1 for the rest.
int FirstPacketFieldWireType(uint64_t number) {
  switch (number) {
    case 3:   // trusted_uid
    case 8:   // timestamp
    case 10:  // trusted_packet_sequence_id
    case 13:  // sequence_flags
    case 41:  // incremental_state_cleared
    case 42:  // previous_packet_dropped
    case 58:  // timestamp_clock_id
    case 79:  // trusted_pid
    case 87:  // first_packet_on_sequence
      return 0;
    case 6:   // clock_snapshot
    case 11:  // track_event
    case 12:  // interned_data
    case 33:  // trace_config
    case 35:  // trace_stats
    case 36:  // synchronization_marker
    case 50:  // compressed_packets (the tracing service's, and tfprof's after its first packet)
    case 59:  // trace_packet_defaults
    case 60:  // track_descriptor
      return 2;
    default:
      return -1;
  }
}

}  // namespace

bool LooksLikePerfettoTrace(std::string_view head) {
  size_t at = 0;
  // Empty packets may come first; the first one with content decides.
  for (int packets = 0; packets < 16 && at < head.size(); ++packets) {
    if (static_cast<unsigned char>(head[at]) != ((kTracePacketField << 3) | 2)) return false;
    ++at;
    uint64_t length = 0;
    if (!ReadWireVarint(head, &at, &length)) return false;
    if (length == 0) continue;
    uint64_t tag = 0;
    if (!ReadWireVarint(head, &at, &tag)) return false;
    const int wire_type = FirstPacketFieldWireType(tag >> 3);
    return wire_type >= 0 && static_cast<int>(tag & 7) == wire_type;
  }
  return false;
}

absl::Status ReadPerfettoTrace(int fd, uint64_t file_size, ProgressListener *progress,
                               Trace *trace) {
  trace->format = Format::kPerfetto;
  FileBytes bytes;
  if (absl::Status status = bytes.Open(fd, file_size, trace->path); !status.ok()) return status;
  // Declared after `bytes`, so that its thread ends before the file is unmapped.
  std::optional<InflateAhead> ahead;
  if (DefaultReadThreads() > 1) ahead.emplace(bytes.data());
  PerfettoReader reader(file_size, progress, trace, &bytes, ahead ? &*ahead : nullptr);
  return reader.Read(bytes.data());
}

}  // namespace tfprof
