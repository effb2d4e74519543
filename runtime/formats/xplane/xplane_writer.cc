#include "runtime/formats/xplane/xplane_writer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/json_text.h"
#include "runtime/common/proto_wire.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/formats/xplane/xplane_fields.h"
#include "runtime/model/event_args.h"

namespace tfprof {

namespace {

// The stats tfprof writes, by their XStatMetadata id: every plane lists them all (a few dozen
// bytes), so that an event's stat is one varint for its name.
enum StatId : int64_t {
  kCorrelationId = 1,
  kContextId,
  kKernelDetails,
  kMemcpyDetails,
  kMemsetDetails,
  kTfOp,
  kIsRoot,  // "_r": the step markers, roots of XProf's grouping
  kStepNum,
  kGpuDeviceName,
  kMemorySize,
  kComputeCapMajor,
  kComputeCapMinor,
  kCoreCount,
  kProfileStartTime,
  kProfileStopTime,
  kDeviceVendor,
};
constexpr const char *kStatNames[] = {
    "",               "correlation_id",    "context_id",        "kernel_details",
    "memcpy_details", "memset_details",    "tf_op",             "_r",
    "step_num",       "gpu_device_name",   "memory_size",       "compute_cap_major",
    "compute_cap_minor", "core_count",     "profile_start_time", "profile_stop_time",
    "device_vendor",
};
constexpr int64_t kStatCount = sizeof(kStatNames) / sizeof(kStatNames[0]);

// The event metadata of a step that has no name of its own (tfprof's "step N" rows): XProf names
// its group "step N" from it and the step_num stat.
constexpr uint32_t kStepMarkerName = UINT32_MAX;
constexpr char kStepMarkerText[] = "step";

// Line ids for host lines that are no thread's: above any thread id, clear of XProf's derived
// line ids (0xdeadbeef and up).
constexpr int64_t kOwnLineIds = int64_t{1} << 40;

// Encoded without a buffer per message: the size of each field is known before it is written,
// and an event's few stats are written straight after its length (a buffer per stat and per
// event cost more than the rest of the encoding): VarintSize() (proto_wire.h) sizes them.

// A one-byte tag (field numbers below 16) and a varint.
size_t VarintFieldSize(uint64_t value) { return 1 + VarintSize(value); }

void AppendFieldHead(uint32_t field, uint64_t size, std::string &out) {
  char head[20];
  char *end = EncodeVarint((uint64_t{field} << 3) | 2, head);
  end = EncodeVarint(size, end);
  out.append(head, static_cast<size_t>(end - head));
}

// An XStat (event field 4) of a varint value in `value_field` (int64 or uint64).
void VarintStat(int64_t id, uint32_t value_field, uint64_t value, std::string &out) {
  AppendFieldHead(xf::kEventStats,
                  VarintFieldSize(static_cast<uint64_t>(id)) + VarintFieldSize(value), out);
  AppendVarintField(xf::kStatMetadataId, static_cast<uint64_t>(id), out);
  AppendVarintField(value_field, value, out);
}

void IntStat(int64_t id, int64_t value, std::string &out) {
  VarintStat(id, xf::kStatInt64, static_cast<uint64_t>(value), out);
}

void UintStat(int64_t id, uint64_t value, std::string &out) {
  VarintStat(id, xf::kStatUint64, value, out);
}

void DoubleStat(int64_t id, double value, std::string &out) {
  AppendFieldHead(xf::kEventStats, VarintFieldSize(static_cast<uint64_t>(id)) + 9, out);
  AppendVarintField(xf::kStatMetadataId, static_cast<uint64_t>(id), out);
  char bytes[9];
  bytes[0] = static_cast<char>((xf::kStatDouble << 3) | 1);  // wire type 1: 64 bits
  std::memcpy(bytes + 1, &value, sizeof value);
  out.append(bytes, sizeof bytes);
}

void TextStat(int64_t id, std::string_view value, std::string &out) {
  AppendFieldHead(xf::kEventStats,
                  VarintFieldSize(static_cast<uint64_t>(id)) + 1 + VarintSize(value.size()) +
                      value.size(),
                  out);
  AppendVarintField(xf::kStatMetadataId, static_cast<uint64_t>(id), out);
  AppendLengthDelimited(xf::kStatString, value, out);
}

// One XEvent with `stats` (serialized XStat fields), appended to a line's events.
void AppendEvent(int64_t metadata_id, int64_t offset_ps, int64_t duration_ps,
                 std::string_view stats, std::string &events) {
  // Always present: offset_ps is one of a oneof, and 0 is a time.
  const size_t size = VarintFieldSize(static_cast<uint64_t>(metadata_id)) +
                      VarintFieldSize(static_cast<uint64_t>(offset_ps)) +
                      (duration_ps > 0 ? VarintFieldSize(static_cast<uint64_t>(duration_ps)) : 0) +
                      stats.size();
  AppendFieldHead(xf::kLineEvents, size, events);
  AppendVarintField(xf::kEventMetadataId, static_cast<uint64_t>(metadata_id), events);
  AppendVarintField(xf::kEventOffsetPs, static_cast<uint64_t>(offset_ps), events);
  if (duration_ps > 0) {
    AppendVarintField(xf::kEventDurationPs, static_cast<uint64_t>(duration_ps), events);
  }
  events.append(stats);
}

// A map<int64, M> entry of XPlane: key `id`, value M = {id, name}.
void AppendMetadataEntry(uint32_t field, int64_t id, std::string_view name, std::string &out) {
  std::string value;
  AppendVarintField(xf::kMetadataId, static_cast<uint64_t>(id), value);
  AppendLengthDelimited(field == xf::kPlaneEventMetadata ? xf::kEventMetadataName
                                                         : xf::kStatMetadataName,
                        name, value);
  std::string entry;
  AppendVarintField(1, static_cast<uint64_t>(id), entry);
  AppendLengthDelimited(2, value, entry);
  AppendLengthDelimited(field, entry, out);
}

// The bytes of a whole length-delimited field of `payload` bytes.
uint64_t FieldSize(uint64_t payload) { return 1 + VarintSize(payload) + payload; }

// XStat fields (as an event holds them: field 4) as XPlane.stats (field 6): the same messages.
void AppendAsPlaneStats(std::string_view event_stats, std::string &plane) {
  for (size_t at = 0; at < event_stats.size();) {
    WireField field;
    if (!NextWireField(event_stats, &at, &field)) break;
    AppendLengthDelimited(xf::kPlaneStats, field.payload, plane);
  }
}

bool IsHostThread(const Track &track) { return track.kind == TrackKind::kHostThread; }

// Nanoseconds as picoseconds, clamped to what an int64 holds (a span of more than 106 days from
// the recording's start: merged runs recorded years apart).
int64_t Picoseconds(int64_t ns, bool *clamped) {
  constexpr int64_t kMost = INT64_MAX / 1000;
  if (ns > kMost || ns < -kMost) {
    *clamped = true;
    return ns > 0 ? kMost * 1000 : -kMost * 1000;
  }
  return ns * 1000;
}

// The processes with host threads (a trace's GPUs are processes of their own).
size_t HostProcessCount(const Trace &trace) {
  std::vector<bool> seen(trace.processes.size(), false);
  size_t count = 0;
  for (const Track &track : trace.tracks) {
    if (!IsHostThread(track) || track.process >= seen.size() || seen[track.process]) continue;
    seen[track.process] = true;
    ++count;
  }
  return count;
}

}  // namespace

std::string XPlaneWriter::Begin(int64_t start_wall_ns) {
  static_cast<void>(start_wall_ns);  // the trace's own wall clock goes in the Task Environment
  return {};
}

size_t XPlaneWriter::LineFor(const Trace &trace, uint32_t track_index, bool device) {
  const uint64_t key = (uint64_t{track_index} << 1) | (device ? 1 : 0);
  if (const auto found = line_of_.find(key); found != line_of_.end()) return found->second;
  const Track &track = trace.tracks[track_index];
  Line line;
  line.track = track_index;
  line.device = device;
  if (device) {
    line.plane = std::max(track.device, 0);
    line.id = track.stream >= 0 ? track.stream : track.tid;
  } else {
    line.plane = kHostPlane;
    // GPU syncs, the tracer's overhead, GPU annotations: host lines of their own.
    line.id = IsHostThread(track) ? track.tid : kOwnLineIds + track_index;
  }
  // An id two rows of one plane share (a thread id in two processes; two merged ranks' GPU 0
  // stream 7): the later row gets an id of its own, as XProf keys its rows by line id.
  if (!line_ids_.insert({line.plane, line.id}).second) {
    line.id = kOwnLineIds + track_index;
    line_ids_.insert({line.plane, line.id});
  }
  planes_.try_emplace(line.plane);
  lines_.push_back(std::move(line));
  line_of_.emplace(key, lines_.size() - 1);
  return lines_.size() - 1;
}

std::string XPlaneWriter::LineName(const Trace &trace, const Line &line,
                                   bool several_processes) const {
  const Track &track = trace.tracks[line.track];
  if (line.device) {
    // XProf's own name when the trace has it ("Stream #7(Compute)"), else "Stream #7".
    if (track.name.starts_with("Stream #")) return track.name;
    const int64_t stream = track.stream >= 0 ? track.stream : track.tid;
    std::string name = absl::StrCat("Stream #", stream);
    if (!track.name.empty() && track.name != absl::StrCat("stream ", stream)) {
      absl::StrAppend(&name, "(", track.name, ")");
    }
    return name;
  }
  const Process &process = trace.processes[track.process];
  if (!IsHostThread(track)) {
    const std::string row =
        track.name.empty() ? absl::StrCat("stream ", track.stream) : track.name;
    return track.device >= 0 ? absl::StrCat("/device:GPU:", track.device, " ", row)
                             : (process.name.empty() ? row : absl::StrCat(process.name, " ", row));
  }
  const std::string name =
      track.name.empty() ? absl::StrCat("Thread ", track.tid) : track.name;
  // Several processes on one host plane: the process names its threads.
  if (!several_processes) return name;
  return absl::StrCat(process.name.empty() ? absl::StrCat("pid ", process.pid) : process.name,
                      "/", name);
}

uint32_t XPlaneWriter::BusiestThreadOf(const Trace &trace, uint32_t process) {
  if (const auto known = busiest_thread_.find(process); known != busiest_thread_.end()) {
    return known->second;
  }
  // The host thread of `process` with the most host spans in the trace (or in this first piece).
  absl::flat_hash_map<uint32_t, uint64_t> spans;
  for (const Activity &activity : trace.activities) {
    if (activity.track >= trace.tracks.size() || IsGpuWork(activity.kind)) continue;
    const Track &track = trace.tracks[activity.track];
    if (track.process == process && IsHostThread(track)) ++spans[activity.track];
  }
  uint32_t busiest = kNoTrack;
  uint64_t most = 0;
  for (const auto &[track, count] : spans) {
    if (count > most || (count == most && track < busiest)) {
      busiest = track;
      most = count;
    }
  }
  busiest_thread_.emplace(process, busiest);
  return busiest;
}

int64_t XPlaneWriter::MetadataId(int32_t plane_index, uint32_t name) {
  Plane &plane = planes_[plane_index];
  const auto [found, added] =
      plane.metadata_of.try_emplace(name, static_cast<int64_t>(plane.names.size() + 1));
  if (added) plane.names.push_back(name);
  return found->second;
}

int64_t XPlaneWriter::StatIdOf(std::string_view name) {
  for (int64_t id = 1; id < kStatCount; ++id) {
    if (name == kStatNames[id]) return id;
  }
  if (const auto known = arg_stat_ids_.find(ToAbsl(name)); known != arg_stat_ids_.end()) {
    return known->second;
  }
  const int64_t id = kStatCount + static_cast<int64_t>(arg_stat_names_.size());
  arg_stat_ids_.emplace(std::string(name), id);
  arg_stat_names_.emplace_back(name);
  return id;
}

uint64_t XPlaneWriter::OwnStatsIn(std::string_view members) {
  uint64_t own = 0;
  ForEachFileArg(members, [&](std::string_view member, EventArg) {
    if (DecodeJsonString(member, &key_) == 0) return;
    for (int64_t id = 1; id < kStatCount; ++id) {
      if (key_ == kStatNames[id]) own |= uint64_t{1} << id;
    }
  });
  return own;
}

void XPlaneWriter::SortEvents(Line &line) {
  // The line's encoded events by (offset, longer first), in the order they were written where
  // those are equal; each event is a field 4 of XLine, its offset field 2 and duration field 3.
  struct Entry {
    int64_t offset_ps;
    int64_t duration_ps;
    size_t begin;
    size_t size;
  };
  std::vector<Entry> entries;
  const std::string_view bytes = line.events;
  for (size_t at = 0; at < bytes.size();) {
    const size_t begin = at;
    WireField field;
    if (!NextWireField(bytes, &at, &field)) break;
    Entry entry{0, 0, begin, at - begin};
    for (size_t inner = 0; inner < field.payload.size();) {
      WireField part;
      if (!NextWireField(field.payload, &inner, &part)) break;
      if (part.number == xf::kEventOffsetPs) entry.offset_ps = static_cast<int64_t>(part.varint);
      if (part.number == xf::kEventDurationPs) entry.duration_ps = static_cast<int64_t>(part.varint);
    }
    entries.push_back(entry);
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    if (a.offset_ps != b.offset_ps) return a.offset_ps < b.offset_ps;
    return a.duration_ps > b.duration_ps;
  });
  std::string sorted;
  sorted.reserve(bytes.size());
  for (const Entry &entry : entries) sorted.append(bytes.substr(entry.begin, entry.size));
  line.events = std::move(sorted);
  line.sorted = true;
}

