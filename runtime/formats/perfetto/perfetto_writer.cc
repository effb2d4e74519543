#include "runtime/formats/perfetto/perfetto_writer.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/model/event_args.h"
#include "runtime/model/gpu_names.h"
#include "runtime/model/trace_info_fields.h"
#include "runtime/formats/chrome/chrome_categories.h"
#include "runtime/formats/perfetto/perfetto_fields.h"
#include "runtime/common/proto_wire.h"
#include "runtime/common/string_view_bridge.h"
#include "tfprof/tfprof.h"

namespace tfprof {

namespace {

using namespace perfetto_fields;  // NOLINT: the field numbers, by message

constexpr uint64_t kSequenceId = 1;
constexpr uint64_t kIncrementalStateCleared = packet::kSeqIncrementalStateCleared;
constexpr uint64_t kNeedsIncrementalState = packet::kSeqNeedsIncrementalState;
constexpr uint32_t kDeltaClock = kFirstSequenceClock;  // the sequence's incremental clock

// Rows no thread can have, as in the JSON (chrome_json_writer.cc): tids renumbered because
// another row of their process took theirs.
constexpr int64_t kRenumberedRowTidBase = 1000000000;

// The proto_wire.h writers, into a WireBuffer (beside those into a std::string).
using ::tfprof::AppendLengthDelimited;
using ::tfprof::AppendVarintField;

[[gnu::always_inline]] inline void AppendVarintField(uint32_t field, uint64_t value,
                                                     WireBuffer &out) {
  char *at = out.Room(20);
  out.Advance(EncodeVarint(value, EncodeVarint(uint64_t{field} << 3, at)));
}

[[gnu::always_inline]] inline void AppendLengthDelimited(uint32_t field, std::string_view bytes,
                                                         WireBuffer &out) {
  char *at = out.Room(20 + bytes.size());
  char *end = EncodeVarint(bytes.size(), EncodeVarint((uint64_t{field} << 3) | 2, at));
  if (!bytes.empty()) std::memcpy(end, bytes.data(), bytes.size());
  out.Advance(end + bytes.size());
}

[[gnu::always_inline]] inline void AppendSignedField(uint32_t field, int64_t value,
                                                     WireBuffer &out) {
  AppendVarintField(field, static_cast<uint64_t>(value), out);
}

void AppendFixed64Field(uint32_t field, uint64_t bits, WireBuffer &out) {
  char *at = EncodeVarint((uint64_t{field} << 3) | 1, out.Room(20));
  for (int i = 0; i < 8; ++i) *at++ = static_cast<char>(bits >> (8 * i));
  out.Advance(at);
}

void AppendDoubleField(uint32_t field, double value, WireBuffer &out) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  AppendFixed64Field(field, bits, out);
}


void AppendSignedField(uint32_t field, int64_t value, std::string &out) {
  AppendVarintField(field, static_cast<uint64_t>(value), out);
}


// Debug annotations with inline names, for the rare trace info packet.
class Dict {
 public:
  void Int(std::string_view name, int64_t value) {
    std::string entry;
    AppendLengthDelimited(annotation::kName, name, entry);
    AppendSignedField(annotation::kIntValue, value, entry);
    Add(entry);
  }
  void Uint(std::string_view name, uint64_t value) {
    std::string entry;
    AppendLengthDelimited(annotation::kName, name, entry);
    AppendVarintField(annotation::kUintValue, value, entry);
    Add(entry);
  }
  void Text(std::string_view name, std::string_view value) {
    std::string entry;
    AppendLengthDelimited(annotation::kName, name, entry);
    AppendLengthDelimited(annotation::kStringValue, value, entry);
    Add(entry);
  }
  // A dict or array entry named `name` whose content (dict_entries or array_values) is `body`.
  void Nested(std::string_view name, const std::string &body) {
    std::string entry;
    AppendLengthDelimited(annotation::kName, name, entry);
    entry += body;
    Add(entry);
  }
  const std::string &entries() const { return entries_; }

 private:
  void Add(const std::string &entry) { AppendLengthDelimited(annotation::kDictEntries, entry, entries_); }
  std::string entries_;
};

// `entries` (of a Dict) as the value of an array element: {dict_entries...}.
void AppendArrayElement(const std::string &entries, std::string &out) {
  AppendLengthDelimited(annotation::kArrayValues, entries, out);
}

}  // namespace

void WireBuffer::Grow(size_t bytes) {
  storage_.resize(std::max(storage_.size() * 2, size_ + bytes + 256));
}

std::string PerfettoWriter::Begin(int64_t /*start_wall_ns*/) {
  std::string body;
  AppendVarintField(packet::kSequenceId, kSequenceId, body);
  AppendVarintField(packet::kFirstPacketOnSequence, 1, body);
  AppendVarintField(packet::kSequenceFlags, kIncrementalStateCleared, body);
  std::string defaults;
  AppendVarintField(packet::kTimestampClockId, kDeltaClock, defaults);
  AppendLengthDelimited(packet::kDefaults, defaults, body);
  std::string out;
  AppendLengthDelimited(kTracePacket, body, out);
  return out;
}

