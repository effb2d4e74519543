// Turns step records into TensorFlow's RunMetadata bytes: one host device holding a NodeExecStats
// per span (and one per step), with thread ids and thread names, times in wall-clock micro- and
// nanoseconds. Also keeps the GraphDef of every op seen, for TensorBoard's graph view.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/export/export_context.h"
#include "runtime/export/step_partitioner.h"
#include "runtime/trace_model.h"

namespace tfprof {

class RunMetadataEncoder {
 public:
  // Adds a record's spans, and its step as a node named step_NNNNNN of type TrainingStep.
  void Add(const StepRecord &record, const TraceModel &model, const ExportContext &context);

  // The serialized RunMetadata of everything added since the last call; starts a new one.
  std::string TakeRunMetadata(const TraceModel &model);

  // The serialized GraphDef of every op added so far (one node per op name, op = its type).
  std::string GraphDefBytes(const TraceModel &model) const;
  // Whether ops appeared since the last call.
  bool TakeGraphGrew();

 private:
  void AddNode(size_t track, const std::string &node_name, const std::string &label,
               int64_t begin_ns, int64_t end_ns, const TraceModel &model,
               const ExportContext &context);

  std::string node_fields_;  // DeviceStepStats field 2 entries, already serialized
  absl::flat_hash_set<size_t> threads_;  // tracks with a node in the current RunMetadata
  absl::flat_hash_set<uint32_t> graph_names_;
  std::vector<uint32_t> graph_order_;
  bool graph_grew_ = false;
};

}  // namespace tfprof
