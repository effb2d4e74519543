// GpuTracer::Start for builds with the CUDA headers: finds CUPTI and the driver, tells every way
// GPU tracing can be unavailable apart, and starts the CUPTI tracer.
#include <memory>

#include "absl/strings/str_cat.h"
#include "runtime/cupti/cupti_library.h"
#include "runtime/cupti/gpu_collector.h"
#include "runtime/gpu_tracer.h"

namespace tfprof {

namespace {

// The devices as the driver names them; CUPTI's device ids are these ordinals.
absl::StatusOr<std::vector<GpuDeviceInfo>> ListDevices(const CudaDriverApi &driver) {
  CUresult result = driver.Init(0);
  if (result == CUDA_ERROR_NO_DEVICE) {
    return absl::NotFoundError("no CUDA device (the driver is installed but sees no GPU)");
  }
  if (result != CUDA_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("the CUDA driver failed to initialise (",
                                               driver.ErrorName(result), ")"));
  }
  int count = 0;
  result = driver.DeviceGetCount(&count);
  if (result != CUDA_SUCCESS || count <= 0) {
    return absl::NotFoundError("no CUDA device (the driver is installed but sees no GPU)");
  }
  std::vector<GpuDeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    if (driver.DeviceGet(&device, ordinal) != CUDA_SUCCESS) continue;
    GpuDeviceInfo info;
    info.id = static_cast<uint32_t>(ordinal);
    char name[256] = {0};
    if (driver.DeviceGetName(name, sizeof name - 1, device) == CUDA_SUCCESS) info.name = name;
    size_t memory = 0;
    if (driver.DeviceTotalMem(&memory, device) == CUDA_SUCCESS) info.global_memory_bytes = memory;
    int value = 0;
    if (driver.DeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) ==
        CUDA_SUCCESS) {
      info.compute_major = static_cast<uint32_t>(value);
    }
    if (driver.DeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) ==
        CUDA_SUCCESS) {
      info.compute_minor = static_cast<uint32_t>(value);
    }
    if (driver.DeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device) ==
        CUDA_SUCCESS) {
      info.multiprocessors = static_cast<uint32_t>(value);
    }
    devices.push_back(std::move(info));
  }
  return devices;
}

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
  absl::StatusOr<std::vector<GpuDeviceInfo>> devices = ListDevices(**driver);
  if (!devices.ok()) return Unavailable(options, trace, std::string(devices.status().message()));

  auto tracer = std::make_unique<CuptiGpuTracer>(**cupti, options);
  if (absl::Status status = tracer->Enable(options.sync); !status.ok()) {
    return Unavailable(options, trace, std::string(status.message()));
  }
  trace->state = GpuTracingState::kActive;
  trace->reason.clear();
  trace->devices = std::move(*devices);
  return std::unique_ptr<GpuTracer>(std::move(tracer));
}

}  // namespace tfprof
