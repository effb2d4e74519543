#include "runtime/export/run_metadata_encoder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/formats/proto_wire.h"
#include "runtime/formats/tf_names.h"
#include "runtime/string_view_bridge.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace tfprof {

namespace {

// Field numbers of the messages assembled by hand.
constexpr uint32_t kRunMetadataStepStats = 1;
constexpr uint32_t kStepStatsDevStats = 1;
constexpr uint32_t kDeviceStepStatsDevice = 1;
constexpr uint32_t kDeviceStepStatsNodeStats = 2;
constexpr uint32_t kDeviceStepStatsThreadNames = 3;
constexpr uint32_t kMapEntryKey = 1;
constexpr uint32_t kMapEntryValue = 2;

int64_t FloorDiv(int64_t value, int64_t divisor) {
  const int64_t quotient = value / divisor;
  return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient;
}

}  // namespace

void RunMetadataEncoder::AddNode(size_t track, const std::string &node_name,
                                 const std::string &label, int64_t begin_ns, int64_t end_ns,
                                 const TraceModel &model, const ExportContext &context) {
  const int64_t wall_begin_ns = context.start_wall_ns + (begin_ns - context.start_monotonic_ns);
  const int64_t wall_end_ns = context.start_wall_ns + (end_ns - context.start_monotonic_ns);
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
  node.set_op_end_rel_nanos(end_ns - begin_ns);
  node.set_all_end_rel_nanos(end_ns - begin_ns);
  node.set_thread_id(static_cast<uint32_t>(model.tracks[track].os_tid));
  AppendLengthDelimited(kDeviceStepStatsNodeStats, node.SerializeAsString(), node_fields_);
  threads_.insert(track);
}

void RunMetadataEncoder::Add(const StepRecord &record, const TraceModel &model,
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
}

std::string RunMetadataEncoder::TakeRunMetadata(const TraceModel &model) {
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
  node_fields_.clear();
  threads_.clear();

  std::string step_stats;
  AppendLengthDelimited(kStepStatsDevStats, device, step_stats);
  std::string run_metadata;
  AppendLengthDelimited(kRunMetadataStepStats, step_stats, run_metadata);
  return run_metadata;
}

std::string RunMetadataEncoder::GraphDefBytes(const TraceModel &model) const {
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
