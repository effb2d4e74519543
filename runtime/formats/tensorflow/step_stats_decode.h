// What TensorFlow's NodeExecStats mean, decided once for every reader of step statistics: the
// StepStats reader (step_stats_trace_reader.cc), the timeline.py layout
// (chrome/timeline_py_writer.cc) and the rows of a timeline.py Chrome trace
// (chrome/tf_timeline_rows.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfprof/tensorflow/step_stats.pb.h"

namespace tfprof {

// The fields of a NodeExecStats that tfprof's readers use, as views into the serialized node (or
// into a parsed message: NodeFieldsOf). NodeExecStatsParser decodes them by hand: the generated
// parser decoded every TensorDescription, shape and allocation into objects, a third of a
// conversion's time.
struct NodeOutputFields {
  std::string_view tensor_description;  // the serialized TensorDescription ("" when absent)
  std::string_view allocator_name;      // tensor_description.allocation_description's
  int64_t requested_bytes = 0;          // tensor_description.allocation_description's
};

struct NodeMemoryFields {  // an AllocatorMemoryUsed
  std::string_view allocator_name;
  int64_t total_bytes = 0;
  int64_t allocator_bytes_in_use = 0;
};

struct NodeFields {
  std::string_view node_name;
  std::string_view timeline_label;
  int64_t all_start_micros = 0;
  int64_t op_end_rel_micros = 0;
  int64_t all_end_rel_micros = 0;
  int64_t all_start_nanos = 0;
  int64_t op_end_rel_nanos = 0;
  int64_t all_end_rel_nanos = 0;
  uint32_t thread_id = 0;
  std::vector<NodeOutputFields> outputs;
  std::vector<NodeMemoryFields> memory;
};

// `node`'s fields, viewing `node`; each output's TensorDescription is serialized into
// `*descriptions` (one string per output), which the views point into.
void NodeFieldsOf(const tensorflow::NodeExecStats &node, NodeFields *fields,
                  std::vector<std::string> *descriptions);

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
void NodeTimes(const NodeFields &node, NodeTimeRule rule, int64_t *begin_ns, int64_t *end_ns);

// tfprof's step node: the node it writes for each step, named "step_<digits>" (StepTag, at most
// 18 digits) and labelled "step_000042 = TrainingStep()" (op type kStepOpType, which only tfprof
// writes). Its step number, or nullopt for any other node. `op_type` is the label's type
// (ParseHostOpLabel), or the type after the ':' of a timeline.py event name
// ("step_000042:TrainingStep").
std::optional<int64_t> StepNodeNumber(std::string_view node_name, std::string_view op_type);

// The same for a node: its label parsed only when its name can be a step node's (most cannot).
std::optional<int64_t> StepNodeNumberOfLabel(const NodeFields &node);
inline std::optional<int64_t> StepNodeNumber(const NodeFields &node) {
  if (!node.node_name.starts_with("step_")) return std::nullopt;
  return StepNodeNumberOfLabel(node);
}

}  // namespace tfprof
