// GPU tracing as the profiler sees it: start, flush, hand over records, stop. The CUPTI
// implementation (runtime/gpu/cupti/gpu_collector.cc) is built when the CUDA headers were found at
// build time; otherwise runtime/gpu/gpu_tracer_unavailable.cc says so.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/gpu/gpu_trace.h"

namespace tfprof {

enum class CudaMode : uint8_t { kAuto, kOn, kOff };

struct GpuOptions {
  static constexpr uint32_t kDefaultBufferKb = 4096;
  static constexpr uint32_t kDefaultBuffers = 8;

  CudaMode mode = CudaMode::kAuto;
  std::string cupti_path;                 // the cupti_path option; empty: search
  std::vector<std::string> search_dirs;   // extra site-packages to search (Python binding)
  uint32_t buffer_kb = kDefaultBufferKb;  // size of each CUPTI activity buffer
  uint32_t buffers = kDefaultBuffers;     // buffers allocated before tracing starts
  bool sync = false;                      // also trace synchronisation (cuda_sync=on)
  bool queries = false;                   // also record state-query API calls (cuda_queries=on)
  uint32_t wait_ms = 2000;                // how long a step's output waits for late GPU records
};

class GpuTracer {
 public:
  virtual ~GpuTracer() = default;

  // Starts GPU tracing. With mode kOff, or when tracing cannot start under kAuto, returns null and
  // sets `trace->state` and `trace->reason` (the caller warns once). Under kOn, failing to start
  // is an Aborted error naming the cause. Sets trace->devices when tracing starts.
  static absl::StatusOr<std::unique_ptr<GpuTracer>> Start(const GpuOptions &options,
                                                          GpuTrace *trace);

  // Asks CUPTI for its filled buffers; `forced` also returns partly filled ones. Never call with
  // a lock of tfprof's held: CUPTI may call back into the buffer callbacks, which take one.
  virtual void Flush(bool forced) = 0;

  // Moves the records parsed so far into `trace` (takes only the tracer's own record lock).
  virtual void MoveRecordsInto(GpuTrace &trace) = 0;

  // Stops collection: disables every activity kind and flushes what CUPTI still holds. Records
  // stay available to MoveRecordsInto. No lock of tfprof's may be held.
  virtual void Stop() = 0;
};

// cuda=off: no tracer, and the trace says so. Shared by both Start() implementations.
inline std::unique_ptr<GpuTracer> GpuTracingOff(GpuTrace *trace) {
  trace->state = GpuTracingState::kOff;
  trace->reason = "cuda=off";
  return nullptr;
}

// Hot-path hooks, set while a session with GPU tracing runs: each host span pushes its external
// id on begin and pops it on end so CUPTI tags the GPU work launched inside it.
extern std::atomic<bool> g_gpu_correlation_enabled;
void PushGpuCorrelation(uint64_t external_id);
void PopGpuCorrelation();

}  // namespace tfprof
