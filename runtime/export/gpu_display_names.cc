#include "runtime/export/gpu_display_names.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/model/gpu_names.h"

namespace tfprof {

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
