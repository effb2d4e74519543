#include "runtime/formats/xplane/xplane_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/file_bytes.h"
#include "runtime/common/proto_wire.h"
#include "runtime/common/saturating_math.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/formats/proto_damage.h"
#include "runtime/formats/xplane/xplane_event_stats.h"
#include "runtime/formats/xplane/xplane_fields.h"
#include "runtime/formats/xplane/xplane_steps.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/model/memory_series.h"
#include "runtime/model/trace_builder.h"

namespace tfprof {

namespace {

using xplane::AddStat;
using xplane::EventStats;
using xplane::HostStep;
using xplane::HostStepMarks;
using xplane::StatKind;
using xplane::StatKindOf;
using xplane::StatName;
using xplane::StatValue;

constexpr char kHostPlanePrefix[] = "/host:";
constexpr char kGpuPlanePrefix[] = "/device:GPU:";
constexpr char kTaskEnvironmentPlane[] = "Task Environment";

struct EventMetadata {
  std::string_view name;
  std::string_view display_name;
  std::vector<std::string_view> stats;  // XStat messages
};

// What one plane's metadata says, and its timelines, left on the wire until they are walked.
struct Plane {
  int64_t id = 0;
  std::string_view name;
  std::vector<std::string_view> lines;  // XLine messages
  std::vector<std::string_view> stats;
  absl::flat_hash_map<int64_t, StatName> stat_names;
  absl::flat_hash_map<int64_t, EventMetadata> events;
};

enum class PlaneKind : uint8_t { kHost, kGpu, kOtherDevice, kSkipped };

PlaneKind KindOf(std::string_view name) {
  if (name.starts_with(kGpuPlanePrefix)) return PlaneKind::kGpu;
  if (name.starts_with(kHostPlanePrefix)) {
    return name == "/host:metadata" ? PlaneKind::kSkipped : PlaneKind::kHost;
  }
  if (name.starts_with("/device:") || name.starts_with("/virtualdevice:") ||
      name.starts_with("#Chip")) {
    return PlaneKind::kOtherDevice;
  }
  return PlaneKind::kSkipped;  // "Task Environment" (read for its stats), "Host CPUs", ...
}

// Reads one host's XSpace into the trace, as recording `group`.
class XSpaceReader {
 public:
  XSpaceReader(TraceBuilder *builder, uint32_t group, ProgressListener *progress,
               std::string path, uint64_t file_size)
      : builder_(builder), trace_(&builder->trace()), group_(group), progress_(progress),
        path_(std::move(path)), file_size_(file_size) {
    progress_what_ = absl::StrCat("reading ", path_);
  }

  // Reads the whole file (`data`, alive until Read returns) into the trace; times stay on the
  // host's own clock until Finish() moves them onto the trace's. DataLoss for damage, after
  // reading every plane before it.
  absl::Status Read(std::string_view data) {
    data_ = data;
    size_t at = 0;
    WireField field;
    std::vector<std::string_view> planes;
    absl::Status damage;
    while (at < data.size()) {
      const size_t start = at;
      if (!NextWireField(data, &at, &field)) {
        damage = TopLevelDamage(start);
        break;  // the planes before the damage are still read
      }
      if (field.wire_type != 2) continue;
      if (field.number == xf::kSpacePlanes) {
        planes.push_back(field.payload);
      } else if (field.number == xf::kSpaceHostnames && hostname_.empty()) {
        hostname_ = std::string(field.payload);
      }
      // errors and warnings are the profiler's own messages ("GPU events dropped ..."), not the
      // trace's content.
    }
    // The Task Environment plane first: its start time places every other plane.
    std::vector<Plane> parsed(planes.size());
    for (size_t index = 0; index < planes.size(); ++index) {
      if (absl::Status status = ParsePlane(planes[index], &parsed[index]); !status.ok()) {
        return status;
      }
      if (parsed[index].name == kTaskEnvironmentPlane) ReadTaskEnvironment(parsed[index]);
    }
    for (const Plane &plane : parsed) {
      if (absl::Status status = ReadPlane(plane); !status.ok()) return status;
    }
    return damage;
  }

  const std::string &hostname() const { return hostname_; }
  std::optional<int64_t> profile_start_ns() const { return profile_start_ns_; }

