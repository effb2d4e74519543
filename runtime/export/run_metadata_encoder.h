// Turns step records into TensorFlow's RunMetadata bytes: one host device holding a NodeExecStats
// per span (and one per step), with thread ids and thread names, times in wall-clock micro- and
// nanoseconds; GPU work on the devices TensorFlow's CUPTI tracer writes (/device:GPU:N/stream:all,
// /device:GPU:N/stream:S, /device:GPU:N/memcpy). Also keeps the GraphDef of every op seen, for
// TensorBoard's graph view.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/export/export_context.h"
#include "runtime/export/gpu_names.h"
#include "runtime/export/step_partitioner.h"
#include "runtime/session_log.h"

namespace tensorflow {
class NodeExecStats;
}

namespace tfprof {

// A node named `node_name` with `label` that ran from `wall_begin_ns` to `wall_end_ns` (wall-clock
// ns): start and duration in whole microseconds, floored as TensorFlow's tracers write them, and
// exactly in nanoseconds. Every StepStats writer (the runtime's and `tfprof convert`'s) times its
// nodes with this, so a conversion round trip keeps the runtime's figures.
tensorflow::NodeExecStats TimedNodeExecStats(const std::string &node_name, const std::string &label,
                                             int64_t wall_begin_ns, int64_t wall_end_ns);

// The node that carries a session's losses and GPU tracing state in every TensorFlow-format
// output: on the host device, at the session's end, zero long, thread id 0 (named "tfprof"),
// labelled "tfprof/losses = Losses(dropped_events=N, unmatched_span_ends=N,
// unmatched_step_ends=N, gpu_records_dropped=N, gpu_buffers_refused=N, gpu_records_unparsed=N,
// gpu_late_records=N, gpu_state=active, memory_dropped_events=N, discarded_events=N)" (the counts of the Chrome trace's "dropped_events",
// "tfprof" and "tfprof.gpu" objects), which timeline.py reads as an op of type Losses.
inline constexpr char kLossesNodeName[] = "tfprof/losses";

class RunMetadataEncoder {
 public:
  // Adds a record's spans, its step as a node named step_NNNNNN of type TrainingStep, and its GPU
  // work: kernels and memsets on stream:all, every activity on its stream's device, copies on
  // memcpy.
  void Add(const StepRecord &record, const SessionLog &model, const ExportContext &context);

  // Adds the losses node (kLossesNodeName): host losses from `context`, GPU ones from
  // `gpu_losses`, state from `model.gpu`.
  void AddLosses(const SessionLog &model, const ExportContext &context,
                 const GpuLossCounters &gpu_losses);

  // The serialized RunMetadata of everything added since the last call; starts a new one.
  std::string TakeRunMetadata(const SessionLog &model);

  // The serialized GraphDef of every op added so far (one node per op name, op = its type).
  std::string GraphDefBytes(const SessionLog &model) const;
  // Whether ops appeared since the last call.
  bool TakeGraphGrew();

 private:
  void AddNode(size_t track, const std::string &node_name, const std::string &label,
               int64_t begin_ns, int64_t end_ns, const SessionLog &model,
               const ExportContext &context);
  void AddGpuWork(const GpuWork &work, const SessionLog &model, const ExportContext &context);

  // GPU devices in TensorFlow's order: per GPU, stream:all, its streams, then memcpy.
  enum class GpuDeviceKind { kAllStreams, kStream, kMemcpy };
  using GpuDeviceKey = std::tuple<uint32_t, GpuDeviceKind, uint32_t>;  // gpu, kind, stream

  std::string node_fields_;  // DeviceStepStats field 2 entries, already serialized
  std::map<GpuDeviceKey, std::string> gpu_node_fields_;  // the same, per GPU device
  absl::flat_hash_set<size_t> threads_;  // tracks with a node in the current RunMetadata
  bool has_losses_node_ = false;
  std::optional<KernelNames> kernel_names_;
  absl::flat_hash_set<uint32_t> graph_names_;
  std::vector<uint32_t> graph_order_;
  bool graph_grew_ = false;
};

}  // namespace tfprof
