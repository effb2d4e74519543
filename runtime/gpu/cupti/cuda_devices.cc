#include "runtime/gpu/cupti/cuda_devices.h"

#include "absl/strings/str_cat.h"

namespace tfprof {

namespace {

GpuDeviceInfo DescribeDevice(const CudaDriverApi &driver, int ordinal, CUdevice device) {
  GpuDeviceInfo info;
  info.id = static_cast<uint32_t>(ordinal);
  char name[256] = {0};
  if (driver.DeviceGetName(name, sizeof name - 1, device) == CUDA_SUCCESS) info.name = name;
  size_t memory = 0;
  if (driver.DeviceTotalMem(&memory, device) == CUDA_SUCCESS) info.global_memory_bytes = memory;
  const auto attribute = [&](CUdevice_attribute which, uint32_t *out) {
    int value = 0;
    if (driver.DeviceGetAttribute(&value, which, device) == CUDA_SUCCESS) {
      *out = static_cast<uint32_t>(value);
    }
  };
  attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.compute_major);
  attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.compute_minor);
  attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.multiprocessors);
  return info;
}

}  // namespace

absl::StatusOr<DeviceListing> ListInitialisedDevices(const CudaDriverApi &driver) {
  DeviceListing listing;
  int count = 0;
  // Before cuInit every driver function but cuInit answers CUDA_ERROR_NOT_INITIALIZED at once.
  const CUresult result = driver.DeviceGetCount(&count);
  if (result == CUDA_ERROR_NOT_INITIALIZED) return listing;
  if (result == CUDA_ERROR_NO_DEVICE || (result == CUDA_SUCCESS && count <= 0)) {
    return absl::NotFoundError("no CUDA device (the driver is installed but sees no GPU)");
  }
  if (result != CUDA_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("the CUDA driver failed to list its devices (", driver.ErrorName(result), ")"));
  }
  listing.driver_initialised = true;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    if (driver.DeviceGet(&device, ordinal) != CUDA_SUCCESS) continue;
    listing.devices.push_back(DescribeDevice(driver, ordinal, device));
  }
  return listing;
}

}  // namespace tfprof