void XPlaneWriter::AppendArgStats(std::string_view members, uint64_t written,
                                  std::string &stats) {
  ForEachFileArg(members, [&](std::string_view member, EventArg) {
    const size_t key_size = DecodeJsonString(member, &key_);
    if (key_size == 0) return;
    size_t at = key_size;
    while (at < member.size() && (member[at] == ' ' || member[at] == ':')) ++at;
    const std::string_view value = member.substr(at);
    if (value.empty() || value == "null") return;
    // What XProf's grouping reads is tfprof's to write: its steps' _r and step_num, and no
    // group_id (a file that has one is never grouped again). A stat written from the model
    // already is not written twice.
    if (key_ == "group_id" || key_ == "_r" || key_ == "step_num") return;
    const int64_t id = StatIdOf(key_);
    if (id < kStatCount && (written >> id & 1) != 0) return;
    if (value.front() == '"') {
      std::string text;
      if (DecodeJsonString(value, &text) == value.size()) {
        TextStat(id, text, stats);
        return;
      }
    } else if (value == "true" || value == "false") {
      IntStat(id, value == "true" ? 1 : 0, stats);
      return;
    } else if (value.front() == '-' || (value.front() >= '0' && value.front() <= '9')) {
      if (value.find_first_of(".eE") != std::string_view::npos) {
        double number = 0;
        if (absl::SimpleAtod(ToAbsl(value), &number)) {
          DoubleStat(id, number, stats);
          return;
        }
      } else if (int64_t number = 0; absl::SimpleAtoi(ToAbsl(value), &number)) {
        IntStat(id, number, stats);
        return;
      } else if (uint64_t large = 0; absl::SimpleAtoi(ToAbsl(value), &large)) {
        UintStat(id, large, stats);
        return;
      }
    }
    TextStat(id, value, stats);  // an array or an object: its JSON text
  });
}