void PerfettoWriter::Restart() {
  restart_pending_ = true;
  clock_known_ = false;
  std::fill(name_iids_.begin(), name_iids_.end(), 0);
  std::fill(op_text_iids_.begin(), op_text_iids_.end(), 0);
  std::fill(std::begin(category_iids_), std::end(category_iids_), 0);
  own_name_iids_.clear();
  category_text_iids_.clear();
  annotation_iids_.clear();
  std::fill(std::begin(recent_annotations_), std::end(recent_annotations_), RecentAnnotation{});
  string_iids_.clear();
  next_name_iid_ = next_category_iid_ = next_annotation_iid_ = next_string_iid_ = 1;
  std::fill(process_described_.begin(), process_described_.end(), false);
  std::fill(track_described_.begin(), track_described_.end(), false);
  extra_described_.clear();
  for (Row &row : rows_) {
    for (size_t lane = 0; lane < row.lanes.size(); ++lane) {
      row.lanes[lane].open.clear();
      KeepFit(row, lane);
    }
    row.ends = {};
  }
}

// ---- packets ----------------------------------------------------------------------------------

void PerfettoWriter::StartPacket(int64_t ns) {
  packet_.clear();
  event_.clear();
  interned_.clear();
  Timestamp(ns);
}

void PerfettoWriter::RestartIfPending() {
  if (!restart_pending_) return;
  // The sequence starts again: what it interned and described before may be lost.
  restart_pending_ = false;
  std::string body;
  AppendVarintField(packet::kSequenceId, kSequenceId, body);
  AppendVarintField(packet::kSequenceFlags, kIncrementalStateCleared, body);
  AppendVarintField(packet::kPreviousPacketDropped, 1, body);
  std::string defaults;
  AppendVarintField(packet::kTimestampClockId, kDeltaClock, defaults);
  AppendLengthDelimited(packet::kDefaults, defaults, body);
  AppendLengthDelimited(kTracePacket, body, *out_);
}

// The packet's timestamp on the incremental clock; a clock snapshot first when time goes back
// (or the clock is not set up yet), which restarts the deltas at `ns`.
void PerfettoWriter::Timestamp(int64_t ns) {
  const int64_t shifted = std::max<int64_t>(ns + shift_ns_, 0);
  if (!clock_known_ || shifted < clock_ns_) {
    std::string snapshot;
    std::string clock;
    AppendVarintField(1, kDeltaClock, clock);
    AppendVarintField(2, static_cast<uint64_t>(shifted), clock);
    AppendVarintField(3, 1, clock);  // is_incremental
    AppendLengthDelimited(1, clock, snapshot);
    clock.clear();
    AppendVarintField(1, kBootTime, clock);
    AppendVarintField(2, static_cast<uint64_t>(shifted), clock);
    AppendLengthDelimited(1, clock, snapshot);
    if (wall_offset_ns_) {
      clock.clear();
      AppendVarintField(1, kRealTime, clock);
      AppendVarintField(2, static_cast<uint64_t>(shifted - shift_ns_ + *wall_offset_ns_), clock);
      AppendLengthDelimited(1, clock, snapshot);
    }
    std::string body;
    AppendVarintField(packet::kTimestamp, static_cast<uint64_t>(shifted), body);
    AppendVarintField(packet::kTimestampClockId, kBootTime, body);
    AppendVarintField(packet::kSequenceId, kSequenceId, body);
    AppendLengthDelimited(packet::kClockSnapshot, snapshot, body);
    AppendLengthDelimited(kTracePacket, body, *out_);
    clock_known_ = true;
    clock_ns_ = shifted;
  }
  AppendVarintField(packet::kTimestamp, static_cast<uint64_t>(shifted - clock_ns_), packet_);
  clock_ns_ = shifted;
}

void PerfettoWriter::FinishEventPacket() {
  AppendVarintField(packet::kSequenceId, kSequenceId, packet_);
  AppendVarintField(packet::kSequenceFlags, kNeedsIncrementalState, packet_);
  if (!interned_.empty()) AppendLengthDelimited(packet::kInternedData, interned_, packet_);
  AppendLengthDelimited(packet::kTrackEvent, event_, packet_);
  char head[20];
  char *end = EncodeVarint(std::string_view(packet_).size(), EncodeVarint((kTracePacket << 3) | 2, head));
  out_->append(head, static_cast<size_t>(end - head));
  out_->append(std::string_view(packet_));
}

namespace {
// The iid of `text` in `iids`, interned in `interned_data` under `field` on first use.
uint64_t Intern(absl::flat_hash_map<std::string, uint64_t> &iids, uint64_t &next,
                std::string_view text, uint32_t field, WireBuffer &interned_data) {
  // absl's string maps look up a string_view without a copy.
  auto found = iids.find(ToAbsl(text));
  if (found != iids.end()) return found->second;
  const uint64_t iid = next++;
  iids.emplace(std::string(text), iid);
  std::string entry;
  AppendVarintField(1, iid, entry);
  AppendLengthDelimited(2, text, entry);
  AppendLengthDelimited(field, entry, interned_data);
  return iid;
}
}  // namespace

uint64_t PerfettoWriter::NameIid(const Trace &trace, uint32_t name) {
  if (name >= name_iids_.size()) name_iids_.resize(trace.names.size(), 0);
  uint64_t &iid = name_iids_[name];
  if (iid == 0) {
    iid = next_name_iid_++;
    std::string entry;
    AppendVarintField(1, iid, entry);
    AppendLengthDelimited(2, trace.names.Get(name), entry);
    AppendLengthDelimited(interned::kEventNames, entry, interned_);
  }
  return iid;
}

uint64_t PerfettoWriter::OwnNameIid(std::string_view name) {
  return Intern(own_name_iids_, next_name_iid_, name, interned::kEventNames, interned_);
}

