#include "tools/tfprof/analysis/op_classes.h"

#include <fnmatch.h>

#include <algorithm>

namespace tfprof::cli {
namespace {

// Calls that block the calling host thread until GPU work finishes. A synchronous cudaMemcpy
// waits for the stream too. PyTorch's .item()/.cpu() show up as aten::_local_scalar_dense. HIP
// (ROCm traces keep the "cuda_runtime" category for them) has the same calls under hip* names;
// hipMemcpyWithStream is the synchronous copy PyTorch uses on ROCm.
const std::vector<std::string> &SyncPatterns() {
  static const std::vector<std::string> patterns = {
      "cudaDeviceSynchronize*", "cudaStreamSynchronize*", "cudaEventSynchronize*",
      "cuCtxSynchronize*",      "cuStreamSynchronize*",   "cuEventSynchronize*",
      "cudaMemcpy",             "cudaMemcpy_*",           "cudaMemcpy2D",
      "cuMemcpyDtoH*",          "cuMemcpyHtoD_v2",        "aten::_local_scalar_dense",
      "aten::item",             "hipDeviceSynchronize*",  "hipStreamSynchronize*",
      "hipEventSynchronize*",   "hipCtxSynchronize*",     "hipMemcpy",
      "hipMemcpyWithStream*",   "hipMemcpyDtoH",          "hipMemcpyHtoD"};
  return patterns;
}

const std::vector<std::string> &LaunchPatterns() {
  static const std::vector<std::string> patterns = {
      "cudaLaunchKernel*", "cuLaunchKernel*",  "cudaLaunchCooperativeKernel*",
      "cudaGraphLaunch*",  "cuGraphLaunch*",   "cudaLaunchKernelExC*",
      "hipLaunchKernel*",  "hipExtLaunchKernel*", "hipModuleLaunchKernel*",
      "hipExtModuleLaunchKernel*", "hipGraphLaunch*", "hipLaunchCooperativeKernel*"};
  return patterns;
}

const std::vector<std::string> &HostCollectivePatterns() {
  static const std::vector<std::string> patterns = {"gloo:*"};
  return patterns;
}

const std::vector<std::string> &AsyncCopyCallPatterns() {
  static const std::vector<std::string> patterns = {
      "cudaMemcpyAsync*", "cudaMemcpy2DAsync*", "cudaMemcpy3DAsync*", "cudaMemcpyPeerAsync*",
      "cuMemcpy*Async*",  "hipMemcpyAsync*",    "hipMemcpy2DAsync*",  "hipMemcpyDtoHAsync*",
      "hipMemcpyHtoDAsync*"};
  return patterns;
}

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

bool ContainsIgnoringCase(std::string_view text, std::string_view lower_needle) {
  if (lower_needle.size() > text.size()) return false;
  for (size_t i = 0; i + lower_needle.size() <= text.size(); ++i) {
    size_t matched = 0;
    while (matched < lower_needle.size() && LowerAscii(text[i + matched]) == lower_needle[matched]) {
      ++matched;
    }
    if (matched == lower_needle.size()) return true;
  }
  return false;
}

bool IsOpTypeName(std::string_view text) {
  if (text.empty() || !((text[0] >= 'A' && text[0] <= 'Z') || text[0] == '_')) return false;
  for (char c : text) {
    const bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_';
    if (!word) return false;
  }
  return true;
}

bool IsTensorFlowInputOpType(std::string_view type) {
  const std::vector<std::string_view> &types = TensorFlowInputOpTypes();
  return std::find(types.begin(), types.end(), type) != types.end();
}

}  // namespace

bool NamesCollectiveKernel(std::string_view name) {
  for (std::string_view marker : CommunicationKernelMarkers()) {
    if (ContainsIgnoringCase(name, marker)) return true;
  }
  return false;
}

const std::vector<std::string_view> &CommunicationKernelMarkers() {
  // In lower case: names are compared with their letters folded.
  static const std::vector<std::string_view> markers = {"nccl",    "rccl",  "deep_ep",
                                                        "nvshmem", "msccl", "cross_device_reduce"};
  return markers;
}

const std::vector<std::string_view> &TensorFlowInputOpTypes() {
  static const std::vector<std::string_view> types = {
      // tf.data
      "IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional",
      "MultiDeviceIteratorGetNextFromShard",
      // TF1 queues (tf.train.batch, shuffle_batch, string_input_producer), staging areas
      "QueueDequeue", "QueueDequeueV2", "QueueDequeueMany", "QueueDequeueManyV2",
      "QueueDequeueUpTo", "QueueDequeueUpToV2", "Unstage",
      // TF1 readers
      "ReaderRead", "ReaderReadV2", "ReaderReadUpTo", "ReaderReadUpToV2",
      // TPU/XLA infeed
      "InfeedDequeue", "InfeedDequeueTuple"};
  return types;
}

std::string_view TensorFlowOpType(std::string_view name, bool bare_types) {
  if (name.find(' ') != std::string_view::npos || name.find("::") != std::string_view::npos) {
    return {};
  }
  const size_t colon = name.rfind(':');
  if (colon == std::string_view::npos) return bare_types && IsOpTypeName(name) ? name : "";
  const std::string_view type = name.substr(colon + 1);
  return colon > 0 && IsOpTypeName(type) ? type : "";
}

Producer FrameworkOfTrace(const NameInterner &names, Producer producer) {
  if (producer == Producer::kPytorch || producer == Producer::kTensorFlow) return producer;
  const auto starts = [](std::string_view name, std::string_view prefix) {
    return name.substr(0, prefix.size()) == prefix;
  };
  uint64_t torch = 0, tensorflow = 0;
  for (uint32_t id = 0; id < names.size(); ++id) {
    const std::string_view name = names.Get(id);
    if (starts(name, "aten::") || starts(name, "ProfilerStep#") ||
        name.find("DataLoader") != std::string_view::npos) {
      ++torch;
    } else if (starts(name, "__inference_") || name.find("IteratorGetNext") != std::string_view::npos ||
               starts(name, "Iterator::") || name == "train_function" || name == "test_function" ||
               name == "predict_function") {
      ++tensorflow;
    }
  }
  if (torch == tensorflow) return Producer::kOther;
  return torch > tensorflow ? Producer::kPytorch : Producer::kTensorFlow;
}

bool MatchesAny(std::string_view name, const std::vector<std::string> &patterns) {
  const std::string text(name);
  for (const std::string &pattern : patterns) {
    if (fnmatch(pattern.c_str(), text.c_str(), 0) == 0) return true;
  }
  return false;
}

std::vector<uint8_t> ClassifyNames(const NameInterner &names,
                                   const std::vector<std::string> &input_patterns,
                                   bool custom_input_patterns, Producer producer) {
  std::vector<uint8_t> classes(names.size(), 0);
  const bool bare_types = producer == Producer::kTensorFlow;
  for (uint32_t id = 0; id < names.size(); ++id) {
    const std::string &name = names.Get(id);
    uint8_t bits = 0;
    // A TensorFlow op is input by its type: its scope may say "input" and its type "Input"
    // (Conv2DBackpropInput) without waiting for any.
    const std::string_view op_type = TensorFlowOpType(name, bare_types);
    const bool input = op_type.empty() || custom_input_patterns
                           ? MatchesAny(name, input_patterns)
                           : IsTensorFlowInputOpType(op_type);
    if (input) {
      bits |= kOpInput;
      if (name == "IteratorGetNextOp::DoCompute" || name == "IteratorGetNextAsOptionalOp::DoCompute") {
        bits |= kOpStepInput;
      }
    }
    if (MatchesAny(name, SyncPatterns())) bits |= kOpSync;
    if (MatchesAny(name, LaunchPatterns())) bits |= kOpLaunch;
    if (NamesCollectiveKernel(name)) bits |= kOpCollectiveKernel;
    if (MatchesAny(name, HostCollectivePatterns())) bits |= kOpHostCollective;
    if (MatchesAny(name, AsyncCopyCallPatterns())) bits |= kOpAsyncCopyCall;
    classes[id] = bits;
  }
  return classes;
}

}  // namespace tfprof::cli
