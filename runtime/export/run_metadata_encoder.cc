#include "runtime/export/run_metadata_encoder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/export/gpu_names.h"
#include "runtime/formats/proto_wire.h"
#include "runtime/formats/tf_names.h"
#include "runtime/string_view_bridge.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace tfprof {

namespace {

int64_t FloorDiv(int64_t value, int64_t divisor) {
  const int64_t quotient = value / divisor;
  return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient;
}

int64_t WallNs(const ExportContext &context, int64_t monotonic_ns) {
  return context.start_wall_ns + (monotonic_ns - context.start_monotonic_ns);
}

// A node from the session's monotonic times.
tensorflow::NodeExecStats TimedNode(const std::string &node_name, const std::string &label,
                                    int64_t begin_ns, int64_t end_ns, const ExportContext &context) {
  return TimedNodeExecStats(node_name, label, WallNs(context, begin_ns), WallNs(context, end_ns));
}

}  // namespace

tensorflow::NodeExecStats TimedNodeExecStats(const std::string &node_name, const std::string &label,
                                             int64_t wall_begin_ns, int64_t wall_end_ns) {
  const int64_t begin_us = FloorDiv(wall_begin_ns, 1000);
  const int64_t duration_us = FloorDiv(wall_end_ns, 1000) - begin_us;
  tensorflow::NodeExecStats node;
  node.set_node_name(node_name);
  node.set_timeline_label(label);
  node.set_all_start_micros(begin_us);
  node.set_op_start_rel_micros(0);
  node.set_op_end_rel_micros(duration_us);
  node.set_all_end_rel_micros(duration_us);
  node.set_all_start_nanos(wall_begin_ns);
  node.set_op_end_rel_nanos(wall_end_ns - wall_begin_ns);
  node.set_all_end_rel_nanos(wall_end_ns - wall_begin_ns);
  return node;
}

void RunMetadataEncoder::AddNode(size_t track, const std::string &node_name,
                                 const std::string &label, int64_t begin_ns, int64_t end_ns,
                                 const SessionLog &model, const ExportContext &context) {
  tensorflow::NodeExecStats node = TimedNode(node_name, label, begin_ns, end_ns, context);
  node.set_thread_id(static_cast<uint32_t>(model.tracks[track].os_tid));
  AppendLengthDelimited(kDeviceStepStatsNodeStats, node.SerializeAsString(), node_fields_);
  threads_.insert(track);
}

void RunMetadataEncoder::AddGpuWork(const GpuWork &work, const SessionLog &model,
                                    const ExportContext &context) {
  const GpuActivity &activity = model.gpu.activities[work.activity];
  const std::string_view op = work.has_op ? model.names.Get(work.op.name) : std::string_view();
  std::string node_name;
  std::string label;
  if (activity.kind == GpuActivityKind::kKernel) {
    if (!kernel_names_) kernel_names_.emplace(model.gpu.names);
    const std::string &kernel = kernel_names_->Get(activity.name);
    KernelShape shape;
    for (int axis = 0; axis < 3; ++axis) {
      shape.grid[axis] = activity.grid[axis];
      shape.block[axis] = activity.block[axis];
    }
    shape.registers = activity.registers;
    shape.shared_memory = activity.static_shared + activity.dynamic_shared;
    node_name = work.has_op ? std::string(SplitOpName(op).name) : kernel;
    label = KernelLabel(kernel, shape, op);
  } else {
    // "MemcpyHtoD", "Memset": TensorFlow's names for copies and memsets without an op.
    const std::string kind = activity.kind == GpuActivityKind::kMemcpy
                                 ? absl::StrCat("Memcpy", ToAbsl(CopyKindName(activity.copy_kind)))
                                 : std::string("Memset");
    node_name = work.has_op ? std::string(SplitOpName(op).name) : kind;
    label = MemcpyLabel(kind, activity.bytes, op);
  }
  tensorflow::NodeExecStats node =
      TimedNode(node_name, label, context.converter.ToNs(activity.start_ticks),
                context.converter.ToNs(activity.end_ticks), context);
  const int64_t wall_launch_ns = WallNs(context, work.launch_ns);
  node.set_scheduled_micros(FloorDiv(wall_launch_ns, 1000));
  node.set_scheduled_nanos(wall_launch_ns);
  node.set_thread_id(static_cast<uint32_t>(work.thread_id));
  const std::string bytes = node.SerializeAsString();
  const auto add_to = [&](GpuDeviceKind kind, uint32_t stream) {
    AppendLengthDelimited(kDeviceStepStatsNodeStats, bytes,
                          gpu_node_fields_[GpuDeviceKey{activity.device, kind, stream}]);
  };
  add_to(activity.kind == GpuActivityKind::kMemcpy ? GpuDeviceKind::kMemcpy
                                                   : GpuDeviceKind::kAllStreams,
         0);
  add_to(GpuDeviceKind::kStream, activity.stream);
}