uint64_t PerfettoWriter::OpTextIid(const Trace &trace, uint32_t name) {
  if (name >= op_text_iids_.size()) op_text_iids_.resize(trace.names.size(), 0);
  uint64_t &iid = op_text_iids_[name];
  if (iid == 0) iid = StringIid(trace.names.Get(name));
  return iid;
}

uint64_t PerfettoWriter::ActivityCategoryIid(const Trace &trace, const Activity &activity) {
  // The file's own category where it was not the kind's (PyTorch's "cpu_op").
  if (activity.category != kDefaultCategory) {
    const std::string_view category = FileCategory(trace, activity.category);
    if (!category.empty()) return CategoryIid(category);
  }
  const uint32_t code = uint32_t{static_cast<uint8_t>(activity.kind)} * 2 +
                        ((activity.flags & kActivityDriverApi) != 0 ? 1u : 0u);
  if (code >= 64) return CategoryIid(CategoryOfActivity(activity.kind, activity.flags));
  uint64_t &iid = category_iids_[code];
  if (iid == 0) {
    iid = CategoryIid(activity.kind == ActivityKind::kInstant ? std::string_view("user_annotation")
                      : activity.kind == ActivityKind::kRange
                          ? std::string_view("range")
                          : CategoryOfActivity(activity.kind, activity.flags));
  }
  return iid;
}

uint64_t PerfettoWriter::CategoryIid(std::string_view category) {
  return Intern(category_text_iids_, next_category_iid_, category, interned::kEventCategories,
                interned_);
}

uint64_t PerfettoWriter::AnnotationIid(std::string_view name) {
  // Callers pass string literals only, so an address names one text for the writer's life.
  const auto address = reinterpret_cast<uintptr_t>(name.data());
  RecentAnnotation &recent = recent_annotations_[(uint64_t{address} * 0x9E3779B97F4A7C15u) >>
                                                 (64 - kRecentAnnotationBits)];
  if (recent.text == name.data() && recent.iid != 0) return recent.iid;
  recent.text = name.data();
  recent.iid = Intern(annotation_iids_, next_annotation_iid_, name, interned::kAnnotationNames,
                      interned_);
  return recent.iid;
}

uint64_t PerfettoWriter::StringIid(std::string_view text) {
  return Intern(string_iids_, next_string_iid_, text, interned::kAnnotationStrings, interned_);
}

// ---- tracks -----------------------------------------------------------------------------------

uint64_t PerfettoWriter::ProcessUuid(uint32_t process) { return process_uuids_[process]; }

void PerfettoWriter::DescribeTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name,
                                   const int64_t *sort_index) {
  auto [found, added] = extra_described_.try_emplace(uuid, true);
  if (!added) return;
  std::string descriptor;
  AppendVarintField(track::kUuid, uuid, descriptor);
  if (parent_uuid != 0) AppendVarintField(track::kParentUuid, parent_uuid, descriptor);
  AppendLengthDelimited(track::kName, name, descriptor);
  if (sort_index != nullptr) AppendSignedField(track::kSiblingOrderRank, *sort_index, descriptor);
  std::string body;
  AppendVarintField(packet::kSequenceId, kSequenceId, body);
  AppendLengthDelimited(packet::kTrackDescriptor, descriptor, body);
  AppendLengthDelimited(kTracePacket, body, *out_);
}

// Gives processes and tracks new since the last call their uuids, pids and tids (renumbered
// where two share one, as the JSON does), and describes those not described yet.
void PerfettoWriter::Describe(const Trace &trace) {
  for (size_t process = process_uuids_.size(); process < trace.processes.size(); ++process) {
    int64_t pid = trace.processes[process].pid;
    if (pid_owner_.contains(pid)) pid = highest_pid_ + 1;
    pid_owner_.emplace(pid, static_cast<uint32_t>(process));
    highest_pid_ = std::max(highest_pid_, pid);
    pids_.push_back(pid);
    process_uuids_.push_back(NewUuid());
  }
  process_described_.resize(trace.processes.size(), false);
  for (size_t process = 0; process < trace.processes.size(); ++process) {
    if (process_described_[process]) continue;
    process_described_[process] = true;
    const Process &info = trace.processes[process];
    std::string descriptor_process;
    AppendSignedField(1, pids_[process], descriptor_process);
    if (!info.name.empty()) AppendLengthDelimited(6, info.name, descriptor_process);
    if (!info.labels.empty()) AppendLengthDelimited(8, info.labels, descriptor_process);
    AppendSignedField(3, info.sort_index.value_or(static_cast<int64_t>(process)), descriptor_process);
    std::string descriptor;
    AppendVarintField(track::kUuid, process_uuids_[process], descriptor);
    AppendLengthDelimited(track::kProcess, descriptor_process, descriptor);
    std::string body;
    AppendVarintField(packet::kSequenceId, kSequenceId, body);
    AppendLengthDelimited(packet::kTrackDescriptor, descriptor, body);
    AppendLengthDelimited(kTracePacket, body, *out_);
  }
  for (size_t index = track_uuids_.size(); index < trace.tracks.size(); ++index) {
    const Track &info = trace.tracks[index];
    const int64_t pid = info.process < pids_.size() ? pids_[info.process] : 0;
    int64_t tid = info.tid;
    if (tid >= kRenumberedRowTidBase ||
        !tid_owner_.emplace(std::make_pair(pid, tid), static_cast<uint32_t>(index)).second) {
      tid = kRenumberedRowTidBase + static_cast<int64_t>(index);
    }
    tids_.push_back(tid);
    track_uuids_.push_back(NewUuid());
  }
  track_described_.resize(trace.tracks.size(), false);
}

