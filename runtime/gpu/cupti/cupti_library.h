// libcupti and the CUDA driver, loaded with dlopen at run time (never linked), and the entry points
// tfprof calls. Built only when the CUDA headers were found at build time.
#pragma once

#include <cupti.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tfprof {

// The CUPTI functions tfprof uses, resolved from one loaded libcupti.
struct CuptiApi {
  void *handle = nullptr;
  std::string path;  // the file that was loaded

  CUptiResult (*GetVersion)(uint32_t *) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char **) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *) = nullptr;
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  // Optional (null in a CUPTI without them): per-function control of the API activity kinds.
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;

  // "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)".
  std::string ErrorName(CUptiResult result) const;
};

// Where libcupti is looked for. A path the user gave, `explicit_path` (the cupti_path option) or
// else $TFPROF_CUPTI_PATH, a file or a directory, is the only place looked at. Otherwise, in
// order: $CUDA_HOME and $CUDA_PATH (lib64, lib, extras/CUPTI/lib64,
// targets/<arch>-linux/lib), /usr/local/cuda and /usr/local/cuda-13*, the loader's own search
// path (LD_LIBRARY_PATH, ld.so.cache), and the nvidia-cuda-cupti pip package under
// $VIRTUAL_ENV, $CONDA_PREFIX and `extra_dirs` (the Python binding passes its own site-packages).
// Returns the candidates as tried, for the error message when none loads.
std::vector<std::string> CuptiCandidates(const std::string &explicit_path,
                                         const std::vector<std::string> &extra_dirs);

// Loads the first candidate that dlopens and has every function. The library stays loaded for
// the life of the process (CUPTI cannot be unloaded safely). Errors: NotFound, naming every
// place searched and the last dlerror.
absl::StatusOr<const CuptiApi *> LoadCupti(const std::string &explicit_path,
                                           const std::vector<std::string> &extra_dirs);

// The CUDA driver entry points used to tell "no driver" and "no device" apart from CUPTI errors,
// and to name the devices. No cuInit: tfprof never initialises the driver (cuda_devices.h).
struct CudaDriverApi {
  CUresult (*DriverGetVersion)(int *) = nullptr;
  CUresult (*DeviceGetCount)(int *) = nullptr;
  CUresult (*DeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*DeviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*DeviceTotalMem)(size_t *, CUdevice) = nullptr;
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*GetErrorName)(CUresult, const char **) = nullptr;

  // "CUDA_ERROR_NO_DEVICE (100)".
  std::string ErrorName(CUresult result) const;
};

// Loads libcuda.so.1. Errors: NotFound with dlerror's text.
absl::StatusOr<const CudaDriverApi *> LoadCudaDriver();

}  // namespace tfprof
