#include "runtime/model/gpu_names.h"

#include <cxxabi.h>

#include <cstdlib>

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

std::string MemcpyDisplayName(const GpuActivity &copy) {
  return absl::StrCat("Memcpy ", ToAbsl(CopyKindName(copy.copy_kind)), " (",
                      ToAbsl(MemoryKindName(copy.src_memory)), " -> ",
                      ToAbsl(MemoryKindName(copy.dst_memory)), ")");
}

std::string MemsetDisplayName(const GpuActivity &memset) {
  return absl::StrCat("Memset (", ToAbsl(MemoryKindName(memset.src_memory)), ")");
}

const std::string &KernelNames::Get(uint32_t id) {
  if (id >= demangled_.size()) demangled_.resize(id + 1);
  std::string &name = demangled_[id];
  if (!name.empty()) return name;
  const std::string raw(names_.Get(id));
  // Only "_Z..." is a mangled function name; __cxa_demangle would also turn "i" into "int".
  int status = -1;
  char *demangled =
      raw.rfind("_Z", 0) == 0 ? abi::__cxa_demangle(raw.c_str(), nullptr, nullptr, &status) : nullptr;
  name = status == 0 && demangled != nullptr ? demangled : raw;
  std::free(demangled);
  if (name.empty()) name = "(unnamed kernel)";
  return name;
}

}  // namespace tfprof
