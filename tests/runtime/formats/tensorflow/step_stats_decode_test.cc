// The TensorFlow rules every reader of step statistics shares: a node's times (the model's
// precise rule and timeline.py's) and tfprof's step node.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/formats/tensorflow/step_stats_decode.h"

namespace tfprof {
namespace {

tensorflow::NodeExecStats Node(int64_t start_micros, int64_t end_rel_micros,
                               int64_t start_nanos = 0, int64_t end_rel_nanos = 0) {
  tensorflow::NodeExecStats node;
  node.set_all_start_micros(start_micros);
  node.set_all_end_rel_micros(end_rel_micros);
  node.set_all_start_nanos(start_nanos);
  node.set_all_end_rel_nanos(end_rel_nanos);
  return node;
}

struct Times {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// The readers' view of `node`, as NodeExecStatsParser gives it.
struct Fields {
  explicit Fields(const tensorflow::NodeExecStats &node) {
    NodeFieldsOf(node, &fields, &descriptions);
  }
  NodeFields fields;
  std::vector<std::string> descriptions;
};

Times TimesOf(const tensorflow::NodeExecStats &node, NodeTimeRule rule) {
  Times times;
  NodeTimes(Fields(node).fields, rule, &times.begin_ns, &times.end_ns);
  return times;
}

std::optional<int64_t> StepNodeNumberOf(const tensorflow::NodeExecStats &node) {
  return StepNodeNumber(Fields(node).fields);
}

TEST_CASE("step stats decode: the precise rule takes nanos first, then op_end_rel") {
  const Times both = TimesOf(Node(1000, 2, 1000400, 1500), NodeTimeRule::kPrecise);
  CHECK(both.begin_ns == 1000400);
  CHECK(both.end_ns == 1001900);
  const Times micros = TimesOf(Node(1000, 2), NodeTimeRule::kPrecise);
  CHECK(micros.begin_ns == 1000000);
  CHECK(micros.end_ns == 1002000);
  tensorflow::NodeExecStats op_end = Node(1000, 0);
  op_end.set_op_end_rel_micros(5);
  CHECK(TimesOf(op_end, NodeTimeRule::kPrecise).end_ns == 1005000);
  // A negative duration is none; a start past int64 nanoseconds saturates.
  CHECK(TimesOf(Node(1000, -3), NodeTimeRule::kPrecise).end_ns == 1000000);
  CHECK(TimesOf(Node(INT64_MAX / 10, 1), NodeTimeRule::kPrecise).begin_ns == INT64_MAX);
}

TEST_CASE("step stats decode: timeline.py's rule draws micros, nanos only where they agree") {
  const tensorflow::NodeExecStats node = Node(1000, 2, 1000400, 1500);
  const Times micros = TimesOf(node, NodeTimeRule::kTimelinePy);
  CHECK(micros.begin_ns == 1000000);
  CHECK(micros.end_ns == 1002000);
  const Times nanos = TimesOf(node, NodeTimeRule::kTimelinePyNanos);
  CHECK(nanos.begin_ns == 1000400);
  CHECK(nanos.end_ns == 1001900);
  // Nanos more than a microsecond away from the micros are not the same time: micros win.
  CHECK(TimesOf(Node(1000, 2, 5000000, 1500), NodeTimeRule::kTimelinePyNanos).begin_ns ==
        1000000);
  // timeline.py keeps a negative duration, and uses no op_end_rel.
  CHECK(TimesOf(Node(1000, -3), NodeTimeRule::kTimelinePy).end_ns == 997000);
  // Untrusted times are clamped to +-3e15 us, so sums of them never overflow.
  const Times far = TimesOf(Node(INT64_MAX, INT64_MAX), NodeTimeRule::kTimelinePy);
  CHECK(far.begin_ns == 3'000'000'000'000'000'000);
  CHECK(far.end_ns == 6'000'000'000'000'000'000);
}

TEST_CASE("step stats decode: tfprof's step node is step_<digits> of type TrainingStep") {
  CHECK(StepNodeNumber("step_000042", "TrainingStep") == std::optional<int64_t>(42));
  CHECK(StepNodeNumber("step_0", "TrainingStep") == std::optional<int64_t>(0));
  CHECK(StepNodeNumber("step_999999999999999999", "TrainingStep") ==
        std::optional<int64_t>(999999999999999999));
  CHECK_FALSE(StepNodeNumber("step_1000000000000000000", "TrainingStep"));  // 19 digits
  CHECK_FALSE(StepNodeNumber("step_", "TrainingStep"));
  CHECK_FALSE(StepNodeNumber("step_12a", "TrainingStep"));
  CHECK_FALSE(StepNodeNumber("train_12", "TrainingStep"));
  CHECK_FALSE(StepNodeNumber("step_12", "MatMul"));

  tensorflow::NodeExecStats node;
  node.set_node_name("step_000007");
  node.set_timeline_label("step_000007 = TrainingStep()");
  CHECK(StepNodeNumberOf(node) == std::optional<int64_t>(7));
  node.set_timeline_label("step_000007 = MatMul(a, b)");
  CHECK_FALSE(StepNodeNumberOf(node));
  node.set_node_name("dense/step_7");
  node.set_timeline_label("dense/step_7 = TrainingStep()");
  CHECK_FALSE(StepNodeNumberOf(node));
}

}  // namespace
}  // namespace tfprof
