// Prints the StepStats of a binary RunMetadata (.pb) as JSON, for the GPU tests' Python checker
// (the GPU machine may have no Python protobuf): {"devices": [{"device": ..., "nodes": [...]}]}.
// Usage: tfprof_dump_step_stats RUN_METADATA.pb
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tfprof/tensorflow/run_metadata.pb.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s RUN_METADATA.pb\n", argv[0]);
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  tensorflow::RunMetadata metadata;
  if (!file || !metadata.ParseFromString(bytes.str())) {
    std::fprintf(stderr, "%s: not a readable RunMetadata\n", argv[1]);
    return 1;
  }
  nlohmann::json devices = nlohmann::json::array();
  for (const auto &device : metadata.step_stats().dev_stats()) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto &node : device.node_stats()) {
      nodes.push_back({{"node_name", node.node_name()},
                       {"timeline_label", node.timeline_label()},
                       {"all_start_micros", node.all_start_micros()},
                       {"all_end_rel_micros", node.all_end_rel_micros()},
                       {"thread_id", node.thread_id()}});
    }
    devices.push_back({{"device", device.device()}, {"nodes", std::move(nodes)}});
  }
  // Names are arbitrary bytes: replace what is not UTF-8 rather than fail.
  std::cout << nlohmann::json{{"devices", std::move(devices)}}.dump(
                   -1, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
  return 0;
}
