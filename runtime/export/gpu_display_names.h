// Display names of the session's GPU records as the outputs show them: copies and memsets named
// as Kineto names them, kernels demangled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/gpu/gpu_trace.h"
#include "runtime/storage/name_table.h"

namespace tfprof {

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
