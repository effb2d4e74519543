#include "runtime/formats/chrome/tf_timeline_rows.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/ascii_text.h"
#include "runtime/formats/tensorflow/step_stats_decode.h"
#include "runtime/formats/tensorflow/step_stats_trace_reader.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

constexpr std::string_view kComputeSuffix = " Compute";
constexpr std::string_view kLossesNode = "tfprof/losses:Losses";
constexpr uint32_t kGone = UINT32_MAX;
// Row keys of a GPU's process besides its streams' numbers (the StepStats reader's too).
constexpr int64_t kAllStreamsRow = -1;
constexpr int64_t kMemcpyRow = -2;

enum class DeviceRole : uint8_t { kNone, kHost, kStream, kAllStreams, kMemcpy, kOtherGpu };

struct ProcessRole {
  DeviceRole role = DeviceRole::kNone;
  std::string prefix;  // a tfprof merge's "LABEL: ", else empty
  int32_t gpu = -1;
  int64_t stream = -1;
  bool copies = false;  // a stream device of copies only (TF 2's "stream:7<MemcpyH2D>")
};

bool IsGpuTracerRow(DeviceRole role) {
  return role == DeviceRole::kStream || role == DeviceRole::kAllStreams ||
         role == DeviceRole::kMemcpy;
}

// "<device> Compute" with a TensorFlow device name ("/job:...", "/gpu:0/stream:7", ...), which
// ClassifyTfDevice() sorts as the StepStats reader does.
ProcessRole RoleOf(std::string_view name) {
  ProcessRole result;
  if (name.size() <= kComputeSuffix.size() ||
      name.substr(name.size() - kComputeSuffix.size()) != kComputeSuffix) {
    return result;
  }
  std::string_view device = name.substr(0, name.size() - kComputeSuffix.size());
  // A merge's label ends in ": ", and TensorFlow's device names never hold ": /".
  if (const size_t label = device.rfind(": /"); label != std::string_view::npos) {
    result.prefix.assign(device.substr(0, label + 2));
    device.remove_prefix(label + 2);
  }
  if (device.size() < 2 || device[0] != '/' || device.find(':') == std::string_view::npos) {
    return result;
  }
  const TfDevice where = ClassifyTfDevice(device);
  result.gpu = std::max(where.gpu, 0);
  result.stream = where.stream;
  result.copies = where.copies;
  switch (where.kind) {
    case TfDevice::kHost: result.role = DeviceRole::kHost; break;
    case TfDevice::kGpuStream: result.role = DeviceRole::kStream; break;
    case TfDevice::kGpuAll: result.role = DeviceRole::kAllStreams; break;
    case TfDevice::kGpuMemcpy: result.role = DeviceRole::kMemcpy; break;
    case TfDevice::kGpuOther: result.role = DeviceRole::kOtherGpu; break;
  }
  return result;
}

// A GPU tracer event by its op: TensorFlow 1 names copies "MEMCPYHtoD", TensorFlow 2 "MemcpyH2D".
ActivityKind GpuKindOf(std::string_view name, bool copy) {
  if (copy || StartsWithIgnoringCase(name, "memcpy")) return ActivityKind::kMemcpy;
  if (StartsWithIgnoringCase(name, "memset")) return ActivityKind::kMemset;
  return ActivityKind::kKernel;
}

// tfprof's step node (step_stats_decode.h), "step_000042:TrainingStep" as a name here.
std::optional<int64_t> TimelineStepNumber(std::string_view name) {
  const size_t colon = name.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return StepNodeNumber(name.substr(0, colon), name.substr(colon + 1));
}

// A twin is the same NodeExecStats saved twice: same GPU, op, node and times.
using TwinKey = std::tuple<uint32_t, uint32_t, uint32_t, int64_t, int64_t>;

}  // namespace

std::string TimelineNodeName(std::string_view node, std::string_view type) {
  if (type.empty() || type == "unknown" || type == node) return std::string(node);
  return absl::StrCat(ToAbsl(node), ":", ToAbsl(type));
}

