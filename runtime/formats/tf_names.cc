#include "runtime/formats/tf_names.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/string_view_bridge.h"

namespace tfprof {

namespace {

bool IsIdentifier(std::string_view text) {
  if (text.empty()) return false;
  for (size_t index = 0; index < text.size(); ++index) {
    const char c = text[index];
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && index > 0)) return false;
  }
  return true;
}

}  // namespace

std::string GpuAllStreamsDevice(int gpu) { return absl::StrCat("/device:GPU:", gpu, "/stream:all"); }

std::string GpuStreamDevice(int gpu, int64_t stream) {
  return absl::StrCat("/device:GPU:", gpu, "/stream:", stream);
}

std::string GpuMemcpyDevice(int gpu) { return absl::StrCat("/device:GPU:", gpu, "/memcpy"); }

OpName SplitOpName(std::string_view span_name) {
  const size_t colon = span_name.rfind(':');
  if (colon != std::string_view::npos && colon > 0 && IsIdentifier(span_name.substr(colon + 1))) {
    return OpName{span_name.substr(0, colon), span_name.substr(colon + 1)};
  }
  return OpName{span_name, span_name};
}

std::string HostOpLabel(std::string_view name, std::string_view type, std::string_view inputs) {
  return absl::StrCat(ToAbsl(name), " = ", ToAbsl(type), "(", ToAbsl(inputs), ")");
}

namespace {

// timeline.py takes the op from between "@@" and the next '#' only when the '#' is there.
void AppendOp(std::string &label, std::string_view op) {
  if (!op.empty()) absl::StrAppend(&label, "@@", ToAbsl(op), "#");
}

}  // namespace

std::string KernelLabel(std::string_view kernel, const KernelShape &shape, std::string_view op) {
  std::string label = absl::StrCat(
      ToAbsl(kernel), " regs:", shape.registers, " shm:", shape.shared_memory, " grid:",
      shape.grid[0], ",", shape.grid[1], ",", shape.grid[2], " block:", shape.block[0], ",",
      shape.block[1], ",", shape.block[2]);
  AppendOp(label, op);
  return label;
}

std::string MemcpyLabel(std::string_view kind, uint64_t bytes, std::string_view op) {
  std::string label = absl::StrCat(ToAbsl(kind), " bytes:", bytes);
  AppendOp(label, op);
  return label;
}

std::string StepTag(int64_t step) { return absl::StrFormat("step_%06d", step); }

}  // namespace tfprof
