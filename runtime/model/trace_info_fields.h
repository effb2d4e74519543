// The keys of what a trace file says about its recording (tfprof's Chrome JSON header and the
// top-level keys Kineto writes; the trace-info dict of tfprof's Perfetto traces), with the Trace
// member each stands for. Readers decode and writers encode them from here, so a key is spelled
// once.
//
// In the Chrome JSON, tfprof writes (see ChromeJsonWriter::Finish, the tail):
//   "dropped_events", "gpu_records_dropped"                  losses, top level
//   "distributedInfo": {"rank": N}, "deviceProperties": [...]  Kineto's, top level
//   "tfprof": {"version", "clock", "pid", "hostname", "command_line", "start_time_unix_ns",
//              "start_time_monotonic_ns", "end_time_monotonic_ns", "events_recorded",
//              the other losses, "unreported_inputs", "gpu": {...}, "timestamps", "sources"}
// The Perfetto trace info holds the same keys in one flat dict ("rank" and "process_groups"
// included).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof {

namespace info_key {

// Chrome JSON top level.
inline constexpr std::string_view kTfprof = "tfprof";  // tfprof's header object
inline constexpr std::string_view kDistributedInfo = "distributedInfo";  // Kineto: {"rank": N}
inline constexpr std::string_view kDeviceProperties = "deviceProperties";  // Kineto: [{...}]
inline constexpr std::string_view kBaseTimeNs = "baseTimeNanoseconds";  // Kineto: ts's origin
inline constexpr std::string_view kSchemaVersion = "schemaVersion";     // Kineto
inline constexpr std::string_view kTraceName = "traceName";             // Kineto

// The recording (inside "tfprof", or the Perfetto trace info).
inline constexpr std::string_view kVersion = "version";  // tfprof's, of the writer
inline constexpr std::string_view kClock = "clock";      // Trace::clock
inline constexpr std::string_view kPid = "pid";          // Trace::pid
inline constexpr std::string_view kHostname = "hostname";          // Trace::hostname
inline constexpr std::string_view kCommandLine = "command_line";   // Trace::command_line
// Trace::start_ns + Trace::wall_offset_ns, and Trace::start_ns.
inline constexpr std::string_view kStartUnixNs = "start_time_unix_ns";
inline constexpr std::string_view kStartMonotonicNs = "start_time_monotonic_ns";
inline constexpr std::string_view kEndMonotonicNs = "end_time_monotonic_ns";  // Trace::end_ns
inline constexpr std::string_view kEventsRecorded = "events_recorded";  // Trace::events_recorded
// TraceLosses::unreported_inputs: stated with the losses, but not itself a loss.
inline constexpr std::string_view kUnreportedInputs = "unreported_inputs";
inline constexpr std::string_view kGpu = "gpu";                // Trace::gpu, GPU losses
inline constexpr std::string_view kTimestamps = "timestamps";  // for people: what ts means
inline constexpr std::string_view kSources = "sources";        // Trace::sources_json
inline constexpr std::string_view kRank = "rank";              // Trace::rank
inline constexpr std::string_view kProcessGroups = "process_groups";  // Perfetto: Process::group
inline constexpr std::string_view kGroup = "group";

// Inside "gpu": counts of what the trace holds, written for people and not read back.
inline constexpr std::string_view kGpuKernels = "kernels";
inline constexpr std::string_view kGpuMemcpys = "memcpys";
inline constexpr std::string_view kGpuMemsets = "memsets";
inline constexpr std::string_view kGpuApiCalls = "api_calls";

}  // namespace info_key

// ---- losses ----

// Where tfprof's Chrome header writes a loss counter.
enum class LossPlace : uint8_t {
  kTopLevel,  // beside "traceEvents"
  kTfprof,    // in the "tfprof" object
};

struct LossField {
  std::string_view key;
  uint64_t TraceLosses::*member;
  LossPlace chrome_place;
};

