// What TensorFlow's NodeExecStats mean, decided once for every reader of step statistics: the
// StepStats reader (step_stats_trace_reader.cc), the timeline.py layout
// (chrome/timeline_py_writer.cc) and the rows of a timeline.py Chrome trace
// (chrome/tf_timeline_rows.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tfprof/tensorflow/step_stats.pb.h"

namespace tfprof {

// Which of a node's time fields give its [begin, end). Two readings are needed, because the
// timeline layout must draw what TensorFlow's own timeline.py draws while the trace model keeps
// the most precise time the node states:
enum class NodeTimeRule : uint8_t {
  // The model's: the *_nanos fields (tfprof, newer TensorFlow), else the microsecond ones; the
  // duration is all_end_rel (what timeline.py shows), else op_end_rel; sums saturate.
  kPrecise,
  // timeline.py's: the microsecond fields only (all_start, all_end_rel; a negative duration
  // stays), each clamped to +-3e15 us (+-95 years around 1970) so that sums and differences of
  // them never overflow int64 nanoseconds.
  kTimelinePy,
  // kTimelinePy, but the nanosecond fields where they agree with the microsecond ones (within
  // 1 us), so that ops shorter than a microsecond keep their length (the layout's thread rows).
  kTimelinePyNanos,
};

// The node's [begin, end) in Unix-epoch nanoseconds.
void NodeTimes(const tensorflow::NodeExecStats &node, NodeTimeRule rule, int64_t *begin_ns,
               int64_t *end_ns);

// tfprof's step node: the node it writes for each step, named "step_<digits>" (StepTag, at most
// 18 digits) and labelled "step_000042 = TrainingStep()" (op type kStepOpType, which only tfprof
// writes). Its step number, or nullopt for any other node. `op_type` is the label's type
// (ParseHostOpLabel), or the type after the ':' of a timeline.py event name
// ("step_000042:TrainingStep").
std::optional<int64_t> StepNodeNumber(std::string_view node_name, std::string_view op_type);

// The same for a node: its label parsed only when its name can be a step node's (most cannot).
std::optional<int64_t> StepNodeNumberOfLabel(const tensorflow::NodeExecStats &node);
inline std::optional<int64_t> StepNodeNumber(const tensorflow::NodeExecStats &node) {
  if (!node.node_name().starts_with("step_")) return std::nullopt;
  return StepNodeNumberOfLabel(node);
}

}  // namespace tfprof
