// How TensorFlow's timeline.py (tensorflow/python/client/timeline.py) reads NodeExecStats labels,
// reproduced exactly so converted traces name ops as TensorFlow's own tool does.
#pragma once

#include <cstddef>
#include <string_view>

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
  std::string_view inputs;  // between the parentheses: ForEachLabelInput() splits it
};
ParsedOpLabel ParseHostOpLabel(std::string_view label);

// `visit(std::string_view input)` for each of the label's inputs, split on ", " (none when the
// parentheses are empty). Split as it is read: a million-op conversion kept no list per op.
template <typename Visit>
void ForEachLabelInput(const ParsedOpLabel &label, Visit &&visit) {
  if (label.inputs.empty()) return;
  size_t start = 0;
  while (true) {
    const size_t comma = label.inputs.find(", ", start);
    visit(label.inputs.substr(start, comma - start));
    if (comma == std::string_view::npos) return;
    start = comma + 2;
  }
}

// A GPU-trace op: the text between "@@" and the first "#" of the label (else `node_name`),
// split on ':' into name and type ("unknown" when there is no ':').
struct KernelOpName {
  std::string_view name;
  std::string_view type;
};
KernelOpName ParseKernelLabel(std::string_view label, std::string_view node_name);

}  // namespace tfprof
