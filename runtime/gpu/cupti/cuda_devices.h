// The GPUs as the CUDA driver names them. tfprof never initialises the driver itself: a cuInit
// of ours would run inside the driver's own cuInit under CUDA_INJECTION64_PATH (it deadlocks),
// and would make every later fork() child of an LD_PRELOADed program unable to use CUDA. A
// session started before the program's first CUDA call lists the devices once the program has
// initialised the driver.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/gpu/cupti/cupti_library.h"
#include "runtime/gpu/gpu_trace.h"

namespace tfprof {

struct DeviceListing {
  bool driver_initialised = false;  // false: the program has not called cuInit yet; no devices
  std::vector<GpuDeviceInfo> devices;
};

// Lists the devices if the driver is initialised. Errors: NotFound when it is initialised but
// sees no device, Unavailable for any other driver failure.
absl::StatusOr<DeviceListing> ListInitialisedDevices(const CudaDriverApi &driver);

}  // namespace tfprof