  // Moves this host's activities, steps and counters by `shift_ns` (onto the trace's clock) and
  // makes its steps; adds to `dropped` the activities that became steps.
  void Finish(int64_t shift_ns, std::vector<size_t> *dropped) {
    for (size_t index = first_activity_; index < end_activity_; ++index) {
      Activity &activity = trace_->activities[index];
      activity.begin_ns = SaturatingAdd(activity.begin_ns, shift_ns);
      activity.end_ns = SaturatingAdd(activity.end_ns, shift_ns);
    }
    for (size_t index = first_detail_; index < end_detail_; ++index) {
      GpuDetail &detail = trace_->gpu_details.work()[index];
      if (detail.launch_ns != kNoStep) detail.launch_ns = SaturatingAdd(detail.launch_ns, shift_ns);
    }
    for (size_t index = first_counter_; index < end_counter_; ++index) {
      CounterSample &sample = trace_->counters[index];
      sample.ns = SaturatingAdd(sample.ns, shift_ns);
    }
    MakeSteps(shift_ns, dropped);
  }

 private:
  uint64_t Offset(std::string_view part) const {
    return static_cast<uint64_t>(part.data() - data_.data());
  }

  absl::Status Damage(uint64_t offset, std::string_view problem) const {
    return absl::DataLossError(absl::StrCat(path_, ": byte ", offset, ": ", ToAbsl(problem)));
  }

  // Why the top-level field at `start` does not parse: the file cut short (a field running past
  // its end), or corrupt bytes (a bad tag or wire type; a plane's length past the end while the
  // bytes after it are no plane's fields, so that the length is what is damaged).
  absl::Status TopLevelDamage(size_t start) const {
    const WireFieldDamage damage = DescribeWireFieldDamage(data_, start, "file");
    if (!damage.runs_past_end) {
      return Damage(start, start == 0 ? absl::StrCat("not an XSpace: no protobuf field at the "
                                                     "start of the file (", damage.problem, ")")
                                      : absl::StrCat("corrupt bytes: ", damage.problem));
    }
    size_t at = start;
    uint64_t tag = 0;
    uint64_t length = 0;
    if (ReadWireVarint(data_, &at, &tag) && tag == ((xf::kSpacePlanes << 3) | 2) &&
        ReadWireVarint(data_, &at, &length) && length > data_.size() - at) {
      if (!StartsLikePlane(data_.substr(at))) {
        return Damage(start, absl::StrCat("corrupt plane length: ", length, " bytes, past the end "
                                          "of the file (", data_.size() - at, " bytes left), and "
                                          "the bytes after it do not read as a plane's fields"));
      }
      return Damage(start, absl::StrCat("the file is cut short: it ends inside a plane of ", length,
                                        " bytes, after ", data_.size() - at, " of them"));
    }
    return Damage(start, absl::StrCat("the file is cut short: ", damage.problem));
  }

  // Whether `bytes` read as the start of an XPlane: each field of the type XPlane gives its
  // number, up to the end or to a field the end cuts.
  static bool StartsLikePlane(std::string_view bytes) {
    size_t at = 0;
    WireField field;
    while (at < bytes.size()) {
      if (!NextWireField(bytes, &at, &field)) {
        return DescribeWireFieldDamage(bytes, at, "plane").runs_past_end;
      }
      const int expected = field.number == xf::kPlaneId ? 0 : 2;
      if (field.number <= xf::kPlaneStats && field.wire_type != expected) return false;
    }
    return true;
  }

  // Damage inside a message that lies whole inside the file: corrupt bytes, not a cut.
  absl::Status MessageDamage(std::string_view message, size_t at, std::string_view what) const {
    return Damage(Offset(message) + at,
                  absl::StrCat("corrupt ", ToAbsl(what), ": ",
                               DescribeWireFieldDamage(message, at, what).problem));
  }