void XPlaneWriter::EncodeActivity(const Trace &trace, const Activity &activity, Line &line,
                                  std::string &stats) {
  stats.clear();
  std::string_view args;
  if (DetailIsFileArgs(activity.kind) && activity.detail < trace.file_args.size()) {
    args = trace.file_args.Get(activity.detail);
  } else if (const auto found = trace.gpu_file_args.find(activity.detail);
             found != trace.gpu_file_args.end() && found->second < trace.file_args.size()) {
    args = trace.file_args.Get(found->second);
  }
  // The file's own details text (an XPlane's kernel_details with its occupancy, memcpy_details
  // with its destination) wins over the one tfprof would make from the fields it keeps.
  const uint64_t in_args = args.empty() ? 0 : OwnStatsIn(args);
  uint64_t written = 0;  // bit 1 << StatId of each own stat written
  const auto own = [&](int64_t id) {
    if ((in_args >> id & 1) != 0) return false;
    written |= uint64_t{1} << id;
    return true;
  };
  const std::optional<GpuDetail> gpu_detail = ActivityGpuDetail(trace, activity);
  const GpuDetail *detail = gpu_detail ? &*gpu_detail : nullptr;
  if (detail != nullptr) {
    if ((detail->fields & kGpuHasCorrelation) && own(kCorrelationId)) {
      IntStat(kCorrelationId, detail->correlation, stats);
    }
    if ((detail->fields & kGpuHasContext) && own(kContextId)) {
      UintStat(kContextId, detail->context, stats);
    }
    if (IsGpuWork(activity.kind) && detail->op < trace.names.size() && own(kTfOp)) {
      TextStat(kTfOp, trace.names.Get(detail->op), stats);
    }
    if (activity.kind == ActivityKind::kKernel && (detail->fields & kGpuHasLaunchShape) &&
        own(kKernelDetails)) {
      const GpuWorkShape &shape = trace.work_shapes.Get(detail->shape);
      TextStat(kKernelDetails,
               absl::StrCat("regs:", shape.registers, " static_shared:", shape.static_shared,
                            " dynamic_shared:", shape.dynamic_shared, " grid:", shape.grid[0],
                            ",", shape.grid[1], ",", shape.grid[2], " block:", shape.block[0],
                            ",", shape.block[1], ",", shape.block[2]),
               stats);
    }
  }
  if (activity.kind == ActivityKind::kMemcpy && own(kMemcpyDetails)) {
    std::string details = absl::StrCat("size:", activity.bytes);
    if (const uint32_t peer =
            detail != nullptr ? trace.work_shapes.Get(detail->shape).peer_device : 0;
        peer != 0) {
      absl::StrAppend(&details, " dest:", peer);
    }
    TextStat(kMemcpyDetails, details, stats);
  } else if (activity.kind == ActivityKind::kMemset && own(kMemsetDetails)) {
    TextStat(kMemsetDetails, absl::StrCat("num_bytes:", activity.bytes), stats);
  }
  if (!args.empty()) AppendArgStats(args, written, stats);
  bool clamped = false;
  const int64_t offset_ps = Picoseconds(activity.begin_ns - *origin_ns_, &clamped);
  const int64_t duration_ps = Picoseconds(activity.end_ns - activity.begin_ns, &clamped);
  if (clamped) ++times_clamped_;
  AppendEvent(MetadataId(line.plane, activity.name), offset_ps, duration_ps, stats, line.events);
  NoteOrder(line, activity.begin_ns, activity.end_ns);
}

