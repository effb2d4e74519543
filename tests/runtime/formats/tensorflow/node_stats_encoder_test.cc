// NodeExecStats encoded by hand (runtime/formats/tensorflow/node_stats_encoder.h): the same bytes
// as protobuf's generated code gives for the same fields, on the values that take each path
// (zero fields left out, negative times, long names, large thread ids), and read back the same.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "runtime/formats/tensorflow/node_stats_encoder.h"
#include "tfprof/tensorflow/step_stats.pb.h"

namespace tfprof {
namespace {

// What the StepStats writer set with the generated code before the hand encoder.
std::string ProtobufBytes(const TimedNode &node) {
  const int64_t begin_us = FloorDiv(node.wall_begin_ns, 1000);
  const int64_t duration_us = FloorDiv(node.wall_end_ns, 1000) - begin_us;
  tensorflow::NodeExecStats stats;
  stats.set_node_name(std::string(node.node_name));
  stats.set_timeline_label(std::string(node.label));
  stats.set_all_start_micros(begin_us);
  stats.set_op_start_rel_micros(0);
  stats.set_op_end_rel_micros(duration_us);
  stats.set_all_end_rel_micros(duration_us);
  stats.set_all_start_nanos(node.wall_begin_ns);
  stats.set_op_end_rel_nanos(node.wall_end_ns - node.wall_begin_ns);
  stats.set_all_end_rel_nanos(node.wall_end_ns - node.wall_begin_ns);
  if (node.wall_scheduled_ns) {
    stats.set_scheduled_micros(FloorDiv(*node.wall_scheduled_ns, 1000));
    stats.set_scheduled_nanos(*node.wall_scheduled_ns);
  }
  stats.set_thread_id(node.thread_id);
  return stats.SerializeAsString();
}

std::string HandBytes(const TimedNode &node) {
  std::string out = "kept";  // appended, not replaced
  AppendNodeExecStats(node, out);
  REQUIRE(out.substr(0, 4) == "kept");
  return out.substr(4);
}

TEST_CASE("node stats encoder: protobuf's bytes for the fields tfprof writes") {
  const std::string long_name(300, 'n');  // a length of two varint bytes
  const TimedNode cases[] = {
      {"MatMul", "MatMul = MatMul()", 1'700'000'000'123'456'789, 1'700'000'000'123'999'000,
       std::nullopt, 7},
      {"", "", 0, 0, std::nullopt, 0},                        // every field left out
      {"step_000001", "", 999, 999, std::nullopt, 0},          // floors to 0 us, 999 ns
      {"late", "l", -1'500, 2'500, std::nullopt, 1},            // negative: 10-byte varints
      {long_name, long_name, 5'000, 4'000, std::nullopt, 0},   // ends before it begins
      {"gemm", "gemm regs:32", 10'000'000, 10'020'000, 9'990'000, 4'294'967'295u},
      {"k", "k", 10'000, 20'000, 0, 3},                         // scheduled at 0: left out
      {"k", "k", 10'000, 20'000, -7, 3},
  };
  for (const TimedNode &node : cases) {
    CAPTURE(node.node_name.size());
    CAPTURE(node.wall_begin_ns);
    CHECK(HandBytes(node) == ProtobufBytes(node));
  }
}

TEST_CASE("node stats encoder: random nodes read back as protobuf wrote them") {
  std::mt19937_64 random(36);
  const auto any_time = [&]() -> int64_t {
    switch (random() % 4) {
      case 0: return 0;
      case 1: return static_cast<int64_t>(random() % 5'000);
      case 2: return -static_cast<int64_t>(random() % 5'000'000'000);
      default: return static_cast<int64_t>(random() >> 1);
    }
  };
  for (int round = 0; round < 2000; ++round) {
    const std::string name(random() % 200, 'a' + static_cast<char>(round % 26));
    const std::string label = name + " = Op()";
    TimedNode node{name, label, any_time(), any_time(), std::nullopt,
                   static_cast<uint32_t>(random())};
    if (random() % 2 == 0) node.wall_scheduled_ns = any_time();
    const std::string bytes = HandBytes(node);
    REQUIRE(bytes == ProtobufBytes(node));
    tensorflow::NodeExecStats read;
    REQUIRE(read.ParseFromString(bytes));
    CHECK(read.node_name() == name);
    CHECK(read.all_start_nanos() == node.wall_begin_ns);
    CHECK(read.thread_id() == node.thread_id);
  }
}

}  // namespace
}  // namespace tfprof
