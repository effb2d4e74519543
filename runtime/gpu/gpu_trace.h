// What a session collected from the GPU through CUPTI, in tfprof's own terms: no CUPTI header is
// needed to read it, so every exporter compiles with or without the CUDA toolkit.
//
// Times are host clock ticks, the same unit as host events: CUPTI stamps its records through
// tfprof's timestamp callback, so TickConverter turns both into one time line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/storage/chunked_log.h"
#include "runtime/storage/name_table.h"
#include "runtime/model/gpu_kinds.h"

namespace tfprof {

// One kernel, copy or memset that ran on a device stream.
struct GpuActivity {
  uint64_t start_ticks = 0;
  uint64_t end_ticks = 0;
  uint64_t bytes = 0;        // copies and memsets
  uint64_t graph_id = 0;     // nonzero when launched as part of a CUDA graph
  uint32_t correlation = 0;  // CUPTI's id, shared with the API call that launched it
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint32_t name = 0;         // GpuTrace::names id: the kernel's (mangled) name; 0 for others
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers = 0;           // per thread
  int32_t static_shared = 0;       // bytes per block
  int32_t dynamic_shared = 0;      // bytes per block
  // Peer-to-peer copies: `device` is the source device and this the destination.
  uint32_t peer_device = 0;
  uint32_t memset_value = 0;
  GpuActivityKind kind = GpuActivityKind::kKernel;
  GpuCopyKind copy_kind = GpuCopyKind::kUnknown;
  GpuMemoryKind src_memory = GpuMemoryKind::kUnknown;  // memsets: the memory written
  GpuMemoryKind dst_memory = GpuMemoryKind::kUnknown;
};

// One CUDA runtime or driver API call, on the host thread that made it.
struct GpuApiCall {
  uint64_t start_ticks = 0;
  uint64_t end_ticks = 0;
  int64_t os_tid = 0;        // CUPTI is told to report system thread ids (gettid)
  uint32_t correlation = 0;
  uint32_t callback_id = 0;  // CUPTI's cbid within its domain
  uint32_t name = 0;         // GpuTrace::names id: "cudaLaunchKernel", "cuLaunchKernel", ...
  bool driver = false;       // driver API (cu*) rather than runtime API (cuda*)
  bool launches_work = false;  // a launch, copy, memset or graph launch: GPU work follows
};

// CUPTI's link from one API call (its correlation id) to the external id tfprof pushed for the
// innermost open host span on the calling thread.
struct GpuExternalCorrelation {
  uint32_t correlation = 0;
  uint64_t external_id = 0;
};

// A synchronisation the host waited on (option cuda_sync=1).
enum class GpuSyncKind : uint8_t { kUnknown, kEvent, kStreamWaitEvent, kStream, kContext };
struct GpuSync {
  uint64_t start_ticks = 0;
  uint64_t end_ticks = 0;
  uint32_t correlation = 0;
  uint32_t context = 0;
  uint32_t stream = 0;  // UINT32_MAX for a context-wide synchronisation
  GpuSyncKind kind = GpuSyncKind::kUnknown;
};

// Time CUPTI itself spent (buffer flushes, instrumentation), on a host thread or a device.
struct GpuOverhead {
  uint64_t start_ticks = 0;
  uint64_t end_ticks = 0;
  uint32_t name = 0;  // GpuTrace::names id: "CUPTI buffer flush", ...
  int64_t os_tid = 0;  // 0 when the overhead is not a thread's
};

// A device memory allocation (positive bytes) or release (negative), for the memory counter.
struct GpuMemoryChange {
  uint64_t ticks = 0;
  int64_t bytes = 0;
  uint64_t address = 0;
  uint32_t device = 0;
};

struct GpuDeviceInfo {
  uint32_t id = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  uint64_t global_memory_bytes = 0;
  uint32_t compute_major = 0;
  uint32_t compute_minor = 0;
  uint32_t multiprocessors = 0;
};

// What was lost on the GPU side. Every output writes these; nothing is dropped silently.
struct GpuLossCounters {
  uint64_t records_dropped = 0;   // cuptiActivityGetNumDroppedRecords, summed over buffers
  uint64_t buffers_refused = 0;   // CUPTI asked for a buffer while the pool was empty
  uint64_t records_unparsed = 0;  // records of a kind tfprof does not read (counted, not shown)
  uint64_t late_records = 0;      // arrived after their step's output was written
};

struct GpuTrace {
  GpuTracingState state = GpuTracingState::kOff;
  std::string reason;        // kUnavailable and kNotBuilt: the warning that was given
  std::string library_path;  // the libcupti that was loaded, when one was
  NameTable names;           // kernel, API function and overhead names
  template <typename T>
  using Log = ChunkedLog<T, 8192>;
  Log<GpuActivity> activities;
  Log<GpuApiCall> api_calls;
  Log<GpuExternalCorrelation> external_correlations;
  Log<GpuSync> syncs;
  Log<GpuOverhead> overheads;
  Log<GpuMemoryChange> memory_changes;
  std::vector<GpuDeviceInfo> devices;
  GpuLossCounters losses;
};

// The external id a host span pushes to CUPTI while it is open, stored in its begin event's
// `arg`: the span's thread (a per-session attach serial) in the high 32 bits and the thread's
// count of spans in the low 32, so ids never repeat within a session. 0 means "no id".
inline uint64_t SpanExternalId(uint32_t thread_serial, uint32_t span_serial) {
  return (uint64_t{thread_serial} << 32) | span_serial;
}

}  // namespace tfprof
