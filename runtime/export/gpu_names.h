// Display names of GPU work shared by the Chrome trace and StepStats writers: demangled kernel
// names and the copy and memory kinds as CUPTI's tools spell them ("HtoD", "Pinned").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/gpu_trace.h"

namespace tfprof {

std::string_view GpuStateName(GpuTracingState state);  // "active", "off", "unavailable", "not built"
std::string_view CopyKindName(GpuCopyKind kind);      // "HtoD", "PtoP", "Unknown"
std::string_view MemoryKindName(GpuMemoryKind kind);  // "Pageable", "Device Static", "Unknown"

// "Memcpy HtoD (Pinned -> Device)", as Kineto names copies.
std::string MemcpyDisplayName(const GpuActivity &copy);
// "Memset (Device)".
std::string MemsetDisplayName(const GpuActivity &memset);

// Kernel names demangled once per name id (abi::__cxa_demangle; the raw name when it is not a
// mangled C++ name).
class KernelNames {
 public:
  explicit KernelNames(const NameTable &names) : names_(names), demangled_(names.size()) {}
  const std::string &Get(uint32_t id);

 private:
  const NameTable &names_;
  std::vector<std::string> demangled_;  // "" until first asked for
};

}  // namespace tfprof
