// GpuTracer::Start for builds with the CUDA headers: finds CUPTI and the driver, tells every way
// GPU tracing can be unavailable apart, and starts the CUPTI tracer.
#include <memory>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/cupti/cuda_devices.h"
#include "runtime/gpu/cupti/cupti_library.h"
#include "runtime/gpu/cupti/gpu_collector.h"
#include "runtime/gpu/gpu_tracer.h"

namespace tfprof {

namespace {

// Under cuda=auto the session goes on host-only with `reason`; under cuda=on it fails.
absl::StatusOr<std::unique_ptr<GpuTracer>> Unavailable(const GpuOptions &options,
                                                       GpuTrace *trace, std::string reason) {
  if (options.mode == CudaMode::kOn) {
    return absl::AbortedError(absl::StrCat("cuda=on: ", reason));
  }
  trace->state = GpuTracingState::kUnavailable;
  trace->reason = std::move(reason);
  return std::unique_ptr<GpuTracer>();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuTracer>> GpuTracer::Start(const GpuOptions &options,
                                                            GpuTrace *trace) {
  if (options.mode == CudaMode::kOff) return GpuTracingOff(trace);
  absl::StatusOr<const CuptiApi *> cupti = LoadCupti(options.cupti_path, options.search_dirs);
  if (!cupti.ok()) return Unavailable(options, trace, std::string(cupti.status().message()));
  trace->library_path = (*cupti)->path;
  absl::StatusOr<const CudaDriverApi *> driver = LoadCudaDriver();
  if (!driver.ok()) return Unavailable(options, trace, std::string(driver.status().message()));
  // Never cuInit here (cuda_devices.h says why): before the program's first CUDA call the
  // devices are listed later, by the tracer, and CUPTI is armed all the same.
  absl::StatusOr<DeviceListing> listing = ListInitialisedDevices(**driver);
  if (!listing.ok()) return Unavailable(options, trace, std::string(listing.status().message()));

  auto tracer = std::make_unique<CuptiGpuTracer>(**cupti, options,
                                                 listing->driver_initialised ? nullptr : *driver);
  if (absl::Status status = tracer->Enable(); !status.ok()) {
    return Unavailable(options, trace, std::string(status.message()));
  }
  trace->state = GpuTracingState::kActive;
  trace->reason.clear();
  trace->devices = std::move(listing->devices);
  return std::unique_ptr<GpuTracer>(std::move(tracer));
}

}  // namespace tfprof
