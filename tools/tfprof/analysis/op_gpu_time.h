// GPU time by host op, by layer and by step: each kernel, copy and memset is tied to its launch
// call by correlation id, and so to the host spans open on the launching thread at the launch.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/model/step_index.h"
#include "runtime/model/trace.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

// The host spans (kHostOp, kPythonFunction, kRuntimeApi) of each track in begin order, outer
// spans first, and the host time per name: what HostOpStats() sorts and sums once, and the GPU
// time by op walks again without sorting.
struct HostSpansByTrack {
  std::vector<uint32_t> offsets;  // track t's spans are order[offsets[t], offsets[t + 1])
  std::vector<uint32_t> order;    // indices into Trace::activities
  std::vector<uint64_t> calls;    // by name id
  std::vector<int64_t> total_ns;  // by name id: the union of the name's spans on each thread
};

// The row for GPU work whose launching host op is unknown.
inline constexpr std::string_view kNoHostOpRow = "(no host op)";

// Whether a host span stands for a layer: PyTorch's module spans ("nn.Module: Linear_0", with
// with_modules) and tfprof's own below the top module ("Net.fc1: Linear", "Net.fc1: Linear
// (backward)"; the top one is named "Net" alone, which no rule tells from an op).
bool IsLayerSpanName(std::string_view name);

// The name scopes of a TensorFlow op name, outermost first: "model/dense_1/MatMul" and XPlane's
// tf_op "model/dense_1/MatMul:MatMul" give {"model", "model/dense_1"}; a name that is not a
// scoped op name (spaces, "::", Python frames) gives none.
std::vector<std::string_view> NameScopesOf(std::string_view name);

// Fills summary->gpu_time_by_op, gpu_time_by_layer, gpu_work_ns, each step's (and step_total's)
// launched GPU time and top op, and top_kernels' op. Needs the steps, step_total and top_kernels
// filled. Python frames (kPythonFunction spans that are not layers) are code, not ops: work under
// them counts for the ops and layers around them, and they have no row.
void SummarizeGpuTimeByOp(const Trace &trace, const HostSpansByTrack &spans,
                          const StepIndex &step_index, const SummaryOptions &options,
                          TraceSummary *summary);

}  // namespace tfprof::cli
