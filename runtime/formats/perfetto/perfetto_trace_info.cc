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
      if (stated) info.losses_stated = true;
    }
  };
  namespace key = info_key;
  info.pid = integer(root, key::kPid);
  info.start_unix_ns = integer(root, key::kStartUnixNs);
  info.start_monotonic_ns = integer(root, key::kStartMonotonicNs);
  info.end_monotonic_ns = integer(root, key::kEndMonotonicNs);
  info.rank = integer(root, key::kRank);
  if (const ArgNode *events = root.Find(key::kEventsRecorded)) info.events_recorded = events->Uint();
  text(root, key::kHostname, &info.hostname);
  text(root, key::kClock, &info.clock);
  text(root, key::kSources, &info.sources);
  if (const ArgNode *command = root.Find(key::kCommandLine)) {
    for (const ArgNode &item : command->entries) info.command_line.push_back(item.text);
  }
  TraceLosses &losses = info.losses;
  for (const LossField &field : kLossFields) loss(root, field.key, &(losses.*field.member), true);
  uint64_t unreported = 0;
  loss(root, key::kUnreportedInputs, &unreported, false);
  losses.unreported_inputs = static_cast<uint32_t>(std::min<uint64_t>(unreported, UINT32_MAX));
  if (const ArgNode *gpu = root.Find(key::kGpu); gpu != nullptr && gpu->is_dict) {
    info.gpu.reported = true;
    for (const GpuStatusText &field : kGpuStatusTexts) text(*gpu, field.key, &(info.gpu.*field.member));
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
      info.devices.push_back(std::move(device));
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
  if (info.start_unix_ns && info.start_monotonic_ns) {
    trace->wall_offset_ns = static_cast<int64_t>(static_cast<uint64_t>(*info.start_unix_ns) -
                                                static_cast<uint64_t>(*info.start_monotonic_ns));
    trace->start_ns = info.start_monotonic_ns;
  }
  trace->end_ns = info.end_monotonic_ns;
  trace->pid = info.pid;
  trace->events_recorded = info.events_recorded;
  trace->hostname = info.hostname;
  trace->clock = info.clock;
  trace->command_line = info.command_line;
  trace->gpu = info.gpu;
  trace->devices = info.devices;
  trace->sources_json = info.sources;
  if (info.rank) trace->rank = info.rank;
  if (info.pid) {
    if (std::optional<uint32_t> main = tracks.ProcessIndex(*info.pid)) {
      trace->process_name = trace->processes[*main].name;
    } else if (const ProcessInfo *described = tracks.DescribedProcess(*info.pid)) {
      trace->process_name = described->name;
    }
  }
  // Only a trace info that states the losses reports them (as the Chrome reader's header).
  if (info.losses_stated) {
    trace->losses = info.losses;
    trace->losses.reported = true;
  }
  for (const TraceInfo::Group &group : info.groups) {
    std::optional<uint32_t> process = tracks.ProcessIndex(group.pid);
    if (!process) continue;
    if (group.group) trace->processes[*process].group = *group.group;
    if (group.rank) trace->processes[*process].rank = group.rank;
  }
}

}  // namespace tfprof