void XPlaneWriter::EncodeStep(const Trace &trace, const Step &step, Line &line,
                              std::string &stats) {
  stats.clear();
  IntStat(kIsRoot, 1, stats);
  IntStat(kStepNum, step.number, stats);
  const uint32_t name = step.name < trace.names.size() ? step.name : kStepMarkerName;
  bool clamped = false;
  const int64_t offset_ps = Picoseconds(step.begin_ns - *origin_ns_, &clamped);
  const int64_t duration_ps = Picoseconds(step.end_ns - step.begin_ns, &clamped);
  if (clamped) ++times_clamped_;
  AppendEvent(MetadataId(line.plane, name), offset_ps, duration_ps, stats, line.events);
  NoteOrder(line, step.begin_ns, step.end_ns);
}

void XPlaneWriter::NoteOrder(Line &line, int64_t begin_ns, int64_t end_ns) {
  // Events come sorted within a piece; a later piece may bring one that belongs before (a span
  // that fits in no step, written where it ends; GPU work that arrived late).
  if (begin_ns < line.last_begin_ns || (begin_ns == line.last_begin_ns && end_ns > line.last_end_ns)) {
    line.sorted = false;
  }
  line.last_begin_ns = begin_ns;
  line.last_end_ns = end_ns;
}

void XPlaneWriter::Append(const Trace &trace, bool last, int64_t end_ns, std::string &out,
                          const Drain &drain) {
  if (!origin_ns_) {
    // Offsets from the recording's start: its wall-clock time is in the Task Environment, or,
    // for a trace with no wall clock, its own clock's time is each line's timestamp_ns (as
    // TensorFlow's older profiles have it).
    const std::optional<TimeExtent> extent = EventExtent(trace);
    int64_t origin = trace.start_ns.value_or(extent ? extent->begin_ns : 0);
    if (extent) origin = std::min(origin, extent->begin_ns);
    origin_ns_ = origin;
    last_ns_ = origin;
  }
  last_ns_ = std::max(last_ns_, end_ns);
  counters_left_out_ += trace.counters.size();
  flows_left_out_ += trace.flows.size();
  // The piece's events by line (lines_ index), each line's sorted enclosing first (XProf nests
  // by order).
  std::vector<std::vector<Pending>> pending;
  const auto add = [&](size_t line, const Pending &event) {
    if (line >= pending.size()) pending.resize(line + 1);
    pending[line].push_back(event);
  };
  for (uint32_t index = 0; index < trace.steps.size(); ++index) {
    const Step &step = trace.steps[index];
    uint32_t track = step.track;
    if (track >= trace.tracks.size() || !IsHostThread(trace.tracks[track])) {
      track = BusiestThreadOf(trace, step.process);
    }
    if (track == kNoTrack) {
      ++steps_without_thread_;
      continue;
    }
    add(LineFor(trace, track, false), {step.begin_ns, step.end_ns, index, true});
    last_ns_ = std::max(last_ns_, step.end_ns);
  }
  for (uint32_t index = 0; index < trace.activities.size(); ++index) {
    const Activity &activity = trace.activities[index];
    if (activity.track >= trace.tracks.size()) continue;
    add(LineFor(trace, activity.track, IsGpuWork(activity.kind)),
        {activity.begin_ns, activity.end_ns, index, false});
    last_ns_ = std::max(last_ns_, activity.end_ns);
  }
  // Plane by plane (the host's first), each plane's lines in the order they were met: the names
  // and stat names get their ids in an order that does not depend on how the input was laid out.
  std::vector<size_t> order(pending.size());
  for (size_t index = 0; index < order.size(); ++index) order[index] = index;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lines_[a].plane < lines_[b].plane; });
  std::string stats;
  for (size_t line_index : order) {
    std::vector<Pending> &events = pending[line_index];
    // At one begin, the longer first, and a step before an activity of the same extent.
    std::stable_sort(events.begin(), events.end(), [](const Pending &a, const Pending &b) {
      if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
      if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
      return a.step && !b.step;
    });
    Line &line = lines_[line_index];
    for (const Pending &event : events) {
      if (event.step) {
        EncodeStep(trace, trace.steps[event.index], line, stats);
      } else {
        EncodeActivity(trace, trace.activities[event.index], line, stats);
      }
    }
  }
  // The last piece: the profile is complete, and written now with `drain` taking its bytes as
  // they come.
  if (last) WriteSpace(trace, end_ns, out, drain);
}

