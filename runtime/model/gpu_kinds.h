// The GPU vocabulary that both the session's CUPTI records (runtime/gpu/gpu_trace.h) and the trace
// model use: whether tracing ran, kinds of stream work, copy directions and memory kinds.
#pragma once

#include <cstdint>

namespace tfprof {

// Whether GPU tracing ran in a session, and if not, why.
enum class GpuTracingState : uint8_t {
  kOff,          // cuda=off
  kNotBuilt,     // this libtfprof was built without the CUDA headers
  kUnavailable,  // cuda=auto and CUPTI could not be used: `GpuTrace::reason` says why
  kActive,
};

// Kinds of work that run on a device stream.
enum class GpuActivityKind : uint8_t { kKernel, kMemcpy, kMemset };

// The direction of a copy, as CUPTI classifies it (CUpti_ActivityMemcpyKind, plus peer-to-peer
// copies between two devices, which CUPTI reports as a separate record kind).
enum class GpuCopyKind : uint8_t {
  kUnknown,
  kHtoD,
  kDtoH,
  kHtoA,
  kAtoH,
  kAtoA,
  kAtoD,
  kDtoA,
  kDtoD,
  kHtoH,
  kPtoP,
};

// Where a copy's or memset's memory lives (CUpti_ActivityMemoryKind).
enum class GpuMemoryKind : uint8_t {
  kUnknown,
  kPageable,
  kPinned,
  kDevice,
  kArray,
  kManaged,
  kDeviceStatic,
  kManagedStatic,
};

}  // namespace tfprof
