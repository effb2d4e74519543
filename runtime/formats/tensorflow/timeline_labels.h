// How TensorFlow's timeline.py (tensorflow/python/client/timeline.py) reads NodeExecStats labels,
// reproduced exactly so converted traces name ops as TensorFlow's own tool does.
#pragma once

#include <string_view>
#include <vector>

namespace tfprof {

// Devices of TensorFlow's GPU tracer ("/stream:", "/memcpy"): their ops are kernels and copies,
// named from the text after "@@" in the label rather than by the host-op label.
bool IsGpuTraceDevice(std::string_view device);

// A host op's label, "name = Type(in1, in2)", read as Python's
// re.match(r'(.*) = (.*)\((.*)\)', label) reads it (greedy groups, first line only). Without a
// match the type is "unknown" and there are no inputs, as in timeline.py.
struct ParsedOpLabel {
  std::string_view name = "unknown";
  std::string_view type = "unknown";
  std::vector<std::string_view> inputs;  // split on ", "
};
ParsedOpLabel ParseHostOpLabel(std::string_view label);

// A GPU-trace op: the text between "@@" and the first "#" of the label (else `node_name`),
// split on ':' into name and type ("unknown" when there is no ':').
struct KernelOpName {
  std::string_view name;
  std::string_view type;
};
KernelOpName ParseKernelLabel(std::string_view label, std::string_view node_name);

}  // namespace tfprof
