// The Chrome trace categories, both ways, in one table: what tfprof's writer calls each kind of
// activity (the PyTorch profiler's names, so tools built for its traces read tfprof's), and what
// the reader makes of the categories tfprof, the PyTorch profiler and other tools write.
#pragma once

#include <cstdint>
#include <string_view>

#include "runtime/model/trace.h"

namespace tfprof {

// "user_annotation", "cuda_runtime" (or "cuda_driver" with kActivityDriverApi), "kernel", ...
std::string_view CategoryOfActivity(ActivityKind kind, uint8_t flags);

// What an event of a category is, as the reader sees it.
enum class Role : uint8_t {
  kActivity,  // `kind` says which
  kStep,      // tfprof's "step" rows
  kIgnored,   // whole-trace spans ("Trace"), flows ("ac2g"), PyTorch's forward-backward links
  kUnknown,   // a category of no known tool: a host op, unless it sits on a GPU's rows
};
struct CategoryRole {
  Role role;
  ActivityKind kind;
};
// "user_annotation"/"cpu_op" -> host op; "python_function"; "cuda_runtime", "cuda_driver" and
// other vendors' "*_runtime"/"*_driver" -> API call; "kernel"; "gpu_memcpy"; "gpu_memset";
// "gpu_user_annotation"; "range"; "cuda_sync"; "overhead"; "step" -> a step. PyTorch 1.8-1.10's
// capitalised "Operator", "Runtime", "Kernel", "Memcpy", "Memset" likewise, and their flows
// ("async", "async_gpu", "async_cpu_to_gpu") are ignored like "ac2g". No category ("") -> host
// op: a plain Chrome or Perfetto trace's spans, not an unknown tool's.
CategoryRole RoleOfCategory(std::string_view category);

// A driver API call's category ("cuda_driver", "xpu_driver", ...).
bool IsDriverCategory(std::string_view category);

}  // namespace tfprof