std::string XPlaneWriter::PlaneTail(const Trace &trace, int32_t plane_index) const {
  std::string tail;
  const auto metadata = planes_.find(plane_index);
  if (metadata != planes_.end()) {
    for (size_t index = 0; index < metadata->second.names.size(); ++index) {
      const uint32_t name = metadata->second.names[index];
      AppendMetadataEntry(xf::kPlaneEventMetadata, static_cast<int64_t>(index + 1),
                          name == kStepMarkerName ? std::string_view(kStepMarkerText)
                                                  : std::string_view(trace.names.Get(name)),
                          tail);
    }
  }
  for (int64_t id = 1; id < kStatCount; ++id) {
    AppendMetadataEntry(xf::kPlaneStatMetadata, id, kStatNames[id], tail);
  }
  for (size_t index = 0; index < arg_stat_names_.size(); ++index) {
    AppendMetadataEntry(xf::kPlaneStatMetadata, kStatCount + static_cast<int64_t>(index),
                        arg_stat_names_[index], tail);
  }
  if (plane_index == kHostPlane) return tail;
  std::string stats;
  for (const DeviceProperties &device : trace.devices) {
    if (device.id != plane_index) continue;
    if (!device.name.empty()) TextStat(kGpuDeviceName, device.name, stats);
    // XProf tells the hardware by the vendor ("Nvidia", "AMD"), which CUPTI and Kineto name only
    // as the GPU's name's first word.
    if (device.name.starts_with("NVIDIA")) TextStat(kDeviceVendor, "Nvidia", stats);
    if (device.name.starts_with("AMD")) TextStat(kDeviceVendor, "AMD", stats);
    if (device.global_memory_bytes > 0) UintStat(kMemorySize, device.global_memory_bytes, stats);
    if (device.compute_major > 0) {
      IntStat(kComputeCapMajor, device.compute_major, stats);
      IntStat(kComputeCapMinor, device.compute_minor, stats);
    }
    if (device.multiprocessors > 0) IntStat(kCoreCount, device.multiprocessors, stats);
    break;
  }
  AppendAsPlaneStats(stats, tail);
  return tail;
}

