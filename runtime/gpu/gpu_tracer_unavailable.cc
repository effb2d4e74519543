// GpuTracer::Start for builds without the CUDA headers: GPU tracing is never available.
#include "runtime/gpu/gpu_tracer.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tfprof {

std::atomic<bool> g_gpu_correlation_enabled{false};

void PushGpuCorrelation(uint64_t) {}
void PopGpuCorrelation() {}

absl::StatusOr<std::unique_ptr<GpuTracer>> GpuTracer::Start(const GpuOptions &options,
                                                            GpuTrace *trace) {
  if (options.mode == CudaMode::kOff) return GpuTracingOff(trace);
  constexpr const char *kReason =
      "this libtfprof was built without GPU support (no CUDA toolkit at build time); rebuild "
      "with the CUDA toolkit installed for GPU tracing";
  if (options.mode == CudaMode::kOn) {
    return absl::AbortedError(absl::StrCat("cuda=on: ", kReason));
  }
  trace->state = GpuTracingState::kNotBuilt;
  trace->reason = kReason;
  return std::unique_ptr<GpuTracer>();
}

}  // namespace tfprof