// The losses whose statement makes a trace report its losses (TraceLosses::reported), in the
// order the writers write them.
inline constexpr LossField kLossFields[] = {
    {"dropped_events", &TraceLosses::dropped_events, LossPlace::kTopLevel},
    {"gpu_records_dropped", &TraceLosses::gpu_records_dropped, LossPlace::kTopLevel},
    {"unmatched_span_ends", &TraceLosses::unmatched_span_ends, LossPlace::kTfprof},
    {"unmatched_step_ends", &TraceLosses::unmatched_step_ends, LossPlace::kTfprof},
    {"memory_dropped_events", &TraceLosses::memory_dropped_events, LossPlace::kTfprof},
    {"discarded_events", &TraceLosses::discarded_events, LossPlace::kTfprof},
};

// ---- "gpu" ----

struct GpuStatusText {
  std::string_view key;
  std::string GpuTracingStatus::*member;
};

// Trace::gpu's texts, in the writers' order.
inline constexpr GpuStatusText kGpuStatusTexts[] = {
    {"state", &GpuTracingStatus::state},
    {"reason", &GpuTracingStatus::reason},
    {"cupti", &GpuTracingStatus::library},
};

struct GpuLossField {
  std::string_view key;
  uint64_t TraceLosses::*member;
  // The same count as the top-level "gpu_records_dropped", which readers take when present.
  bool repeats_top_level;
};

// The GPU tracer's losses inside "gpu", in the writers' order. They do not by themselves make a
// trace report its losses.
inline constexpr GpuLossField kGpuLossFields[] = {
    {"records_dropped", &TraceLosses::gpu_records_dropped, true},
    {"buffers_refused", &TraceLosses::gpu_buffers_refused, false},
    {"records_unparsed", &TraceLosses::gpu_records_unparsed, false},
    {"late_records", &TraceLosses::gpu_late_records, false},
};

// ---- "deviceProperties" (Kineto's names) ----

struct DeviceIntegerField {
  std::string_view key;
  int64_t DeviceProperties::*member;
};

inline constexpr std::string_view kDeviceId = "id";
inline constexpr std::string_view kDeviceName = "name";
inline constexpr std::string_view kDeviceGlobalMemory = "totalGlobalMem";  // unsigned
// The signed integers after "totalGlobalMem", in the writers' order.
inline constexpr DeviceIntegerField kDeviceIntegerFields[] = {
    {"computeMajor", &DeviceProperties::compute_major},
    {"computeMinor", &DeviceProperties::compute_minor},
    {"numSms", &DeviceProperties::multiprocessors},
};

// ---- decoded ----

// What tfprof's Chrome JSON header or Perfetto trace info says about the recording, decoded from
// the keys above by the format's reader, before it goes into the Trace.
struct RecordingInfo {
  std::optional<int64_t> pid;
  std::optional<int64_t> start_unix_ns;
  std::optional<int64_t> start_monotonic_ns;
  std::optional<int64_t> end_monotonic_ns;
  std::optional<uint64_t> events_recorded;
  std::optional<int64_t> rank;
  std::string hostname;
  std::string clock;
  std::vector<std::string> command_line;
  std::optional<std::string> sources;  // raw JSON (Perfetto's trace info; the Chrome header's is
                                       // not read back)
  GpuTracingStatus gpu;
  std::vector<DeviceProperties> devices;
  bool losses_stated = false;  // the file gives its losses (tfprof writes them, when known)
  TraceLosses losses;          // unreported_inputs included; `reported` set when applied
};

// What `info` states, into `*trace`: the start and wall-clock offset (when both start times are
// known), the end, pid, events recorded, rank, host name, clock, command line, sources, GPU
// status and devices where stated; the losses, reported, only when the file states them (tfprof
// writes its header also for traces converted from formats that record none).
void ApplyRecordingInfo(const RecordingInfo &info, Trace *trace);

}  // namespace tfprof
