// Display names of GPU work shared by the Chrome trace and StepStats writers: demangled kernel
// names and the copy and memory kinds as CUPTI's tools spell them ("HtoD", "Pinned").
#pragma once

#include <string>
#include <string_view>

#include "runtime/model/gpu_kinds.h"
#include "runtime/model/trace.h"

namespace tfprof {

std::string_view GpuStateName(GpuTracingState state);  // "active", "off", "unavailable", "not built"
std::string_view CopyKindName(GpuCopyKind kind);      // "HtoD", "PtoP", "Unknown"
std::string_view MemoryKindName(GpuMemoryKind kind);  // "Pageable", "Device Static", "Unknown"

// A copy's direction as the model knows it when CUPTI's exact kind is not known: "HtoD", "DtoH",
// "DtoD", "Unknown"; "" for kNone.
std::string_view CoarseCopyText(CopyKind kind);

// A row's name in the writers' output: its own, else "stream S" (GPU streams) or "thread T".
std::string RowName(const Track &track);

}  // namespace tfprof