bool ApplyTimelineRows(const std::vector<TimelineOp> &ops, Trace *trace) {
  std::vector<Activity> &activities = trace->activities;
  std::vector<Track> &tracks = trace->tracks;
  std::vector<ProcessRole> roles;
  roles.reserve(trace->processes.size());
  for (const Process &process : trace->processes) roles.push_back(RoleOf(process.name));
  const auto role_of = [&](const Activity &activity) -> const ProcessRole & {
    return roles[tracks[activity.track].process];
  };
  bool timeline = false;
  for (const TimelineOp &op : ops) {
    if (op.activity < activities.size() &&
        role_of(activities[op.activity]).role != DeviceRole::kNone) {
      timeline = true;
      break;
    }
  }
  if (!timeline) return false;
  std::vector<uint32_t> node_of(activities.size(), kNoName);
  for (const TimelineOp &op : ops) {
    if (op.activity < activities.size()) node_of[op.activity] = op.node;
  }

  // One process per GPU holds its tracer rows: its "stream:all" process, else its first one.
  std::map<std::pair<std::string, int32_t>, uint32_t> holder_of_gpu;
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t index = 0; index < roles.size(); ++index) {
      const ProcessRole &role = roles[index];
      if (pass == 0 ? role.role == DeviceRole::kAllStreams : IsGpuTracerRow(role.role)) {
        holder_of_gpu.try_emplace({role.prefix, role.gpu}, index);
      }
    }
  }
  std::vector<uint32_t> holder(roles.size(), kGone);
  for (uint32_t index = 0; index < roles.size(); ++index) {
    const ProcessRole &role = roles[index];
    if (IsGpuTracerRow(role.role)) holder[index] = holder_of_gpu[{role.prefix, role.gpu}];
  }

  // The row each track's events go to: one per stream of a GPU (timeline.py's lanes of a stream
  // device are one stream), plus the GPU's "stream all" and "memcpy" rows for repeats without a
  // twin. A row reuses the first track that goes to it.
  std::vector<uint32_t> row_of(tracks.size());
  std::map<std::pair<uint32_t, int64_t>, uint32_t> rows;
  for (uint32_t index = 0; index < tracks.size(); ++index) {
    row_of[index] = index;
    const ProcessRole &role = roles[tracks[index].process];
    if (!IsGpuTracerRow(role.role)) continue;
    const int64_t row = role.role == DeviceRole::kStream       ? role.stream
                        : role.role == DeviceRole::kAllStreams ? kAllStreamsRow
                                                               : kMemcpyRow;
    row_of[index] = rows.try_emplace({holder[tracks[index].process], row}, index).first->second;
  }

  // Repeats meet their twins: copies first (which makes their twins copies), then kernels.
  absl::flat_hash_map<TwinKey, std::vector<uint32_t>> on_streams;
  for (uint32_t index = 0; index < activities.size(); ++index) {
    const Activity &activity = activities[index];
    if (role_of(activity).role != DeviceRole::kStream) continue;
    on_streams[TwinKey{holder[tracks[activity.track].process], activity.name, node_of[index],
                       activity.begin_ns, activity.end_ns}]
        .push_back(index);
  }
  std::vector<bool> dropped(activities.size(), false);
  std::vector<bool> copy(activities.size(), false);
  for (const DeviceRole repeated : {DeviceRole::kMemcpy, DeviceRole::kAllStreams}) {
    for (uint32_t index = 0; index < activities.size(); ++index) {
      const Activity &activity = activities[index];
      if (role_of(activity).role != repeated) continue;
      auto twins = on_streams.find(TwinKey{holder[tracks[activity.track].process], activity.name,
                                           node_of[index], activity.begin_ns, activity.end_ns});
      if (twins == on_streams.end() || twins->second.empty()) continue;
      if (repeated == DeviceRole::kMemcpy) copy[twins->second.back()] = true;
      twins->second.pop_back();
      dropped[index] = true;
    }
  }

  for (uint32_t index = 0; index < activities.size(); ++index) {
    Activity &activity = activities[index];
    const ProcessRole &role = role_of(activity);
    const uint32_t node = node_of[index];
    if (role.role == DeviceRole::kHost) {
      if (node == kNoName) continue;
      // tfprof's own nodes, which a timeline of tfprof's step statistics draws as ops: its step
      // node is the step (as the StepStats reader has it), its losses node no op.
      const std::string_view node_name = trace->names.Get(node);
      if (const std::optional<int64_t> number = TimelineStepNumber(node_name)) {
        Step &step = trace->steps.emplace_back();
        step.number = *number;
        step.begin_ns = activity.begin_ns;
        step.end_ns = activity.end_ns;
        step.process = tracks[activity.track].process;
        step.track = activity.track;
        dropped[index] = true;
      } else if (node_name == kLossesNode) {
        dropped[index] = true;
      }
      activity.name = node;
      continue;
    }
    if (role.role == DeviceRole::kOtherGpu) {
      activity.kind = ActivityKind::kGpuAnnotation;
      continue;
    }
    if (!IsGpuTracerRow(role.role) || dropped[index]) continue;
    if (node == kNoName) {
      // Not timeline.py's: the step rows tfprof's layout=timeline draws on every device.
      activity.kind = ActivityKind::kGpuAnnotation;
      activity.track = row_of[activity.track];
      continue;
    }
    const std::string_view name = trace->names.Get(activity.name);
    activity.kind = GpuKindOf(name, copy[index] || role.copies || role.role == DeviceRole::kMemcpy);
    if (activity.kind == ActivityKind::kMemcpy) {
      activity.copy = CopyKindFromName(name);
      if (activity.copy == CopyKind::kNone && node != kNoName) {
        activity.copy = CopyKindFromName(trace->names.Get(node));
      }
      if (activity.copy == CopyKind::kNone) activity.copy = CopyKind::kOther;
    }
    if (node != kNoName) {
      GpuDetail detail;
      detail.op = node;
      activity.detail = trace->gpu_details.Add(activity.kind, detail);
    }
    activity.track = row_of[activity.track];
  }
  for (uint32_t index = 0; index < tracks.size(); ++index) {
    Track &track = tracks[index];
    const ProcessRole &role = roles[track.process];
    if (role.role == DeviceRole::kOtherGpu) {
      track.kind = TrackKind::kGpuStream;
      track.device = role.gpu;
      track.stream = -1;
      continue;
    }
    if (!IsGpuTracerRow(role.role) || row_of[index] != index) continue;
    const int64_t row = role.role == DeviceRole::kStream       ? role.stream
                        : role.role == DeviceRole::kAllStreams ? kAllStreamsRow
                                                               : kMemcpyRow;
    track.process = holder[track.process];
    track.tid = row;
    track.kind = TrackKind::kGpuStream;
    track.device = role.gpu;
    track.stream = row >= 0 ? row : -1;
    track.name = row == kAllStreamsRow ? std::string("stream all")
                 : row == kMemcpyRow   ? std::string("memcpy")
                                       : absl::StrCat("stream ", row);
    track.sort_index.reset();
  }
  for (CounterSample &sample : trace->counters) sample.track = row_of[sample.track];
  // tfprof's layout=timeline draws each step on every device and with its step node: a step is
  // kept once, on the host (a GPU's copy only when no host process has that step).
  std::set<std::tuple<int64_t, int64_t, int64_t>> on_host;
  for (const Step &step : trace->steps) {
    if (holder[step.process] == kGone) on_host.insert({step.number, step.begin_ns, step.end_ns});
  }
  std::set<std::tuple<uint32_t, int64_t, int64_t, int64_t>> seen_steps;
  std::vector<Step> kept_steps;
  for (Step &step : trace->steps) {
    if (holder[step.process] != kGone) {
      if (on_host.contains({step.number, step.begin_ns, step.end_ns})) continue;
      step.process = holder[step.process];
    }
    if (step.track != kNoTrack) step.track = row_of[step.track];
    if (seen_steps.insert({step.process, step.number, step.begin_ns, step.end_ns}).second) {
      kept_steps.push_back(step);
    }
  }
  trace->steps = std::move(kept_steps);
  for (uint32_t index = 0; index < activities.size(); ++index) {
    Activity &activity = activities[index];
    if (activity.kind == ActivityKind::kRange && activity.detail != kNoDetail) {
      activity.detail = row_of[activity.detail];
    }
  }

  // Renumbered: the repeats and tfprof's nodes, the emptied tracer rows and the processes left
  // without rows go.
  std::vector<bool> used(tracks.size(), false);
  for (uint32_t index = 0; index < activities.size(); ++index) {
    if (dropped[index]) continue;
    used[activities[index].track] = true;
    if (activities[index].kind == ActivityKind::kRange && activities[index].detail != kNoDetail) {
      used[activities[index].detail] = true;
    }
  }
  for (const CounterSample &sample : trace->counters) used[sample.track] = true;
  for (const Step &step : trace->steps) {
    if (step.track != kNoTrack) used[step.track] = true;
  }
  // Rows of TensorFlow's devices with nothing left on them go (the merged and emptied tracer
  // rows, the row of tfprof's losses node), then device processes without rows; others stay.
  std::vector<bool> process_kept(roles.size(), false);
  for (uint32_t index = 0; index < roles.size(); ++index) {
    process_kept[index] = roles[index].role == DeviceRole::kNone;
  }
  std::vector<uint32_t> track_map(tracks.size(), kGone);
  std::vector<Track> kept_tracks;
  for (uint32_t index = 0; index < tracks.size(); ++index) {
    const bool device_row = roles[tracks[index].process].role != DeviceRole::kNone;
    if (device_row && (row_of[index] != index || !used[index])) continue;
    track_map[index] = static_cast<uint32_t>(kept_tracks.size());
    process_kept[tracks[index].process] = true;
    kept_tracks.push_back(std::move(tracks[index]));
  }
  for (const Step &step : trace->steps) process_kept[step.process] = true;
  std::vector<uint32_t> process_map(roles.size(), kGone);
  std::vector<Process> kept_processes;
  for (uint32_t index = 0; index < roles.size(); ++index) {
    if (!process_kept[index]) continue;
    process_map[index] = static_cast<uint32_t>(kept_processes.size());
    Process &process = trace->processes[index];
    if (IsGpuTracerRow(roles[index].role)) {
      process.name = absl::StrCat(roles[index].prefix, "GPU ", roles[index].gpu);
    }
    kept_processes.push_back(std::move(process));
  }
  for (Track &track : kept_tracks) track.process = process_map[track.process];
  trace->processes = std::move(kept_processes);
  trace->tracks = std::move(kept_tracks);
  size_t kept = 0;
  for (uint32_t index = 0; index < activities.size(); ++index) {
    if (dropped[index]) continue;
    Activity activity = activities[index];
    activity.track = track_map[activity.track];
    if (activity.kind == ActivityKind::kRange && activity.detail != kNoDetail) {
      activity.detail = track_map[activity.detail];
    }
    activities[kept++] = activity;
  }
  activities.resize(kept);
  for (CounterSample &sample : trace->counters) sample.track = track_map[sample.track];
  for (Step &step : trace->steps) {
    step.process = process_map[step.process];
    if (step.track != kNoTrack) step.track = track_map[step.track];
  }
  return true;
}

}  // namespace tfprof