  absl::Status ParsePlane(std::string_view bytes, Plane *plane) {
    size_t at = 0;
    WireField field;
    while (at < bytes.size()) {
      if (!NextWireField(bytes, &at, &field)) return MessageDamage(bytes, at, "XPlane");
      switch (field.number) {
        case xf::kPlaneId:
          if (field.wire_type == 0) plane->id = static_cast<int64_t>(field.varint);
          break;
        case xf::kPlaneName:
          if (field.wire_type == 2) plane->name = field.payload;
          break;
        case xf::kPlaneLines:
          if (field.wire_type == 2) plane->lines.push_back(field.payload);
          break;
        case xf::kPlaneStats:
          if (field.wire_type == 2) plane->stats.push_back(field.payload);
          break;
        case xf::kPlaneEventMetadata:
        case xf::kPlaneStatMetadata:
          if (field.wire_type != 2) break;
          if (absl::Status status = MapEntry(field.number, field.payload, plane); !status.ok()) {
            return status;
          }
          break;
        default:
          break;
      }
    }
    return absl::OkStatus();
  }

  // One event_metadata or stat_metadata map entry (key 1, value 2).
  absl::Status MapEntry(uint32_t map, std::string_view entry, Plane *plane) {
    size_t at = 0;
    WireField field;
    int64_t key = 0;
    std::string_view value;
    while (at < entry.size()) {
      if (!NextWireField(entry, &at, &field)) return MessageDamage(entry, at, "metadata entry");
      if (field.number == kMapEntryKey && field.wire_type == 0) {
        key = static_cast<int64_t>(field.varint);
      } else if (field.number == kMapEntryValue && field.wire_type == 2) {
        value = field.payload;
      }
    }
    at = 0;
    if (map == xf::kPlaneStatMetadata) {
      StatName &stat = plane->stat_names[key];
      while (at < value.size()) {
        if (!NextWireField(value, &at, &field)) return MessageDamage(value, at, "XStatMetadata");
        if (field.number == xf::kStatMetadataName && field.wire_type == 2) {
          stat.name = field.payload;
          stat.kind = StatKindOf(field.payload);
        }
      }
      return absl::OkStatus();
    }
    EventMetadata &event = plane->events[key];
    while (at < value.size()) {
      if (!NextWireField(value, &at, &field)) return MessageDamage(value, at, "XEventMetadata");
      if (field.wire_type != 2) continue;
      if (field.number == xf::kEventMetadataName) event.name = field.payload;
      if (field.number == xf::kEventMetadataDisplayName) event.display_name = field.payload;
      if (field.number == xf::kEventMetadataStats) event.stats.push_back(field.payload);
    }
    return absl::OkStatus();
  }

  // An XStat's name and value; false for damage.
  static bool Stat(const Plane &plane, std::string_view bytes, StatName *name, StatValue *value) {
    size_t at = 0;
    WireField field;
    int64_t metadata_id = 0;
    *value = StatValue{};
    while (at < bytes.size()) {
      if (!NextWireField(bytes, &at, &field)) return false;
      switch (field.number) {
        case xf::kStatMetadataId:
          metadata_id = static_cast<int64_t>(field.varint);
          break;
        case xf::kStatInt64:
        case xf::kStatUint64:
          value->is_number = field.wire_type == 0;
          value->number = static_cast<int64_t>(field.varint);
          if (value->is_number) {
            value->type = field.number == xf::kStatInt64 ? StatValue::Type::kInt
                                                         : StatValue::Type::kUint;
          }
          break;
        case xf::kStatDouble:
          if (field.wire_type == 1) {
            double number = 0;
            std::memcpy(&number, field.payload.data(), sizeof number);
            value->is_number = std::isfinite(number) && std::fabs(number) < 9.2e18;
            value->number = value->is_number ? static_cast<int64_t>(number) : 0;
            value->type = StatValue::Type::kDouble;
            value->real = number;
          }
          break;
        case xf::kStatString:
        case xf::kStatBytes:
          value->is_text = field.wire_type == 2;
          value->text = field.payload;
          if (value->is_text) {
            value->type = field.number == xf::kStatString ? StatValue::Type::kText
                                                          : StatValue::Type::kBytes;
          }
          break;
        case xf::kStatRef:
          if (const auto ref = plane.stat_names.find(static_cast<int64_t>(field.varint));
              ref != plane.stat_names.end()) {
            value->is_text = true;
            value->text = ref->second.name;
            value->type = StatValue::Type::kText;
          }
          break;
        default:
          break;
      }
    }
    const auto found = plane.stat_names.find(metadata_id);
    *name = found == plane.stat_names.end() ? StatName{} : found->second;
    return true;
  }

