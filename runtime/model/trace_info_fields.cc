#include "runtime/model/trace_info_fields.h"

namespace tfprof {

void ApplyRecordingInfo(const RecordingInfo &info, Trace *trace) {
  if (info.start_unix_ns && info.start_monotonic_ns) {
    // Unsigned: a damaged file's times wrap rather than overflow.
    trace->wall_offset_ns = static_cast<int64_t>(static_cast<uint64_t>(*info.start_unix_ns) -
                                                static_cast<uint64_t>(*info.start_monotonic_ns));
    trace->start_ns = info.start_monotonic_ns;
  }
  if (info.end_monotonic_ns) trace->end_ns = info.end_monotonic_ns;
  if (info.pid) trace->pid = info.pid;
  if (info.events_recorded) trace->events_recorded = info.events_recorded;
  if (info.rank) trace->rank = info.rank;
  if (!info.hostname.empty()) trace->hostname = info.hostname;
  if (!info.clock.empty()) trace->clock = info.clock;
  if (!info.command_line.empty()) trace->command_line = info.command_line;
  if (info.sources) trace->sources_json = *info.sources;
  if (info.gpu.reported) trace->gpu = info.gpu;
  if (!info.devices.empty()) trace->devices = info.devices;
  if (info.losses_stated) {
    trace->losses = info.losses;
    trace->losses.reported = true;
  }
}

}  // namespace tfprof
