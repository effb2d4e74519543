#include "runtime/formats/tensorflow/tf_names.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "runtime/common/string_view_bridge.h"

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
  std::string label;
  AppendHostOpLabel(name, type, inputs, label);
  return label;
}

void AppendHostOpLabel(std::string_view name, std::string_view type, std::string_view inputs,
                       std::string &out) {
  // Appended piece by piece: the StepStats writer labels every span, and StrAppend's general
  // path cost more than the copying.
  out.reserve(out.size() + name.size() + type.size() + inputs.size() + 5);
  out.append(name).append(" = ").append(type).push_back('(');
  out.append(inputs).push_back(')');
}

namespace {

// timeline.py takes the op from between "@@" and the next '#' only when the '#' is there.
void AppendOp(std::string &label, std::string_view op) {
  if (!op.empty()) absl::StrAppend(&label, "@@", ToAbsl(op), "#");
}

}  // namespace

std::string KernelLabel(std::string_view kernel, const KernelShape &shape, std::string_view op) {
  std::string label;
  AppendKernelLabel(kernel, shape, op, label);
  return label;
}

void AppendKernelLabel(std::string_view kernel, const KernelShape &shape, std::string_view op,
                       std::string &out) {
  absl::StrAppend(&out, ToAbsl(kernel), " regs:", shape.registers, " shm:", shape.shared_memory,
                  " grid:", shape.grid[0], ",", shape.grid[1], ",", shape.grid[2], " block:",
                  shape.block[0], ",", shape.block[1], ",", shape.block[2]);
  AppendOp(out, op);
}

std::string MemcpyLabel(std::string_view kind, uint64_t bytes, std::string_view op) {
  std::string label = absl::StrCat(ToAbsl(kind), " bytes:", bytes);
  AppendOp(label, op);
  return label;
}

std::string StepTag(int64_t step) { return absl::StrFormat("step_%06d", step); }

std::string LossesLabel(const TraceLosses &losses, std::string_view gpu_state) {
  const std::string state =
      gpu_state.empty() ? std::string() : absl::StrCat(", gpu_state=", ToAbsl(gpu_state));
  if (!losses.reported) return HostOpLabel(kLossesNodeName, "Losses", "recorded=false" + state);
  std::string counts = absl::StrCat(
      "dropped_events=", losses.dropped_events, ", unmatched_span_ends=", losses.unmatched_span_ends,
      ", unmatched_step_ends=", losses.unmatched_step_ends,
      ", gpu_records_dropped=", losses.gpu_records_dropped,
      ", gpu_buffers_refused=", losses.gpu_buffers_refused,
      ", gpu_records_unparsed=", losses.gpu_records_unparsed,
      ", gpu_late_records=", losses.gpu_late_records, state,
      ", memory_dropped_events=", losses.memory_dropped_events,
      ", discarded_events=", losses.discarded_events);
  if (losses.unreported_inputs != 0) {
    absl::StrAppend(&counts, ", unreported_inputs=", losses.unreported_inputs);
  }
  return HostOpLabel(kLossesNodeName, "Losses", counts);
}

void ParseLossesLabel(std::string_view label, TraceLosses *losses, std::string *gpu_state) {
  losses->reported = true;
  // The inputs of "name = Losses(key=value, ...)": after the first '(' up to the last ')'.
  const size_t open = label.find('(');
  const size_t close = label.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
  std::string_view inputs = label.substr(open + 1, close - open - 1);
  while (!inputs.empty()) {
    const size_t comma = inputs.find(", ");
    const std::string_view input = inputs.substr(0, comma);
    inputs = comma == std::string_view::npos ? std::string_view() : inputs.substr(comma + 2);
    const size_t equals = input.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view key = input.substr(0, equals);
    const std::string_view value = input.substr(equals + 1);
    if (key == "gpu_state") {
      if (gpu_state != nullptr) gpu_state->assign(value);
      continue;
    }
    if (key == "recorded") {
      losses->reported = value != "false";
      continue;
    }
    uint64_t count = 0;
    if (!absl::SimpleAtoi(ToAbsl(value), &count)) continue;
    if (key == "dropped_events") losses->dropped_events = count;
    if (key == "unmatched_span_ends") losses->unmatched_span_ends = count;
    if (key == "unmatched_step_ends") losses->unmatched_step_ends = count;
    if (key == "gpu_records_dropped") losses->gpu_records_dropped = count;
    if (key == "gpu_buffers_refused") losses->gpu_buffers_refused = count;
    if (key == "gpu_records_unparsed") losses->gpu_records_unparsed = count;
    if (key == "gpu_late_records") losses->gpu_late_records = count;
    if (key == "memory_dropped_events") losses->memory_dropped_events = count;
    if (key == "discarded_events") losses->discarded_events = count;
    if (key == "unreported_inputs") losses->unreported_inputs = static_cast<uint32_t>(count);
  }
}

}  // namespace tfprof
