#include "tools/tfprof/trace_input/loaded_trace.h"

#include "runtime/string_view_bridge.h"

namespace tfprof::cli {

const char *ActivityKindName(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kHostOp: return "host_op";
    case ActivityKind::kPythonFunction: return "python_function";
    case ActivityKind::kRuntimeApi: return "runtime_api";
    case ActivityKind::kKernel: return "kernel";
    case ActivityKind::kMemcpy: return "memcpy";
    case ActivityKind::kMemset: return "memset";
    case ActivityKind::kGpuAnnotation: return "gpu_annotation";
    case ActivityKind::kRange: return "range";
  }
  return "unknown";
}

const char *TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kTfprofChrome: return "tfprof Chrome trace";
    case TraceFormat::kPytorchChrome: return "PyTorch profiler Chrome trace";
    case TraceFormat::kChrome: return "Chrome trace";
    case TraceFormat::kRunMetadata: return "TensorFlow RunMetadata";
    case TraceFormat::kStepStats: return "TensorFlow StepStats";
    case TraceFormat::kTfRecord: return "TFRecord of RunMetadata";
    case TraceFormat::kEventFile: return "TensorBoard event file";
  }
  return "unknown";
}

uint32_t NameInterner::Intern(std::string_view name) {
  // Heterogeneous lookup first, so a name seen before costs no allocation.
  if (auto found = index_.find(ToAbsl(name)); found != index_.end()) return found->second;
  const auto index = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  index_.emplace(names_.back(), index);
  return index;
}

}  // namespace tfprof::cli