  void ReadTaskEnvironment(const Plane &plane) {
    StatName name;
    StatValue value;
    for (std::string_view stat : plane.stats) {
      if (Stat(plane, stat, &name, &value) && name.kind == StatKind::kProfileStartTime &&
          value.is_number && value.number > 0) {
        profile_start_ns_ = value.number;
      }
    }
  }

  // One process for the host planes, one per device plane; numbered from 1 (XPlane has no pids).
  uint32_t ProcessFor(const Plane &plane, PlaneKind kind) {
    std::string name;
    if (kind == PlaneKind::kHost) {
      name = hostname_.empty() ? "host" : hostname_;
    } else {
      name = std::string(plane.name.substr(plane.name.starts_with("/") ? 1 : 0));
      if (!hostname_.empty()) name = absl::StrCat(hostname_, " ", name);
    }
    const uint32_t process = builder_->NamedProcess(name, group_);
    if (kind == PlaneKind::kHost) host_process_ = process;
    return process;
  }

  uint32_t TrackFor(uint32_t process, int64_t tid, std::string_view name, TrackKind kind,
                    int32_t device, int64_t stream) {
    bool added = false;
    const uint32_t row = builder_->ThreadRow(process, tid, &added);
    Track &track = trace_->tracks[row];
    if (added) {
      track.kind = kind;
      track.device = device;
      track.stream = stream;
    }
    // The GPU tracer's launch lines ("Host Threads/<tid>") share a thread's id: the thread's
    // own name is the better one.
    if (track.name.empty() || (absl::StartsWith(track.name, "Host Threads/") && !name.empty() &&
                               !name.starts_with("Host Threads/"))) {
      track.name = std::string(name);
    }
    return row;
  }

