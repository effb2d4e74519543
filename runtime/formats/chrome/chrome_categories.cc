#include "runtime/formats/chrome/chrome_categories.h"

namespace tfprof {

namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

std::string_view CategoryOfActivity(ActivityKind kind, uint8_t flags) {
  switch (kind) {
    case ActivityKind::kHostOp: return "user_annotation";
    case ActivityKind::kPythonFunction: return "python_function";
    case ActivityKind::kRuntimeApi:
      return (flags & kActivityDriverApi) != 0 ? "cuda_driver" : "cuda_runtime";
    case ActivityKind::kKernel: return "kernel";
    case ActivityKind::kMemcpy: return "gpu_memcpy";
    case ActivityKind::kMemset: return "gpu_memset";
    case ActivityKind::kGpuAnnotation: return "gpu_user_annotation";
    case ActivityKind::kRange: return "range";
    case ActivityKind::kInstant: return "user_annotation";
    case ActivityKind::kSync: return "cuda_sync";
    case ActivityKind::kOverhead: return "overhead";
  }
  return "user_annotation";
}

bool IsDriverCategory(std::string_view category) { return EndsWith(category, "_driver"); }

CategoryRole RoleOfCategory(std::string_view category) {
  switch (category.size()) {
    case 0:  // no category at all (a plain Chrome trace, a Rust tracing-perfetto slice): a span
      return {Role::kActivity, ActivityKind::kHostOp};
    case 4:
      if (category == "step") return {Role::kStep, ActivityKind::kHostOp};
      break;
    case 5:
      if (category == "range") return {Role::kActivity, ActivityKind::kRange};
      if (category == "Trace" || category == "ac2g" || category == "async") {
        return {Role::kIgnored, ActivityKind::kHostOp};
      }
      break;
    case 6:
      if (category == "kernel" || category == "Kernel") {
        return {Role::kActivity, ActivityKind::kKernel};
      }
      if (category == "cpu_op") return {Role::kActivity, ActivityKind::kHostOp};
      if (category == "Memcpy") return {Role::kActivity, ActivityKind::kMemcpy};
      if (category == "Memset") return {Role::kActivity, ActivityKind::kMemset};
      if (category == "fwdbwd") return {Role::kIgnored, ActivityKind::kHostOp};
      break;
    case 7:
      // PyTorch 1.8 to 1.10 (Kineto before its categories were lower case).
      if (category == "Runtime") return {Role::kActivity, ActivityKind::kRuntimeApi};
      break;
    case 8:
      if (category == "overhead") return {Role::kActivity, ActivityKind::kOverhead};
      if (category == "Operator") return {Role::kActivity, ActivityKind::kHostOp};
      break;
    case 9:
      if (category == "cuda_sync") return {Role::kActivity, ActivityKind::kSync};
      if (category == "async_gpu") return {Role::kIgnored, ActivityKind::kHostOp};  // a flow
      break;
    case 10:
      if (category == "gpu_memcpy") return {Role::kActivity, ActivityKind::kMemcpy};
      if (category == "gpu_memset") return {Role::kActivity, ActivityKind::kMemset};
      break;
    case 15:
      if (category == "user_annotation") return {Role::kActivity, ActivityKind::kHostOp};
      if (category == "python_function") return {Role::kActivity, ActivityKind::kPythonFunction};
      break;
    case 16:
      if (category == "async_cpu_to_gpu") return {Role::kIgnored, ActivityKind::kHostOp};  // a flow
      break;
    case 19:
      if (category == "gpu_user_annotation") {
        return {Role::kActivity, ActivityKind::kGpuAnnotation};
      }
      // Kineto's CUPTI range profiler: a measured range of GPU work, on the GPU's rows.
      if (category == "cuda_profiler_range") {
        return {Role::kActivity, ActivityKind::kGpuAnnotation};
      }
      break;
    default:
      break;
  }
  // cuda_runtime, cuda_driver and the other vendors' (xpu_runtime, privateuse1_driver, ...).
  if (EndsWith(category, "_runtime") || IsDriverCategory(category)) {
    return {Role::kActivity, ActivityKind::kRuntimeApi};
  }
  return {Role::kUnknown, ActivityKind::kHostOp};
}

}  // namespace tfprof
