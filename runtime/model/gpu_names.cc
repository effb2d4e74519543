#include "runtime/model/gpu_names.h"

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

std::string_view GpuStateName(GpuTracingState state) {
  switch (state) {
    case GpuTracingState::kActive: return "active";
    case GpuTracingState::kUnavailable: return "unavailable";
    case GpuTracingState::kNotBuilt: return "not built";
    case GpuTracingState::kOff: break;
  }
  return "off";
}

std::string_view CoarseCopyText(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return "HtoD";
    case CopyKind::kDeviceToHost: return "DtoH";
    case CopyKind::kDeviceToDevice: return "DtoD";
    case CopyKind::kOther: return "Unknown";
    case CopyKind::kNone: break;
  }
  return "";
}

std::string RowName(const Track &track) {
  if (!track.name.empty()) return track.name;
  if (track.kind == TrackKind::kGpuStream) {
    return absl::StrCat("stream ", track.stream >= 0 ? track.stream : track.tid);
  }
  return absl::StrCat("thread ", track.tid);
}

std::string_view CopyKindName(GpuCopyKind kind) {
  switch (kind) {
    case GpuCopyKind::kHtoD: return "HtoD";
    case GpuCopyKind::kDtoH: return "DtoH";
    case GpuCopyKind::kHtoA: return "HtoA";
    case GpuCopyKind::kAtoH: return "AtoH";
    case GpuCopyKind::kAtoA: return "AtoA";
    case GpuCopyKind::kAtoD: return "AtoD";
    case GpuCopyKind::kDtoA: return "DtoA";
    case GpuCopyKind::kDtoD: return "DtoD";
    case GpuCopyKind::kHtoH: return "HtoH";
    case GpuCopyKind::kPtoP: return "PtoP";
    case GpuCopyKind::kUnknown: break;
  }
  return "Unknown";
}

std::string_view MemoryKindName(GpuMemoryKind kind) {
  switch (kind) {
    case GpuMemoryKind::kPageable: return "Pageable";
    case GpuMemoryKind::kPinned: return "Pinned";
    case GpuMemoryKind::kDevice: return "Device";
    case GpuMemoryKind::kArray: return "Array";
    case GpuMemoryKind::kManaged: return "Managed";
    case GpuMemoryKind::kDeviceStatic: return "Device Static";
    case GpuMemoryKind::kManagedStatic: return "Managed Static";
    case GpuMemoryKind::kUnknown: break;
  }
  return "Unknown";
}

}  // namespace tfprof
