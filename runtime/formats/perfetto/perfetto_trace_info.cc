#include "runtime/formats/perfetto/perfetto_trace_info.h"

#include <algorithm>
#include <utility>

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
  info.pid = integer(root, "pid");
  info.start_unix_ns = integer(root, "start_time_unix_ns");
  info.start_monotonic_ns = integer(root, "start_time_monotonic_ns");
  info.end_monotonic_ns = integer(root, "end_time_monotonic_ns");
  info.rank = integer(root, "rank");
  if (const ArgNode *events = root.Find("events_recorded")) info.events_recorded = events->Uint();
  text(root, "hostname", &info.hostname);
  text(root, "clock", &info.clock);
  text(root, "sources", &info.sources);
  if (const ArgNode *command = root.Find("command_line")) {
    for (const ArgNode &item : command->entries) info.command_line.push_back(item.text);
  }
  TraceLosses &losses = info.losses;
  loss(root, "dropped_events", &losses.dropped_events, true);
  loss(root, "gpu_records_dropped", &losses.gpu_records_dropped, true);
  loss(root, "unmatched_span_ends", &losses.unmatched_span_ends, true);
  loss(root, "unmatched_step_ends", &losses.unmatched_step_ends, true);
  loss(root, "memory_dropped_events", &losses.memory_dropped_events, true);
  loss(root, "discarded_events", &losses.discarded_events, true);
  uint64_t unreported = 0;
  loss(root, "unreported_inputs", &unreported, false);
  losses.unreported_inputs = static_cast<uint32_t>(std::min<uint64_t>(unreported, UINT32_MAX));
  if (const ArgNode *gpu = root.Find("gpu"); gpu != nullptr && gpu->is_dict) {
    info.gpu.reported = true;
    text(*gpu, "state", &info.gpu.state);
    text(*gpu, "reason", &info.gpu.reason);
    text(*gpu, "cupti", &info.gpu.library);
    if (!root.Find("gpu_records_dropped")) {
      loss(*gpu, "records_dropped", &losses.gpu_records_dropped, false);
    }
    loss(*gpu, "buffers_refused", &losses.gpu_buffers_refused, false);
    loss(*gpu, "records_unparsed", &losses.gpu_records_unparsed, false);
    loss(*gpu, "late_records", &losses.gpu_late_records, false);
  }
  if (const ArgNode *devices = root.Find("deviceProperties")) {
    for (const ArgNode &item : devices->entries) {
      DeviceProperties device;
      device.id = integer(item, "id").value_or(0);
      text(item, "name", &device.name);
      if (const ArgNode *memory = item.Find("totalGlobalMem")) {
        device.global_memory_bytes = memory->Uint().value_or(0);
      }
      device.compute_major = integer(item, "computeMajor").value_or(0);
      device.compute_minor = integer(item, "computeMinor").value_or(0);
      device.multiprocessors = integer(item, "numSms").value_or(0);
      info.devices.push_back(std::move(device));
    }
  }
  if (const ArgNode *groups = root.Find("process_groups")) {
    for (const ArgNode &item : groups->entries) {
      const std::optional<int64_t> pid = integer(item, "pid");
      if (!pid) continue;
      TraceInfo::Group group{*pid, std::nullopt, integer(item, "rank")};
      if (std::optional<int64_t> number = integer(item, "group");
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
