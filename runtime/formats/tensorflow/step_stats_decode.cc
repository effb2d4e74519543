#include "runtime/formats/tensorflow/step_stats_decode.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "runtime/common/saturating_math.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/formats/tensorflow/timeline_labels.h"

namespace tfprof {

namespace {

constexpr int64_t kMicro = 1000;  // ns
constexpr int64_t kLimitMicros = 3'000'000'000'000'000;

int64_t ClampMicros(int64_t micros) { return std::clamp(micros, -kLimitMicros, kLimitMicros); }
int64_t ClampNanos(int64_t nanos) {
  return std::clamp(nanos, -kLimitMicros * kMicro, kLimitMicros * kMicro);
}

void PreciseTimes(const NodeFields &node, int64_t *begin_ns, int64_t *end_ns) {
  int64_t duration = 0;
  if (node.all_start_nanos != 0) {
    *begin_ns = node.all_start_nanos;
    duration = node.all_end_rel_nanos != 0   ? node.all_end_rel_nanos
               : node.op_end_rel_nanos != 0  ? node.op_end_rel_nanos
               : node.all_end_rel_micros != 0 ? SaturatingMicrosToNanos(node.all_end_rel_micros)
                                                : SaturatingMicrosToNanos(node.op_end_rel_micros);
  } else {
    *begin_ns = SaturatingMicrosToNanos(node.all_start_micros);
    duration = SaturatingMicrosToNanos(node.all_end_rel_micros != 0 ? node.all_end_rel_micros
                                                                      : node.op_end_rel_micros);
  }
  *end_ns = SaturatingAdd(*begin_ns, std::max<int64_t>(duration, 0));
}

void TimelinePyTimes(const NodeFields &node, bool use_nanos, int64_t *begin_ns,
                     int64_t *end_ns) {
  const int64_t start_micros = ClampMicros(node.all_start_micros);
  const int64_t micros_begin = start_micros * kMicro;
  const int64_t micros_end = micros_begin + ClampMicros(node.all_end_rel_micros) * kMicro;
  const int64_t nanos = ClampNanos(node.all_start_nanos);
  if (!use_nanos || nanos == 0 ||
      (start_micros != 0 && std::llabs(nanos / kMicro - start_micros) > 1)) {
    *begin_ns = micros_begin;
    *end_ns = micros_end;
    return;
  }
  *begin_ns = nanos;
  const bool has_nanos_end = node.all_end_rel_nanos != 0 || node.all_end_rel_micros == 0;
  *end_ns = nanos + (has_nanos_end ? ClampNanos(node.all_end_rel_nanos)
                                   : ClampMicros(node.all_end_rel_micros) * kMicro);
}

}  // namespace

void NodeFieldsOf(const tensorflow::NodeExecStats &node, NodeFields *fields,
                  std::vector<std::string> *descriptions) {
  fields->node_name = node.node_name();
  fields->timeline_label = node.timeline_label();
  fields->all_start_micros = node.all_start_micros();
  fields->op_end_rel_micros = node.op_end_rel_micros();
  fields->all_end_rel_micros = node.all_end_rel_micros();
  fields->all_start_nanos = node.all_start_nanos();
  fields->op_end_rel_nanos = node.op_end_rel_nanos();
  fields->all_end_rel_nanos = node.all_end_rel_nanos();
  fields->thread_id = node.thread_id();
  descriptions->resize(static_cast<size_t>(node.output_size()));
  fields->outputs.clear();
  for (int index = 0; index < node.output_size(); ++index) {
    const tensorflow::NodeOutput &output = node.output(index);
    std::string &description = (*descriptions)[static_cast<size_t>(index)];
    description.clear();
    if (output.has_tensor_description()) {
      output.tensor_description().SerializeToString(&description);
    }
    const tensorflow::AllocationDescription &allocation =
        output.tensor_description().allocation_description();
    fields->outputs.push_back(
        {description, allocation.allocator_name(), allocation.requested_bytes()});
  }
  fields->memory.clear();
  for (const tensorflow::AllocatorMemoryUsed &used : node.memory()) {
    fields->memory.push_back(
        {used.allocator_name(), used.total_bytes(), used.allocator_bytes_in_use()});
  }
}

void NodeTimes(const NodeFields &node, NodeTimeRule rule, int64_t *begin_ns, int64_t *end_ns) {
  switch (rule) {
    case NodeTimeRule::kPrecise:
      PreciseTimes(node, begin_ns, end_ns);
      return;
    case NodeTimeRule::kTimelinePy:
    case NodeTimeRule::kTimelinePyNanos:
      TimelinePyTimes(node, rule == NodeTimeRule::kTimelinePyNanos, begin_ns, end_ns);
      return;
  }
}

std::optional<int64_t> StepNodeNumber(std::string_view node_name, std::string_view op_type) {
  constexpr std::string_view kPrefix = "step_";
  if (op_type != kStepOpType || !node_name.starts_with(kPrefix)) return std::nullopt;
  const std::string_view digits = node_name.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t number = 0;
  for (const char digit : digits) number = number * 10 + (digit - '0');
  return number;
}

std::optional<int64_t> StepNodeNumberOfLabel(const NodeFields &node) {
  const std::string_view label = node.timeline_label;
  if (label.find(kStepOpType) == std::string_view::npos) return std::nullopt;
  return StepNodeNumber(node.node_name, ParseHostOpLabel(label).type);
}

}  // namespace tfprof