  absl::Status ReadPlane(const Plane &plane) {
    const PlaneKind kind = KindOf(plane.name);
    if (kind == PlaneKind::kSkipped) return absl::OkStatus();
    int32_t device = -1;
    if (kind == PlaneKind::kGpu) {
      int32_t ordinal = 0;
      device = absl::SimpleAtoi(ToAbsl(plane.name.substr(std::strlen(kGpuPlanePrefix))), &ordinal)
                   ? ordinal
                   : static_cast<int32_t>(plane.id);
      ReadDeviceProperties(plane, device);
    }
    if (plane.lines.empty()) return absl::OkStatus();
    const uint32_t process = ProcessFor(plane, kind);
    for (std::string_view line : plane.lines) {
      if (absl::Status status = ReadLine(plane, kind, process, device, line); !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

  void ReadDeviceProperties(const Plane &plane, int32_t device) {
    DeviceProperties properties;
    properties.id = device;
    bool any = false;
    StatName name;
    StatValue value;
    for (std::string_view stat : plane.stats) {
      if (!Stat(plane, stat, &name, &value)) continue;
      if (name.name == "gpu_device_name" && value.is_text) {
        properties.name = std::string(value.text);
      } else if (name.name == "memory_size" && value.is_number) {
        properties.global_memory_bytes = static_cast<uint64_t>(value.number);
      } else if (name.name == "compute_cap_major" && value.is_number) {
        properties.compute_major = value.number;
      } else if (name.name == "compute_cap_minor" && value.is_number) {
        properties.compute_minor = value.number;
      } else if (name.name == "core_count" && value.is_number) {
        properties.multiprocessors = value.number;
      } else {
        continue;
      }
      any = true;
    }
    if (any && group_ == 0) trace_->devices.push_back(std::move(properties));
  }

  absl::Status ReadLine(const Plane &plane, PlaneKind kind, uint32_t process, int32_t device,
                        std::string_view line) {
    int64_t id = 0;
    int64_t timestamp_ns = 0;
    std::string_view name;
    std::string_view display_name;
    std::vector<std::string_view> events;
    size_t at = 0;
    WireField field;
    while (at < line.size()) {
      if (!NextWireField(line, &at, &field)) return MessageDamage(line, at, "XLine");
      switch (field.number) {
        case xf::kLineId:
          if (field.wire_type == 0) id = static_cast<int64_t>(field.varint);
          break;
        case xf::kLineName:
          if (field.wire_type == 2) name = field.payload;
          break;
        case xf::kLineDisplayName:
          if (field.wire_type == 2) display_name = field.payload;
          break;
        case xf::kLineTimestampNs:
          if (field.wire_type == 0) timestamp_ns = static_cast<int64_t>(field.varint);
          break;
        case xf::kLineEvents:
          if (field.wire_type == 2) events.push_back(field.payload);
          break;
        default:
          break;
      }
    }
    if (name.empty()) name = display_name;
    TrackKind track_kind = TrackKind::kHostThread;
    int64_t stream = -1;
    if (kind == PlaneKind::kGpu) {
      // Only the streams hold the GPU's own records; the rest repeat them (Steps, TensorFlow
      // Ops, XLA Ops, Launch Stats) or are counters.
      if (!name.starts_with("Stream #")) {
        trace_->events_in_file += events.size();
        return absl::OkStatus();
      }
      track_kind = TrackKind::kGpuStream;
      stream = id;
    }
    const uint32_t track = TrackFor(process, id, name, track_kind, device, stream);
    for (std::string_view event : events) {
      if (absl::Status status = ReadEvent(plane, kind, track, timestamp_ns, event);
          !status.ok()) {
        return status;
      }
    }
    if (progress_ != nullptr) {
      progress_->Update(progress_what_, Offset(line) + line.size(), file_size_);
    }
    return absl::OkStatus();
  }

  absl::Status ReadEvent(const Plane &plane, PlaneKind kind, uint32_t track, int64_t line_ns,
                         std::string_view bytes) {
    ++trace_->events_in_file;
    int64_t metadata_id = 0;
    int64_t offset_ps = 0;
    int64_t duration_ps = 0;
    bool aggregated = false;
    EventStats stats;
    size_t at = 0;
    WireField field;
    std::vector<std::string_view> own_stats;
    while (at < bytes.size()) {
      if (!NextWireField(bytes, &at, &field)) return MessageDamage(bytes, at, "XEvent");
      switch (field.number) {
        case xf::kEventMetadataId:
          metadata_id = static_cast<int64_t>(field.varint);
          break;
        case xf::kEventOffsetPs:
          offset_ps = static_cast<int64_t>(field.varint);
          break;
        case xf::kEventDurationPs:
          duration_ps = static_cast<int64_t>(field.varint);
          break;
        case xf::kEventOccurrences:
          aggregated = true;
          break;
        case xf::kEventStats:
          if (field.wire_type == 2) own_stats.push_back(field.payload);
          break;
        default:
          break;
      }
    }
    if (aggregated) return absl::OkStatus();  // a count with no time: nothing to place
    const auto metadata = plane.events.find(metadata_id);
    std::string_view name;
    StatName stat_name;
    StatValue value;
    // The stats the model has no field for are kept as the event's args (file args), which the
    // writers give back: Chrome JSON's args, XPlane's stats.
    members_.clear();
    if (metadata != plane.events.end()) {
      name = metadata->second.name.empty() ? metadata->second.display_name : metadata->second.name;
      for (std::string_view stat : metadata->second.stats) {
        if (!Stat(plane, stat, &stat_name, &value)) continue;
        AddStat(stat_name, value, &stats);
        if (!xplane::HeldByModel(stat_name.kind)) {
          xplane::AppendStatMember(stat_name.name, value, &members_);
        }
      }
    }
    for (std::string_view stat : own_stats) {
      if (!Stat(plane, stat, &stat_name, &value)) return MessageDamage(stat, 0, "XStat");
      AddStat(stat_name, value, &stats);
      if (!xplane::HeldByModel(stat_name.kind)) {
        xplane::AppendStatMember(stat_name.name, value, &members_);
      }
    }

    Activity activity;
    activity.begin_ns = SaturatingAdd(line_ns, offset_ps / 1000);
    activity.end_ns = SaturatingAdd(activity.begin_ns, std::max<int64_t>(duration_ps, 0) / 1000);
    activity.track = track;
    activity.name = trace_->names.Intern(name);
    if (kind == PlaneKind::kGpu) {
      if (stats.memory) {
        activity.kind = ActivityKind::kInstant;
      } else if (!stats.memcpy_details.empty() || name.starts_with("Memcpy")) {
        activity.kind = ActivityKind::kMemcpy;
        activity.copy = CopyKindFromName(name);
        activity.bytes = static_cast<uint64_t>(
            std::max<int64_t>(xplane::DetailNumber(stats.memcpy_details, "size"), 0));
      } else if (!stats.memset_details.empty() || name.starts_with("Memset")) {
        activity.kind = ActivityKind::kMemset;
        activity.bytes = static_cast<uint64_t>(
            std::max<int64_t>(xplane::DetailNumber(stats.memset_details, "num_bytes"), 0));
      } else {
        activity.kind = ActivityKind::kKernel;
      }
      if (IsGpuWork(activity.kind)) activity.detail = GpuDetailFor(stats, activity.kind);
    } else if (kind == PlaneKind::kOtherDevice) {
      activity.kind = ActivityKind::kGpuAnnotation;
    } else if (stats.correlation) {
      activity.kind = ActivityKind::kRuntimeApi;  // a launch (or copy) call the GPU tracer saw
      if (name.starts_with("cu") && !name.starts_with("cuda")) activity.flags |= kActivityDriverApi;
      activity.detail = GpuDetailFor(stats, activity.kind);
    } else if (name.starts_with("$")) {
      activity.kind = ActivityKind::kPythonFunction;  // the Python tracer's "$file.py:12 f"
    } else if (duration_ps <= 0) {
      activity.kind = ActivityKind::kInstant;
    }
    if (kind == PlaneKind::kHost) {
      AddAllocatorSample(name, stats, track, activity.begin_ns);
      if (xplane::IsStepMarker(name, stats)) {
        // A step marker ("train" with _r=1): it becomes the step, not a span of work.
        xplane::StepMark marker;
        marker.begin_ns = activity.begin_ns;
        marker.end_ns = activity.end_ns;
        marker.track = track;
        marker.number = stats.step_num ? stats.step_num : stats.iter_num;
        step_marks_.AddMarker(marker);
        return absl::OkStatus();
      }
      step_marks_.Note(name, stats, activity.begin_ns, activity.end_ns, track,
                       trace_->activities.size());
    }
    KeepArgs(stats, &activity);
    builder_->AddActivity(activity);
    return absl::OkStatus();
  }

  // The event's other stats (members_), and a tf_op that named no GPU op, as its args: a host
  // event's file args, GPU work's or a launch call's GPU file args.
  void KeepArgs(const EventStats &stats, Activity *activity) {
    if (!stats.tf_op.empty() && !(IsGpuWork(activity->kind) && KeepsOp(stats))) {
      xplane::StatValue op;
      op.type = xplane::StatValue::Type::kText;
      op.text = stats.tf_op;
      xplane::AppendStatMember("tf_op", op, &members_);
    }
    if (members_.empty()) return;
    if (DetailIsFileArgs(activity->kind)) {
      activity->detail = builder_->AddFileArgs(members_);
      return;
    }
    if (activity->detail == kNoDetail) {
      activity->detail = builder_->AddGpuDetail(activity->kind, GpuDetail{});
    }
    trace_->gpu_file_args.emplace(activity->detail, builder_->AddFileArgs(members_));
  }

  // JAX's kernels all say "XlaModule:" (a module, no op): only a named op is kept as the op.
  static bool KeepsOp(const EventStats &stats) {
    return !stats.tf_op.empty() && !stats.tf_op.ends_with(":");
  }

  // The memory profile's MemoryAllocation and MemoryDeallocation events: the allocator's bytes in
  // use after each, a counter per allocator (runtime/model/memory_series.h reads them). The
  // event stays an instant of its thread.
  void AddAllocatorSample(std::string_view name, const EventStats &stats, uint32_t track,
                          int64_t ns) {
    if (!stats.bytes_allocated || (name != "MemoryAllocation" && name != "MemoryDeallocation")) {
      return;
    }
    if (allocator_series_ == kNoName) {
      allocator_series_ = trace_->names.Intern(kAllocatorBytesInUseSeries);
    }
    trace_->counters.push_back(CounterSample{
        ns, static_cast<double>(*stats.bytes_allocated),
        trace_->names.Intern(stats.allocator_name.empty() ? std::string_view("allocator")
                                                          : stats.allocator_name),
        builder_->CounterRow(trace_->tracks[track].process), allocator_series_});
  }

  uint32_t GpuDetailFor(const EventStats &stats, ActivityKind kind) {
    GpuDetail detail;
    if (stats.correlation) {
      detail.correlation = static_cast<uint32_t>(*stats.correlation);
      detail.fields |= kGpuHasCorrelation;
    }
    if (stats.context) {
      detail.context = static_cast<uint32_t>(*stats.context);
      detail.fields |= kGpuHasContext;
    }
    if (GpuWorkShape shape;
        kind == ActivityKind::kKernel && xplane::ReadLaunchShape(stats.kernel_details, &shape)) {
      detail.shape = trace_->work_shapes.Intern(shape);
      detail.fields |= kGpuHasLaunchShape;
    }
    if (KeepsOp(stats) && IsGpuWork(kind)) {
      detail.op = trace_->names.Intern(stats.tf_op);
    }
    if (detail.fields == 0 && detail.op == kNoName) return kNoDetail;
    return builder_->AddGpuDetail(kind, detail);
  }

  // The host's steps (xplane_steps.h says from which marks), on the trace's clock.
  void MakeSteps(int64_t shift_ns, std::vector<size_t> *dropped) {
    if (!host_process_) return;
    for (const HostStep &host_step : step_marks_.Steps()) {
      Step step;
      step.number = host_step.number;
      step.begin_ns = SaturatingAdd(host_step.begin_ns, shift_ns);
      step.end_ns = SaturatingAdd(host_step.end_ns, shift_ns);
      step.process = *host_process_;
      step.track = host_step.track;
      if (host_step.activity != SIZE_MAX) dropped->push_back(host_step.activity);
      builder_->AddStep(step);
    }
  }

 public:
  // Around Read: this host's activities and GPU details are the ones added in between.
  void Start() {
    first_activity_ = trace_->activities.size();
    first_detail_ = trace_->gpu_details.work().size();
    first_counter_ = trace_->counters.size();
  }
  void End() {
    end_activity_ = trace_->activities.size();
    end_detail_ = trace_->gpu_details.work().size();
    end_counter_ = trace_->counters.size();
  }

 private:
  TraceBuilder *builder_;
  Trace *trace_;
  uint32_t group_;
  ProgressListener *progress_;
  std::string path_;
  uint64_t file_size_;
  std::string progress_what_;
  std::string_view data_;
  std::string hostname_;
  std::optional<int64_t> profile_start_ns_;
  size_t first_activity_ = 0;
  size_t first_detail_ = 0;
  size_t end_activity_ = 0;
  size_t end_detail_ = 0;
  size_t first_counter_ = 0;  // this host's allocator samples (AddAllocatorSample)
  size_t end_counter_ = 0;
  uint32_t allocator_series_ = kNoName;
  std::optional<uint32_t> host_process_;  // the process of the host planes, once one has lines
  std::string members_;  // the event being read: its stats kept as args
  HostStepMarks step_marks_;
};

// The plane names a file may start with (XSpace's planes are usually sorted by name).
bool IsPlaneName(std::string_view name) {
  return name.starts_with("/host:") || name.starts_with("/device:") ||
         name.starts_with("/virtualdevice:") || name.starts_with("#Chip") ||
         name == kTaskEnvironmentPlane || name == "Host CPUs" || name == "Syscalls";
}

bool EndsWithXPlane(std::string_view name) { return name.ends_with(".xplane.pb"); }

std::vector<std::string> XPlaneFilesDirectlyIn(const std::string &directory) {
  std::vector<std::string> files;
  DIR *dir = opendir(directory.c_str());
  if (dir == nullptr) return files;
  while (const dirent *entry = readdir(dir)) {
    if (EndsWithXPlane(entry->d_name)) files.push_back(absl::StrCat(directory, "/", entry->d_name));
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool LooksLikeXSpace(std::string_view head) {
  size_t at = 0;
  WireField field;
  // The first plane: field 1, length-delimited (its length may run past `head`).
  if (head.empty() || static_cast<unsigned char>(head[0]) != ((xf::kSpacePlanes << 3) | 2)) {
    return false;
  }
  at = 1;
  uint64_t length = 0;
  if (!ReadWireVarint(head, &at, &length)) return false;
  const std::string_view plane = head.substr(at, std::min<uint64_t>(length, head.size() - at));
  size_t in = 0;
  // An id (varint), then the name; nothing else comes first in a serialized XPlane.
  while (NextWireField(plane, &in, &field)) {
    if (field.number == xf::kPlaneId && field.wire_type == 0) continue;
    return field.number == xf::kPlaneName && field.wire_type == 2 && IsPlaneName(field.payload);
  }
  return false;
}

std::vector<std::string> XPlaneFilesIn(const std::string &directory) {
  std::string dir = directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::vector<std::string> files = XPlaneFilesDirectlyIn(dir);
  if (!files.empty()) return files;
  const std::string runs = dir + "/plugins/profile";
  DIR *handle = opendir(runs.c_str());
  if (handle == nullptr) return files;
  std::vector<std::string> names;
  while (const dirent *entry = readdir(handle)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  closedir(handle);
  std::sort(names.begin(), names.end());
  // The newest run that holds profiles ("YYYY_MM_DD_HH_MM_SS" sorts by time).
  for (auto name = names.rbegin(); name != names.rend(); ++name) {
    files = XPlaneFilesDirectlyIn(absl::StrCat(runs, "/", *name));
    if (!files.empty()) return files;
  }
  return files;
}

absl::Status ReadXPlaneFiles(const std::vector<std::string> &files, ProgressListener *progress,
                             Trace *trace) {
  trace->format = Format::kXPlane;
  trace->producer = Producer::kTensorFlow;
  TraceBuilder builder(trace);
  builder.set_first_pid(1);  // XPlane has no pids: processes are numbered in reading order
  std::vector<std::unique_ptr<XSpaceReader>> readers;
  absl::Status status;
  for (const std::string &path : files) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      status = absl::UnavailableError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
      break;
    }
    struct stat info {};
    FileBytes bytes;
    if (fstat(fd, &info) != 0) {
      status = absl::UnavailableError(absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
    } else {
      status = bytes.Open(fd, static_cast<uint64_t>(info.st_size), path);
    }
    close(fd);
    if (!status.ok()) break;
    if (!LooksLikeXSpace(bytes.data())) {
      status = absl::InvalidArgumentError(absl::StrCat(
          path, ": not a trace: not an XPlane profile (an XSpace starts with a plane named "
                "\"/host:CPU\", \"/device:GPU:0\", ...)"));
      break;
    }
    auto reader = std::make_unique<XSpaceReader>(&builder, static_cast<uint32_t>(readers.size()),
                                                 progress, path,
                                                 static_cast<uint64_t>(info.st_size));
    reader->Start();
    status = reader->Read(bytes.data());
    reader->End();
    // Names and stats point into the file's bytes only while reading: the trace holds copies.
    readers.push_back(std::move(reader));
    if (!status.ok()) break;
  }
  // Hosts with a wall-clock start go on one clock, counted from the earliest of them.
  std::optional<int64_t> base;
  bool all_have_start = !readers.empty();
  for (const auto &reader : readers) {
    if (!reader->profile_start_ns()) {
      all_have_start = false;
      continue;
    }
    base = base ? std::min(*base, *reader->profile_start_ns()) : *reader->profile_start_ns();
  }
  std::vector<size_t> dropped;
  for (const auto &reader : readers) {
    reader->Finish(all_have_start ? *reader->profile_start_ns() - *base : 0, &dropped);
  }
  if (!dropped.empty()) {
    std::sort(dropped.begin(), dropped.end());
    size_t kept = 0;
    for (size_t index = 0, next = 0; index < trace->activities.size(); ++index) {
      if (next < dropped.size() && dropped[next] == index) {
        ++next;
        continue;
      }
      trace->activities[kept++] = trace->activities[index];
    }
    trace->activities.resize(kept);
  }
  if (all_have_start) trace->wall_offset_ns = *base;
  if (readers.size() == 1) trace->hostname = readers.front()->hostname();
  builder.Finish();
  return status;
}

}  // namespace tfprof
