// NodeExecStats encoded by hand: the StepStats writer makes one per span, and building each as a
// protobuf message (its strings allocated, serialized, freed) cost three times the rest of the
// writing. The bytes are protobuf's own for the fields tfprof writes: proto3 order and rules,
// zero values left out (node_stats_encoder_test.cc compares them with the generated code's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tfprof {

// The NodeExecStats tfprof writes: a node that ran from `wall_begin_ns` to `wall_end_ns`
// (wall-clock ns), with start and duration in whole microseconds floored as TensorFlow's
// tracers write them, and exactly in nanoseconds.
struct TimedNode {
  std::string_view node_name;
  std::string_view label;
  int64_t wall_begin_ns = 0;
  int64_t wall_end_ns = 0;
  std::optional<int64_t> wall_scheduled_ns;  // GPU work: when its launch call started
  uint32_t thread_id = 0;
};

// `value` / `divisor` rounded down (towards minus infinity), as TensorFlow's micros are.
inline int64_t FloorDiv(int64_t value, int64_t divisor) {
  const int64_t quotient = value / divisor;
  return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient;
}

// The serialized NodeExecStats of `node`, appended to `out`.
void AppendNodeExecStats(const TimedNode &node, std::string &out);

// The same as field `field` of the message `out` holds (its tag and length first): a
// DeviceStepStats.node_stats entry, encoded in place.
void AppendNodeExecStatsField(uint32_t field, const TimedNode &node, std::string &out);

}  // namespace tfprof