// A row (rows_ index) whose first lane is the track `track_uuid`.
uint32_t PerfettoWriter::NewRow(uint64_t track_uuid, uint64_t parent_uuid,
                                std::string_view name) {
  Row row;
  row.parent_uuid = parent_uuid;
  row.lane_name = std::string(name);
  row.lanes.push_back(Lane{track_uuid, {}, INT64_MIN, {}});
  row.fit.Add(INT64_MIN, INT64_MIN);
  rows_.push_back(std::move(row));
  return static_cast<uint32_t>(rows_.size() - 1);
}

uint64_t PerfettoWriter::LaneUuid(Row &row, size_t lane) {
  if (lane == row.lanes.size()) {
    row.lanes.push_back(Lane{NewUuid(), {}, INT64_MIN, {}});
    row.fit.Add(INT64_MIN, INT64_MIN);
  }
  return row.lanes[lane].uuid;
}

// A lane with a slice open takes only slices that nest in it; an empty one, those that start
// after its last END.
void PerfettoWriter::KeepFit(Row &row, size_t lane) {
  const Lane &at = row.lanes[lane];
  if (at.open.empty()) {
    row.fit.Set(lane, at.written_until_ns, INT64_MIN);
  } else {
    row.fit.Set(lane, INT64_MAX, at.open.back().end_ns);
  }
}

// ---- slices -----------------------------------------------------------------------------------

// An END is the most frequent packet and all but its timestamp is the lane's: written in one
// append from the lane's cached tail.
void PerfettoWriter::SliceEnd(Lane &lane, int64_t ns) {
  if (lane.end_tail.empty()) {
    std::string event;
    AppendVarintField(event::kType, event::kSliceEnd, event);
    AppendVarintField(event::kTrackUuid, lane.uuid, event);
    AppendVarintField(packet::kSequenceId, kSequenceId, lane.end_tail);
    AppendVarintField(packet::kSequenceFlags, kNeedsIncrementalState, lane.end_tail);
    AppendLengthDelimited(packet::kTrackEvent, event, lane.end_tail);
  }
  packet_.clear();
  Timestamp(ns);  // may write a clock snapshot first
  const std::string_view timestamp = packet_;
  char bytes[64];
  if (lane.end_tail.size() + timestamp.size() + 4 > sizeof bytes) {
    event_.clear();
    interned_.clear();
    AppendVarintField(event::kType, event::kSliceEnd, event_);
    AppendVarintField(event::kTrackUuid, lane.uuid, event_);
    FinishEventPacket();
    return;
  }
  char *at = EncodeVarint(timestamp.size() + lane.end_tail.size(),
                          EncodeVarint((kTracePacket << 3) | 2, bytes));
  std::memcpy(at, timestamp.data(), timestamp.size());
  at += timestamp.size();
  std::memcpy(at, lane.end_tail.data(), lane.end_tail.size());
  at += lane.end_tail.size();
  out_->append(bytes, static_cast<size_t>(at - bytes));
}

// Ends, in time order, the slices of every lane of `row` that end by `ns`. A lane's slices nest,
// so its top one ends first; ties go to the lowest lane.
void PerfettoWriter::EndBefore(Row &row, int64_t ns) {
  while (!row.ends.empty() && row.ends.top().first <= ns) {
    const auto [end_ns, index] = row.ends.top();
    row.ends.pop();
    Lane &lane = row.lanes[index];
    lane.open.pop_back();
    lane.written_until_ns = std::max(lane.written_until_ns, end_ns);
    KeepFit(row, index);
    SliceEnd(lane, end_ns);
  }
}

void PerfettoWriter::EndAll(Row &row) { EndBefore(row, std::numeric_limits<int64_t>::max()); }

// The first lane where the slice fits: nested in the lane's open slice, or after its last END.
PerfettoWriter::Lane &PerfettoWriter::Place(Row &row, int64_t begin_ns, int64_t end_ns) {
  EndBefore(row, begin_ns);
  const size_t index = row.fit.Find(begin_ns, end_ns);
  const uint64_t uuid = LaneUuid(row, index);  // a new lane when none fits
  if (index > 0) DescribeTrack(uuid, row.lanes[0].uuid, row.lane_name, nullptr);
  Lane &lane = row.lanes[index];
  lane.open.push_back(Open{end_ns});
  row.ends.emplace(end_ns, static_cast<uint32_t>(index));
  KeepFit(row, index);
  return lane;
}

// WriteActivityArgs()'s output (runtime/model/event_args.h): each arg a debug annotation of the
// event being written, under the table's key, interned.
class PerfettoWriter::Annotations {
 public:
  Annotations(PerfettoWriter &writer, const Trace &trace) : writer_(writer), trace_(trace) {}