void XPlaneWriter::WriteSpace(const Trace &trace, int64_t end_ns, std::string &out,
                              const Drain &drain) {
  written_ = true;
  if (!origin_ns_) origin_ns_ = 0;
  last_ns_ = std::max(last_ns_, end_ns);
  const bool several_processes = HostProcessCount(trace) > 1;
  std::map<int32_t, std::vector<size_t>> lines_of;
  lines_of.try_emplace(kHostPlane);  // the host plane, even when empty: XProf expects one
  for (size_t index = 0; index < lines_.size(); ++index) {
    lines_of[lines_[index].plane].push_back(index);
  }
  // Each plane's length goes before it, so its lines' sizes are added up first; then the lines
  // are written one after the other and let go of, and the bytes handed on as they grow: the
  // profile is never held twice.
  for (const auto &[plane_index, lines] : lines_of) {
    std::string head;
    AppendVarintField(xf::kPlaneId, static_cast<uint64_t>(std::max(plane_index, 0)), head);
    AppendLengthDelimited(xf::kPlaneName,
                          plane_index == kHostPlane ? std::string("/host:CPU")
                                                    : absl::StrCat("/device:GPU:", plane_index),
                          head);
    std::vector<std::string> line_heads;
    uint64_t size = head.size();
    for (size_t line_index : lines) {
      Line &line = lines_[line_index];
      if (!line.sorted) SortEvents(line);
      std::string line_head;
      AppendVarintField(xf::kLineId, static_cast<uint64_t>(line.id), line_head);
      AppendLengthDelimited(xf::kLineName, LineName(trace, line, several_processes), line_head);
      if (!trace.wall_offset_ns && *origin_ns_ != 0) {
        AppendVarintField(xf::kLineTimestampNs, static_cast<uint64_t>(*origin_ns_), line_head);
      }
      const uint64_t line_size = line_head.size() + line.events.size();
      size += FieldSize(line_size);
      line_heads.push_back(std::move(line_head));
    }
    const std::string tail = PlaneTail(trace, plane_index);
    size += tail.size();
    AppendFieldHead(xf::kSpacePlanes, size, out);
    out += head;
    for (size_t index = 0; index < lines.size(); ++index) {
      Line &line = lines_[lines[index]];
      AppendFieldHead(xf::kPlaneLines, line_heads[index].size() + line.events.size(), out);
      out += line_heads[index];
      out += line.events;
      std::string().swap(line.events);
      if (drain && out.size() >= kDrainBytes) drain(out);
    }
    out += tail;
  }
  // The recording's wall clock, where our reader and XProf find it; none when the trace has none
  // (TensorFlow's profiles before 2.5 have no Task Environment either).
  if (trace.wall_offset_ns) {
    std::string environment;
    AppendLengthDelimited(xf::kPlaneName, "Task Environment", environment);
    for (int64_t id : {kProfileStartTime, kProfileStopTime}) {
      AppendMetadataEntry(xf::kPlaneStatMetadata, id, kStatNames[id], environment);
    }
    std::string stats;
    UintStat(kProfileStartTime, static_cast<uint64_t>(*origin_ns_ + *trace.wall_offset_ns), stats);
    UintStat(kProfileStopTime, static_cast<uint64_t>(last_ns_ + *trace.wall_offset_ns), stats);
    AppendAsPlaneStats(stats, environment);
    AppendLengthDelimited(xf::kSpacePlanes, environment, out);
  }
  // The recording's host when the trace names it (not the machine that converts it).
  if (!trace.hostname.empty()) AppendLengthDelimited(xf::kSpaceHostnames, trace.hostname, out);
}