void RunMetadataEncoder::AddLosses(const SessionLog &model, const ExportContext &context,
                                   const GpuLossCounters &gpu_losses) {
  const LossCounters &host = context.losses;
  const std::string label = HostOpLabel(
      kLossesNodeName, "Losses",
      absl::StrCat("dropped_events=", host.dropped, ", unmatched_span_ends=", host.unmatched_span_ends,
                   ", unmatched_step_ends=", host.unmatched_step_ends,
                   ", gpu_records_dropped=", gpu_losses.records_dropped,
                   ", gpu_buffers_refused=", gpu_losses.buffers_refused,
                   ", gpu_records_unparsed=", gpu_losses.records_unparsed,
                   ", gpu_late_records=", gpu_losses.late_records,
                   ", gpu_state=", ToAbsl(GpuStateName(model.gpu.state)),
                   ", memory_dropped_events=", host.memory_dropped,
                   ", discarded_events=", host.discarded));
  tensorflow::NodeExecStats node =
      TimedNode(kLossesNodeName, label, context.end_ns, context.end_ns, context);
  node.set_thread_id(kLossesThreadId);
  AppendLengthDelimited(kDeviceStepStatsNodeStats, node.SerializeAsString(), node_fields_);
  has_losses_node_ = true;
}

void RunMetadataEncoder::Add(const StepRecord &record, const SessionLog &model,
                             const ExportContext &context) {
  if (record.has_step) {
    const std::string tag = StepTag(record.step.step);
    AddNode(record.step.track, tag, HostOpLabel(tag, kStepOpType), record.step.begin_ns,
            record.step.end_ns, model, context);
  }
  for (const HostOp &op : record.ops) {
    const std::string_view span_name = model.names.Get(op.name);
    const OpName split = SplitOpName(span_name);
    AddNode(op.track, std::string(split.name), HostOpLabel(split.name, split.type), op.begin_ns,
            op.end_ns, model, context);
    if (graph_names_.insert(op.name).second) {
      graph_order_.push_back(op.name);
      graph_grew_ = true;
    }
  }
  for (const GpuWork &work : record.gpu) AddGpuWork(work, model, context);
}

std::string RunMetadataEncoder::TakeRunMetadata(const SessionLog &model) {
  std::string device;
  AppendLengthDelimited(kDeviceStepStatsDevice, kTfHostDevice, device);
  device.append(node_fields_);
  // Thread names in first-recorded order, so equal sessions give equal bytes.
  std::vector<size_t> tracks(threads_.begin(), threads_.end());
  std::sort(tracks.begin(), tracks.end());
  for (size_t track : tracks) {
    std::string entry;
    AppendVarintField(kMapEntryKey, static_cast<uint32_t>(model.tracks[track].os_tid), entry);
    AppendLengthDelimited(kMapEntryValue, TrackLabel(model.tracks[track]), entry);
    AppendLengthDelimited(kDeviceStepStatsThreadNames, entry, device);
  }
  if (has_losses_node_) {
    std::string entry;
    AppendVarintField(kMapEntryKey, kLossesThreadId, entry);
    AppendLengthDelimited(kMapEntryValue, kLossesThreadName, entry);
    AppendLengthDelimited(kDeviceStepStatsThreadNames, entry, device);
  }
  node_fields_.clear();
  threads_.clear();
  has_losses_node_ = false;

  std::string step_stats;
  AppendLengthDelimited(kStepStatsDevStats, device, step_stats);
  for (const auto &[key, nodes] : gpu_node_fields_) {
    const auto &[gpu, kind, stream] = key;
    const int index = static_cast<int>(gpu);
    std::string gpu_device;
    AppendLengthDelimited(kDeviceStepStatsDevice,
                          kind == GpuDeviceKind::kAllStreams ? GpuAllStreamsDevice(index)
                          : kind == GpuDeviceKind::kStream   ? GpuStreamDevice(index, stream)
                                                             : GpuMemcpyDevice(index),
                          gpu_device);
    gpu_device.append(nodes);
    AppendLengthDelimited(kStepStatsDevStats, gpu_device, step_stats);
  }
  gpu_node_fields_.clear();
  std::string run_metadata;
  AppendLengthDelimited(kRunMetadataStepStats, step_stats, run_metadata);
  return run_metadata;
}

std::string RunMetadataEncoder::GraphDefBytes(const SessionLog &model) const {
  tensorflow::GraphDef graph;
  absl::flat_hash_set<std::string_view> node_names;
  for (uint32_t name : graph_order_) {
    const OpName split = SplitOpName(model.names.Get(name));
    if (!node_names.insert(split.name).second) continue;  // "a:X" and "a:Y" are one node
    tensorflow::NodeDef *node = graph.add_node();
    node->set_name(std::string(split.name));
    node->set_op(std::string(split.type));
    node->set_device(std::string(kTfHostDevice));
  }
  return graph.SerializeAsString();
}

bool RunMetadataEncoder::TakeGraphGrew() {
  const bool grew = graph_grew_;
  graph_grew_ = false;
  return grew;
}

}  // namespace tfprof