  void Int(EventArg arg, int64_t value) {
    Begin(arg);
    AppendSignedField(annotation::kIntValue, value, writer_.annotation_);
    End();
  }
  void Uint(EventArg arg, uint64_t value) {
    Begin(arg);
    AppendVarintField(annotation::kUintValue, value, writer_.annotation_);
    End();
  }
  void Text(EventArg arg, std::string_view value) {
    Begin(arg);
    AppendVarintField(annotation::kStringValueIid, writer_.StringIid(value), writer_.annotation_);
    End();
  }
  void Triple(EventArg arg, const int32_t (&values)[3]) {
    Begin(arg);
    for (int axis = 0; axis < 3; ++axis) {
      std::string element;
      AppendSignedField(annotation::kIntValue, values[axis], element);
      AppendLengthDelimited(annotation::kArrayValues, element, writer_.annotation_);
    }
    End();
  }
  void Double(EventArg arg, double value) {
    Begin(arg);
    AppendDoubleField(annotation::kDoubleValue, value, writer_.annotation_);
    End();
  }
  void Name(EventArg arg, uint32_t name) {
    Begin(arg);
    AppendVarintField(annotation::kStringValueIid, writer_.OpTextIid(trace_, name),
                      writer_.annotation_);
    End();
  }
  void True(EventArg arg) {
    Begin(arg);
    AppendVarintField(annotation::kBoolValue, 1, writer_.annotation_);
    End();
  }

 private:
  void Begin(EventArg arg) {
    writer_.annotation_.clear();
    AppendVarintField(annotation::kNameIid, writer_.AnnotationIid(KeyOf(arg)), writer_.annotation_);
  }
  void End() {
    AppendLengthDelimited(event::kDebugAnnotations, writer_.annotation_, writer_.event_);
  }

  PerfettoWriter &writer_;
  const Trace &trace_;
};

void PerfettoWriter::SliceBegin(const Trace &trace, const Activity &activity,
                                uint64_t track_uuid, uint64_t flow_out, uint64_t flow_in) {
  StartPacket(activity.begin_ns);
  const bool instant = activity.kind == ActivityKind::kInstant;
  AppendVarintField(event::kType, instant ? event::kInstant : event::kSliceBegin, event_);
  AppendVarintField(event::kTrackUuid, track_uuid, event_);
  AppendVarintField(event::kNameIid, NameIid(trace, activity.name), event_);
  AppendVarintField(event::kCategoryIids, ActivityCategoryIid(trace, activity), event_);
  if (flow_out != 0) AppendFixed64Field(event::kFlowIds, flow_out, event_);
  if (flow_in != 0) AppendFixed64Field(event::kTerminatingFlowIds, flow_in, event_);

  const Track &row = trace.tracks[activity.track];
  const std::optional<GpuDetail> gpu_detail = ActivityGpuDetail(trace, activity);
  const GpuDetail *detail = gpu_detail ? &*gpu_detail : nullptr;
  Annotations args(*this, trace);
  if (activity.kind == ActivityKind::kRange) {
    // Ranges sit on their process's track of the name: say which threads began and ended them.
    args.Int(EventArg::kThread, tids_[activity.track]);
    if (activity.detail < trace.tracks.size() && activity.detail != activity.track) {
      args.Int(EventArg::kEndThread, tids_[activity.detail]);
    }
  }
  WriteActivityArgs(trace, activity, row, detail, args);
  FinishEventPacket();
}

void PerfettoWriter::StepBegin(const Trace &trace, const Step &step, uint64_t track_uuid) {
  StartPacket(step.begin_ns);
  AppendVarintField(event::kType, event::kSliceBegin, event_);
  AppendVarintField(event::kTrackUuid, track_uuid, event_);
  AppendVarintField(event::kCategoryIids, CategoryIid("step"), event_);
  // Step names are few per trace but not in the model's table: interned as strings of their own.
  // A step the file named (PyTorch's "ProfilerStep#4") keeps its name.
  const std::string name = step.name < trace.names.size() ? trace.names.Get(step.name)
                                                          : absl::StrCat("step ", step.number);
  AppendVarintField(
      event::kNameIid,
      OwnNameIid(name), event_);
  Annotations args(*this, trace);
  args.Int(EventArg::kStep, step.number);
  if (step.track < trace.tracks.size()) args.Int(EventArg::kThread, tids_[step.track]);
  if (step.incomplete) args.True(EventArg::kIncomplete);
  FinishEventPacket();
}

void PerfettoWriter::FlushBatch(std::string &out) {
  if (batch_.empty()) return;
  if (zlib_level_ == kUncompressed) {
    out += batch_;
  } else {
    if (!deflater_) deflater_.emplace(zlib_level_);
    deflater_->AppendBatch(batch_, out);
  }
  batch_.clear();
}