std::string XPlaneWriter::Finish(const Trace &trace, int64_t end_ns) {
  std::string space;
  if (!written_) WriteSpace(trace, end_ns, space, {});
  return space;
}

std::vector<std::string> XPlaneWriter::Notes(const Trace &trace) const {
  static_cast<void>(trace);
  std::vector<std::string> notes;
  if (counters_left_out_ > 0) {
    notes.push_back(absl::StrCat(counters_left_out_,
                                 " counter samples were left out: an XPlane profile has no "
                                 "counter rows XProf shows (TensorBoard event files carry them as "
                                 "scalars)"));
  }
  if (flows_left_out_ > 0) {
    notes.push_back(absl::StrCat(flows_left_out_,
                                 " flow events were left out: XProf draws its own arrows from the "
                                 "correlation ids"));
  }
  if (times_clamped_ > 0) {
    notes.push_back(absl::StrCat(times_clamped_,
                                 " events more than 106 days from the recording's start were "
                                 "put at 106 days (an XPlane time is an int64 of picoseconds)"));
  }
  if (steps_without_thread_ > 0) {
    notes.push_back(absl::StrCat(steps_without_thread_,
                                 " steps of processes with no host thread were left out: XProf "
                                 "finds steps as events of a host thread"));
  }
  return notes;
}

}  // namespace tfprof
