// The direction of a GPU copy from how profilers write it, shared by the trace readers.
#pragma once

#include <cstdint>
#include <string_view>

#include "runtime/model/trace.h"

namespace tfprof {

// From a name or label: "Memcpy HtoD (Pageable -> Device)" (CUPTI's, Kineto's, tfprof's),
// "MEMCPYDtoH" (TensorFlow 1), "MemcpyD2D" (TensorFlow 2), a bare "PtoP". Arrays count as device
// memory, peer copies as device to device. kNone when the text names no direction.
CopyKind CopyKindFromName(std::string_view name);

// From CUPTI's CUpti_ActivityMemcpyKind number (1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD,
// 7 DtoA, 8 DtoD, 9 HtoH, 10 PtoP), as profilers write it into an event's args; kOther for the
// rest.
CopyKind CopyKindFromCupti(int64_t kind);

// The exact direction text tfprof and Kineto write in a copy's args ("HtoD", "PtoP", "AtoH",
// ...) as CUPTI's memcpy kind (GpuDetail::copy_direction); 0 for any other text.
uint8_t CopyDirectionFromText(std::string_view text);

}  // namespace tfprof