void PerfettoWriter::Append(const Trace &trace, bool /*last*/, int64_t /*end_ns*/,
                            std::string &out, const Drain &drain) {
  // Packets go to batch_ whole (each emitter appends one complete packet), so a batch always
  // ends between packets.
  batch_.clear();
  out_ = &batch_;
  wall_offset_ns_ = trace.wall_offset_ns;
  RestartIfPending();
  if (!any_time_ && !wrote_events_) {
    // Perfetto's times are unsigned: a trace with times before its clock's zero (a merge that
    // aligned inputs backwards) is shifted as a whole.
    int64_t first = 0;
    for (const Activity &activity : trace.activities) first = std::min(first, activity.begin_ns);
    for (const Step &step : trace.steps) first = std::min(first, step.begin_ns);
    for (const CounterSample &sample : trace.counters) first = std::min(first, sample.ns);
    shift_ns_ = -first;
  }
  Describe(trace);
  const auto maybe_drain = [&] {
    if (batch_.size() >= kBatchBytes) FlushBatch(out);
    if (drain && out.size() >= kDrainBytes) drain(out);
  };
  const auto note_time = [&](int64_t begin_ns, int64_t end_ns) {
    if (!any_time_) {
      first_ns_ = begin_ns;
      last_ns_ = end_ns;
      any_time_ = true;
      return;
    }
    first_ns_ = std::min(first_ns_, begin_ns);
    last_ns_ = std::max(last_ns_, end_ns);
  };
  const auto describe_row_track = [&](uint32_t index) {
    const uint64_t uuid = track_uuids_[index];
    if (track_described_[index]) return uuid;
    track_described_[index] = true;
    const Track &info = trace.tracks[index];
    std::string descriptor;
    AppendVarintField(track::kUuid, uuid, descriptor);
    AppendVarintField(track::kParentUuid, process_uuids_[info.process], descriptor);
    if (info.kind == TrackKind::kHostThread) {
      std::string thread;
      AppendSignedField(1, pids_[info.process], thread);
      AppendSignedField(2, tids_[index], thread);
      AppendLengthDelimited(5, RowName(info), thread);
      AppendLengthDelimited(track::kThread, thread, descriptor);
    } else {
      AppendLengthDelimited(track::kName, RowName(info), descriptor);
    }
    if (info.sort_index) AppendSignedField(track::kSiblingOrderRank, *info.sort_index, descriptor);
    std::string body;
    AppendVarintField(packet::kSequenceId, kSequenceId, body);
    AppendLengthDelimited(packet::kTrackDescriptor, descriptor, body);
    AppendLengthDelimited(kTracePacket, body, *out_);
    return uuid;
  };

  // Steps: one row per process and marking thread.
  {
    std::vector<std::vector<uint32_t>> by_row;
    std::vector<uint32_t> row_ids;
    absl::flat_hash_map<uint32_t, size_t> slot;
    std::vector<size_t> rows_per_process(trace.processes.size(), 0);
    for (uint32_t index = 0; index < trace.steps.size(); ++index) {
      const Step &step = trace.steps[index];
      if (step.process >= trace.processes.size()) continue;
      const uint32_t marking = step.track < trace.tracks.size() ? step.track : kNoTrack;
      const uint64_t key = (uint64_t{step.process} << 32) | marking;
      auto found = steps_row_.find(key);
      if (found == steps_row_.end()) {
        // Several threads marking steps in one process get a row each, named after the thread.
        size_t others = 0;
        for (const auto &[other, row] : steps_row_) others += (other >> 32) == step.process;
        const std::string name = marking == kNoTrack || others == 0
                                     ? std::string("Steps")
                                     : absl::StrCat("Steps (", RowName(trace.tracks[marking]), ")");
        const uint64_t uuid = NewUuid();
        found = steps_row_.emplace(key, NewRow(uuid, process_uuids_[step.process], name)).first;
      }
      auto [at, added] = slot.try_emplace(found->second, by_row.size());
      if (added) {
        by_row.emplace_back();
        row_ids.push_back(found->second);
      }
      by_row[at->second].push_back(index);
    }
    for (size_t group = 0; group < by_row.size(); ++group) {
      Row &row = rows_[row_ids[group]];
      const uint64_t parent = row.parent_uuid;
      DescribeTrack(row.lanes[0].uuid, parent, row.lane_name, nullptr);
      std::vector<uint32_t> &order = by_row[group];
      SortEnclosingFirst(trace.steps, order);
      for (uint32_t index : order) {
        const Step &step = trace.steps[index];
        // The thread that marked it, which its annotation names, is described.
        if (step.track < trace.tracks.size()) describe_row_track(step.track);
        note_time(step.begin_ns, step.end_ns);
        Lane &lane = Place(row, step.begin_ns, step.end_ns);
        StepBegin(trace, step, lane.uuid);
        maybe_drain();
      }
      EndAll(row);
    }
  }

  // Each correlation id's earliest GPU work of the batch, where its launch's flow ends.
  absl::flat_hash_map<uint64_t, std::pair<int64_t, uint32_t>> flow_ends;  // id -> (ns, activity)
  const auto flow_id = [&](const Activity &activity, const GpuDetail &detail) {
    const uint32_t process = trace.tracks[activity.track].process;
    return ((uint64_t{trace.processes[process].group} + 1) << 32) | detail.correlation;
  };
  for (uint32_t index = 0; index < trace.activities.size(); ++index) {
    const Activity &activity = trace.activities[index];
    const GpuDetail *work = IsGpuWork(activity.kind) ? trace.gpu_details.Work(activity.detail)
                                                     : nullptr;
    if (work == nullptr || activity.track >= trace.tracks.size() ||
        trace.tracks[activity.track].process >= trace.processes.size()) {
      continue;
    }
    const GpuDetail &detail = *work;
    if ((detail.fields & kGpuHasCorrelation) == 0) continue;
    auto [found, added] = flow_ends.try_emplace(flow_id(activity, detail), activity.begin_ns, index);
    if (!added && activity.begin_ns < found->second.first) found->second = {activity.begin_ns, index};
  }
  absl::flat_hash_map<uint64_t, bool> launched;  // flow ids whose launch is in the batch
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kRuntimeApi || !trace.gpu_details.Has(activity.detail) ||
        activity.track >= trace.tracks.size() ||
        trace.tracks[activity.track].process >= trace.processes.size()) {
      continue;
    }
    const GpuDetail detail = trace.gpu_details.Get(activity.detail);
    if ((detail.fields & (kGpuLaunchesWork | kGpuHasCorrelation)) !=
        (kGpuLaunchesWork | kGpuHasCorrelation)) {
      continue;
    }
    const uint64_t id = flow_id(activity, detail);
    if (flow_ends.contains(id)) launched[id] = true;
  }

  // Activities, grouped by row: a track's own, or its process's track of a range name.
  std::vector<std::vector<uint32_t>> by_row;
  std::vector<uint32_t> row_ids;
  absl::flat_hash_map<uint32_t, size_t> slot;
  for (uint32_t index = 0; index < trace.activities.size(); ++index) {
    const Activity &activity = trace.activities[index];
    if (activity.track >= trace.tracks.size()) continue;
    const Track &info = trace.tracks[activity.track];
    if (info.process >= trace.processes.size()) continue;
    uint32_t row_id;
    if (activity.kind == ActivityKind::kRange) {
      // The threads that began and ended it, which its annotations name, are described.
      describe_row_track(activity.track);
      if (activity.detail < trace.tracks.size()) describe_row_track(activity.detail);
      const auto key = std::make_pair(info.process, activity.name);
      auto found = range_row_.find(key);
      if (found == range_row_.end()) {
        const uint64_t parent = process_uuids_[info.process];
        found = range_row_
                    .emplace(key, NewRow(NewUuid(), parent, trace.names.Get(activity.name)))
                    .first;
      }
      row_id = found->second;
    } else {
      auto found = row_of_track_.find(activity.track);
      if (found == row_of_track_.end()) {
        found = row_of_track_
                    .emplace(activity.track, NewRow(track_uuids_[activity.track],
                                                    track_uuids_[activity.track], RowName(info)))
                    .first;
      }
      row_id = found->second;
    }
    // Consecutive activities mostly share a row: skip the map then.
    size_t at;
    if (!row_ids.empty() && row_ids[last_slot_] == row_id) {
      at = last_slot_;
    } else {
      auto [found, added] = slot.try_emplace(row_id, by_row.size());
      if (added) {
        by_row.emplace_back();
        row_ids.push_back(row_id);
      }
      at = found->second;
      last_slot_ = at;
    }
    by_row[at].push_back(index);
  }
  last_slot_ = 0;
  for (size_t group = 0; group < by_row.size(); ++group) {
    Row &row = rows_[row_ids[group]];
    std::vector<uint32_t> &order = by_row[group];
    const Activity &first = trace.activities[order.front()];
    if (first.kind == ActivityKind::kRange) {
      DescribeTrack(row.lanes[0].uuid, row.parent_uuid, row.lane_name, nullptr);
    } else {
      describe_row_track(first.track);
    }
    // Enclosing spans before what they enclose; an instant is a slice of no length.
    SortEnclosingFirst(trace.activities, order);
    for (uint32_t index : order) {
      const Activity &activity = trace.activities[index];
      note_time(activity.begin_ns, activity.end_ns);
      uint64_t flow_out = 0, flow_in = 0;
      if (const std::optional<GpuDetail> gpu_detail = ActivityGpuDetail(trace, activity)) {
        const GpuDetail &detail = *gpu_detail;
        if ((detail.fields & kGpuHasCorrelation) != 0) {
          const uint64_t id = flow_id(activity, detail);
          if (activity.kind == ActivityKind::kRuntimeApi && launched.contains(id) &&
              (detail.fields & kGpuLaunchesWork) != 0) {
            flow_out = id;
          } else if (IsGpuWork(activity.kind) && launched.contains(id)) {
            auto end = flow_ends.find(id);
            if (end != flow_ends.end() && end->second.second == index) flow_in = id;
          }
        }
      }
      if (activity.kind == ActivityKind::kInstant) {
        EndBefore(row, activity.begin_ns);
        SliceBegin(trace, activity, row.lanes[0].uuid, 0, 0);
      } else {
        Lane &lane = Place(row, activity.begin_ns, activity.end_ns);
        SliceBegin(trace, activity, lane.uuid, flow_out, flow_in);
      }
      switch (activity.kind) {
        case ActivityKind::kKernel: ++kernels_; break;
        case ActivityKind::kMemcpy: ++memcpys_; break;
        case ActivityKind::kMemset: ++memsets_; break;
        case ActivityKind::kRuntimeApi: ++api_calls_; break;
        default: break;
      }
      maybe_drain();
    }
    EndAll(row);
  }

  // Counters: a counter track per counter, series and row.
  for (const CounterSample &sample : trace.counters) {
    if (sample.track >= trace.tracks.size()) continue;
    const Track &info = trace.tracks[sample.track];
    if (info.process >= trace.processes.size()) continue;
    note_time(sample.ns, sample.ns);
    const auto key = std::make_pair(sample.track, std::make_pair(sample.name, sample.series));
    auto found = counter_uuid_.find(key);
    if (found == counter_uuid_.end()) found = counter_uuid_.emplace(key, NewUuid()).first;
    const uint64_t uuid = found->second;
    if (!extra_described_.contains(uuid)) {
      extra_described_.emplace(uuid, true);
      const uint64_t parent = info.kind == TrackKind::kCounters
                                  ? process_uuids_[info.process]
                                  : describe_row_track(sample.track);
      std::string counter;
      const std::string &series = trace.names.Get(sample.series);
      if (series.find("bytes") != std::string::npos) AppendVarintField(3, 3, counter);
      AppendLengthDelimited(6, series, counter);
      std::string descriptor;
      AppendVarintField(track::kUuid, uuid, descriptor);
      AppendVarintField(track::kParentUuid, parent, descriptor);
      AppendLengthDelimited(track::kName, trace.names.Get(sample.name), descriptor);
      AppendLengthDelimited(track::kCounter, counter, descriptor);
      std::string body;
      AppendVarintField(packet::kSequenceId, kSequenceId, body);
      AppendLengthDelimited(packet::kTrackDescriptor, descriptor, body);
      AppendLengthDelimited(kTracePacket, body, *out_);
    }
    StartPacket(sample.ns);
    AppendVarintField(event::kType, event::kCounter, event_);
    AppendVarintField(event::kTrackUuid, uuid, event_);
    AppendDoubleField(event::kDoubleCounterValue, sample.value, event_);
    FinishEventPacket();
    maybe_drain();
  }
  FlushBatch(out);
  wrote_events_ = true;
  out_ = nullptr;
}

