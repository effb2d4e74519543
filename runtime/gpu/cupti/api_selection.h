// Which CUDA runtime and driver functions get an API activity record. State queries
// (cudaGetDevice, cudaGetLastError, cuCtxGetCurrent, cuKernelGetName, ...) are called many times
// per launch by frameworks (PyTorch on an H200: 14 API records a kernel, 12 of them queries) and
// take no time worth showing; by default their records are turned off (cuda_queries=on keeps
// them). CUPTI still instruments every call of an enabled API kind, so this shrinks the trace, not
// the time a launch costs. Enabling functions one by one instead of whole kinds was tried on an
// H200 and rejected: after the program initialised CUDA it records no API call and no external
// correlation at all (benchmarks/RESULTS.md).
#pragma once

#include <string_view>

#include "runtime/gpu/cupti/cupti_library.h"

namespace tfprof {

// True for a function that only reads state: its name holds "Get", "Peek", "IsCapturing",
// "Occupancy", "TotalMem", "CanAccessPeer" or "ComputeCapability" (cudaGetDevice,
// cudaPeekAtLastError, cudaStreamIsCapturing, cuDeviceTotalMem). Launches, copies, memsets,
// synchronisation, allocation, events and streams are never queries.
bool IsStateQuery(std::string_view function);

// Turns off the API activity records of every state query in the runtime and driver domains.
// Call after enabling CUPTI_ACTIVITY_KIND_RUNTIME and _DRIVER (enabling a kind resets this).
// Returns how many functions were turned off; 0 when this libcupti cannot select functions
// (cuptiActivityEnableRuntimeApi is newer than CUDA 12.0), and then every call is recorded.
int SkipStateQueries(const CuptiApi &api);

}  // namespace tfprof
