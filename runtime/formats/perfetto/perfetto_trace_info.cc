#include "runtime/formats/perfetto/perfetto_trace_info.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "runtime/model/trace_info_fields.h"

namespace tfprof {

TraceInfo TraceInfoFrom(const ArgNode &root) {
  TraceInfo info;
  info.seen = true;
  const auto integer = [&](const ArgNode &node, std::string_view key) -> std::optional<int64_t> {
    const ArgNode *found = node.Find(key);
    return found != nullptr ? found->Int() : std::nullopt;
  };
  const auto text = [&](const ArgNode &node, std::string_view key, std::string *out) {
    const ArgNode *found = node.Find(key);
    if (found != nullptr && found->type == ArgValue::kText) *out = found->text;
  };
  const auto loss = [&](const ArgNode &node, std::string_view key, uint64_t *out, bool stated) {
    const ArgNode *found = node.Find(key);
    if (found == nullptr) return;
    if (std::optional<uint64_t> value = found->Uint()) {
      *out = *value;
      if (stated) info.recording.losses_stated = true;
    }
  };
  namespace key = info_key;
  RecordingInfo &recording = info.recording;
  recording.pid = integer(root, key::kPid);
  recording.start_unix_ns = integer(root, key::kStartUnixNs);
  recording.start_monotonic_ns = integer(root, key::kStartMonotonicNs);
  recording.end_monotonic_ns = integer(root, key::kEndMonotonicNs);
  recording.rank = integer(root, key::kRank);
  if (const ArgNode *events = root.Find(key::kEventsRecorded)) {
    recording.events_recorded = events->Uint();
  }
  text(root, key::kHostname, &recording.hostname);
  text(root, key::kClock, &recording.clock);
  std::string sources;
  text(root, key::kSources, &sources);
  if (!sources.empty()) recording.sources = std::move(sources);
  if (const ArgNode *command = root.Find(key::kCommandLine)) {
    for (const ArgNode &item : command->entries) recording.command_line.push_back(item.text);
  }
  TraceLosses &losses = recording.losses;
  for (const LossField &field : kLossFields) loss(root, field.key, &(losses.*field.member), true);
  uint64_t unreported = 0;
  loss(root, key::kUnreportedInputs, &unreported, false);
  losses.unreported_inputs = static_cast<uint32_t>(std::min<uint64_t>(unreported, UINT32_MAX));
  if (const ArgNode *gpu = root.Find(key::kGpu); gpu != nullptr && gpu->is_dict) {
    recording.gpu.reported = true;
    for (const GpuStatusText &field : kGpuStatusTexts) {
      text(*gpu, field.key, &(recording.gpu.*field.member));
    }
    // "records_dropped" repeats the top-level "gpu_records_dropped", which wins when present.
    const auto stated_at_top_level = [&](uint64_t TraceLosses::*member) {
      return std::any_of(std::begin(kLossFields), std::end(kLossFields), [&](const LossField &top) {
        return top.member == member && root.Find(top.key) != nullptr;
      });
    };
    for (const GpuLossField &field : kGpuLossFields) {
      if (field.repeats_top_level && stated_at_top_level(field.member)) continue;
      loss(*gpu, field.key, &(losses.*field.member), false);
    }
  }
  if (const ArgNode *devices = root.Find(key::kDeviceProperties)) {
    for (const ArgNode &item : devices->entries) {
      DeviceProperties device;
      device.id = integer(item, kDeviceId).value_or(0);
      text(item, kDeviceName, &device.name);
      if (const ArgNode *memory = item.Find(kDeviceGlobalMemory)) {
        device.global_memory_bytes = memory->Uint().value_or(0);
      }
      for (const DeviceIntegerField &field : kDeviceIntegerFields) {
        device.*field.member = integer(item, field.key).value_or(0);
      }
      recording.devices.push_back(std::move(device));
    }
  }
  if (const ArgNode *groups = root.Find(key::kProcessGroups)) {
    for (const ArgNode &item : groups->entries) {
      const std::optional<int64_t> pid = integer(item, key::kPid);
      if (!pid) continue;
      TraceInfo::Group group{*pid, std::nullopt, integer(item, key::kRank)};
      if (std::optional<int64_t> number = integer(item, key::kGroup);
          number && *number >= 0 && *number < 1000000000) {
        group.group = static_cast<uint32_t>(*number);
      }
      info.groups.push_back(group);
    }
  }
  return info;
}

void ApplyTraceInfo(const TraceInfo &info, const PerfettoTracks &tracks, Trace *trace) {
  ApplyRecordingInfo(info.recording, trace);
  if (const std::optional<int64_t> pid = info.recording.pid) {
    if (std::optional<uint32_t> main = tracks.ProcessIndex(*pid)) {
      trace->process_name = trace->processes[*main].name;
    } else if (const ProcessInfo *described = tracks.DescribedProcess(*pid)) {
      trace->process_name = described->name;
    }
  }
  for (const TraceInfo::Group &group : info.groups) {
    std::optional<uint32_t> process = tracks.ProcessIndex(group.pid);
    if (!process) continue;
    if (group.group) trace->processes[*process].group = *group.group;
    if (group.rank) trace->processes[*process].rank = group.rank;
  }
}

}  // namespace tfprof