std::string PerfettoWriter::Finish(const Trace &trace, int64_t /*end_ns*/) {
  // A batch of its own: the trace info (devices, command line) is most of a small trace.
  batch_.clear();
  out_ = &batch_;
  wall_offset_ns_ = trace.wall_offset_ns;
  RestartIfPending();
  Describe(trace);  // an empty trace still names its processes
  if (info_uuid_ == 0) info_uuid_ = NewUuid();
  DescribeTrack(info_uuid_, 0, "tfprof", nullptr);
  const int64_t start_ns = trace.start_ns.value_or(any_time_ ? first_ns_ : 0);
  const int64_t end_ns = trace.end_ns.value_or(any_time_ ? last_ns_ : 0);
  namespace key = info_key;
  Dict info;
  info.Text(key::kVersion, prof_version_string());
  if (!trace.clock.empty()) info.Text(key::kClock, trace.clock);
  if (trace.pid) info.Int(key::kPid, *trace.pid);
  if (!trace.hostname.empty()) info.Text(key::kHostname, trace.hostname);
  if (!trace.command_line.empty()) {
    std::string values;
    for (const std::string &word : trace.command_line) {
      std::string element;
      AppendLengthDelimited(annotation::kStringValue, word, element);
      AppendLengthDelimited(annotation::kArrayValues, element, values);
    }
    info.Nested(key::kCommandLine, values);
  }
  if (trace.wall_offset_ns) info.Int(key::kStartUnixNs, start_ns + *trace.wall_offset_ns);
  info.Int(key::kStartMonotonicNs, start_ns + shift_ns_);
  info.Int(key::kEndMonotonicNs, end_ns + shift_ns_);
  if (trace.events_recorded) info.Uint(key::kEventsRecorded, *trace.events_recorded);
  if (trace.rank) info.Int(key::kRank, *trace.rank);
  const TraceLosses &losses = trace.losses;
  if (losses.reported) {
    for (const LossField &field : kLossFields) info.Uint(field.key, losses.*field.member);
    if (losses.unreported_inputs != 0) info.Uint(key::kUnreportedInputs, losses.unreported_inputs);
  }
  if (trace.gpu.reported) {
    Dict gpu;
    for (const GpuStatusText &field : kGpuStatusTexts) gpu.Text(field.key, trace.gpu.*field.member);
    for (const GpuLossField &field : kGpuLossFields) gpu.Uint(field.key, losses.*field.member);
    gpu.Uint(key::kGpuKernels, kernels_);
    gpu.Uint(key::kGpuMemcpys, memcpys_);
    gpu.Uint(key::kGpuMemsets, memsets_);
    gpu.Uint(key::kGpuApiCalls, api_calls_);
    info.Nested(key::kGpu, gpu.entries());
  }
  if (!trace.devices.empty()) {
    std::string values;
    for (const DeviceProperties &device : trace.devices) {
      Dict entry;
      entry.Int(kDeviceId, device.id);
      entry.Text(kDeviceName, device.name);
      entry.Uint(kDeviceGlobalMemory, device.global_memory_bytes);
      for (const DeviceIntegerField &field : kDeviceIntegerFields) {
        entry.Int(field.key, device.*field.member);
      }
      AppendArrayElement(entry.entries(), values);
    }
    info.Nested(key::kDeviceProperties, values);
  }
  const bool merged = std::any_of(trace.processes.begin(), trace.processes.end(),
                                  [](const Process &process) { return process.group != 0; });
  if (merged) {
    std::string values;
    for (size_t process = 0; process < trace.processes.size() && process < pids_.size(); ++process) {
      Dict entry;
      entry.Int(key::kPid, pids_[process]);
      entry.Uint(key::kGroup, trace.processes[process].group);
      if (trace.processes[process].rank) entry.Int(key::kRank, *trace.processes[process].rank);
      AppendArrayElement(entry.entries(), values);
    }
    info.Nested(key::kProcessGroups, values);
  }
  if (!trace.sources_json.empty()) info.Text(key::kSources, trace.sources_json);

  StartPacket(end_ns);
  AppendVarintField(event::kType, event::kInstant, event_);
  AppendVarintField(event::kTrackUuid, info_uuid_, event_);
  AppendVarintField(
      event::kNameIid,
      OwnNameIid("tfprof trace info"), event_);
  annotation_.clear();
  AppendLengthDelimited(annotation::kName, info_key::kTfprof, annotation_);
  annotation_ += info.entries();
  AppendLengthDelimited(event::kDebugAnnotations, annotation_, event_);
  FinishEventPacket();
  std::string out;
  FlushBatch(out);
  out_ = nullptr;
  return out;
}

}  // namespace tfprof
