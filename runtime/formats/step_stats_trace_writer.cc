#include "runtime/formats/step_stats_trace_writer.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/run_metadata_encoder.h"
#include "runtime/export/step_file_encoder.h"
#include "runtime/formats/proto_wire.h"
#include "runtime/formats/tf_names.h"
#include "runtime/formats/tfrecord.h"
#include "runtime/string_view_bridge.h"
#include "tfprof/tensorflow/run_metadata.pb.h"
#include "runtime/model/step_index.h"

namespace tfprof {

namespace {

// The version string TensorBoard expects first in every event file.
constexpr char kEventFileVersion[] = "brain.Event:2";

std::string HostDeviceName(size_t task) {
  return absl::StrCat("/job:localhost/replica:0/task:", task, "/device:CPU:0");
}

std::string_view CopyKindText(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return "HtoD";
    case CopyKind::kDeviceToHost: return "DtoH";
    case CopyKind::kDeviceToDevice: return "DtoD";
    case CopyKind::kNone:
    case CopyKind::kOther: break;
  }
  return "";
}

// tf_names.h's SplitOpName, except that a C++ scope ("aten::mm", "at::native::add") is no
// "name:Type" split: the whole name is node name and type.
OpName SplitName(std::string_view name) {
  const size_t colon = name.rfind(':');
  if (colon != std::string_view::npos && colon > 0 && name[colon - 1] == ':') {
    return OpName{name, name};
  }
  return SplitOpName(name);
}

class StepStatsWriter {
 public:
  StepStatsWriter(const Trace &trace, Format container, CountingSink &out)
      : trace_(trace),
        container_(container),
        out_(out),
        wall_offset_ns_(trace.wall_offset_ns.value_or(0)) {}

  StepStatsReport Write() {
    AssignHostDevices();
    const std::vector<std::vector<uint32_t>> records = Partition();
    const size_t outside = trace_.steps.size();
    // The steps in time order, then what lies outside them (and the losses).
    std::vector<size_t> order;
    for (size_t step = 0; step < trace_.steps.size(); ++step) order.push_back(step);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return trace_.steps[a].begin_ns < trace_.steps[b].begin_ns;
    });
    if (!records[outside].empty() || trace_.losses.reported || trace_.steps.empty()) {
      order.push_back(outside);
    }

    if (container_ == Format::kTensorBoard) WriteEventFileStart();
    for (size_t index = 0; index < order.size(); ++index) {
      const size_t record = order[index];
      if (record != outside) AddStepNode(trace_.steps[record]);
      for (uint32_t activity : records[record]) AddActivity(trace_.activities[activity]);
      if (record == outside && trace_.losses.reported) AddLossesNode();
      if (container_ == Format::kRunMetadata) continue;  // one message for all
      EmitRecord(record == outside ? nullptr : &trace_.steps[record], records[record]);
    }
    if (container_ == Format::kRunMetadata) WriteRunMetadata();
    return report_;
  }

 private:
  // GPU devices in TensorFlow's order: per GPU, stream:all, its streams, then memcpy.
  enum class GpuDeviceKind { kAllStreams, kStream, kMemcpy };
  using GpuDeviceKey = std::tuple<int32_t, GpuDeviceKind, int64_t>;  // gpu, kind, stream

  struct HostDevice {
    std::string name;
    std::string nodes;  // serialized DeviceStepStats.node_stats entries
    std::map<uint32_t, std::string> thread_names;
  };

  int64_t Wall(int64_t ns) const { return ns + wall_offset_ns_; }

  // Processes with host threads or steps get a host device each, in process order.
  void AssignHostDevices() {
    std::vector<bool> is_host(trace_.processes.size(), false);
    for (const Track &track : trace_.tracks) {
      if (track.kind == TrackKind::kHostThread && track.process < is_host.size()) {
        is_host[track.process] = true;
      }
    }
    for (const Step &step : trace_.steps) {
      if (step.process < is_host.size()) is_host[step.process] = true;
    }
    host_device_of_.assign(trace_.processes.size(), 0);
    for (size_t process = 0; process < trace_.processes.size(); ++process) {
      if (!is_host[process]) continue;
      host_device_of_[process] = host_devices_.size();
      host_devices_.push_back(HostDevice{HostDeviceName(host_devices_.size()), {}, {}});
    }
    if (host_devices_.empty()) host_devices_.push_back(HostDevice{HostDeviceName(0), {}, {}});
    // A step node goes on its process's first host thread (the runtime puts it on the thread
    // that marked the step; the file no longer says which that was).
    step_thread_of_.assign(trace_.processes.size(), std::nullopt);
    for (size_t index = 0; index < trace_.tracks.size(); ++index) {
      const Track &track = trace_.tracks[index];
      if (track.kind != TrackKind::kHostThread || track.process >= step_thread_of_.size()) continue;
      if (!step_thread_of_[track.process]) step_thread_of_[track.process] = index;
    }
  }

  // Activity indices per record: one per step, then the outside record.
  std::vector<std::vector<uint32_t>> Partition() {
    std::vector<std::vector<uint32_t>> records(trace_.steps.size() + 1);
    const StepIndex membership(trace_);
    for (size_t index = 0; index < trace_.activities.size(); ++index) {
      const Activity &activity = trace_.activities[index];
      if (activity.track >= trace_.tracks.size()) continue;
      if (activity.kind == ActivityKind::kGpuAnnotation) {
        ++report_.gpu_annotations_skipped;
        continue;
      }
      const uint32_t process = trace_.tracks[activity.track].process;
      const std::optional<size_t> step = membership.Find(process, activity.begin_ns);
      records[step.value_or(trace_.steps.size())].push_back(static_cast<uint32_t>(index));
    }
    return records;
  }

  // A node from the trace's times, made wall-clock as the runtime does.
  tensorflow::NodeExecStats TimedNode(std::string_view node_name, const std::string &label,
                                      int64_t begin_ns, int64_t end_ns) const {
    return TimedNodeExecStats(std::string(node_name), label, Wall(begin_ns), Wall(end_ns));
  }

  HostDevice &HostDeviceOf(size_t process) {
    return host_devices_[process < host_device_of_.size() ? host_device_of_[process] : 0];
  }

  void AddHostNode(size_t process, const tensorflow::NodeExecStats &node) {
    HostDevice &device = HostDeviceOf(process);
    const std::string bytes = node.SerializeAsString();
    AppendLengthDelimited(kDeviceStepStatsNodeStats, bytes, device.nodes);
    pending_bytes_ += bytes.size();
  }

  void NameThread(size_t process, const Track &track) {
    HostDevice &device = HostDeviceOf(process);
    const auto thread = static_cast<uint32_t>(track.tid);
    if (device.thread_names.contains(thread)) return;
    device.thread_names.emplace(thread, track.name.empty() ? absl::StrCat("thread ", track.tid)
                                                           : track.name);
  }

  void AddStepNode(const Step &step) {
    const std::string tag = StepTag(step.number);
    tensorflow::NodeExecStats node =
        TimedNode(tag, HostOpLabel(tag, kStepOpType), step.begin_ns, step.end_ns);
    if (step.process < step_thread_of_.size() && step_thread_of_[step.process]) {
      const Track &track = trace_.tracks[*step_thread_of_[step.process]];
      node.set_thread_id(static_cast<uint32_t>(track.tid));
      NameThread(step.process, track);
    }
    AddHostNode(step.process, node);
  }

  void AddActivity(const Activity &activity) {
    const Track &track = trace_.tracks[activity.track];
    const std::string_view name = trace_.names.Get(activity.name);
    if (track.kind == TrackKind::kGpuStream || IsGpuWork(activity.kind)) {
      AddGpuNode(activity, track, name);
      ShowProgress();
      return;
    }
    const OpName split = SplitName(name);
    tensorflow::NodeExecStats node = TimedNode(split.name, HostOpLabel(split.name, split.type),
                                               activity.begin_ns, activity.end_ns);
    node.set_thread_id(static_cast<uint32_t>(track.tid));
    AddHostNode(track.process, node);
    NameThread(track.process, track);
    ShowProgress();
  }

  void AddGpuNode(const Activity &activity, const Track &track, std::string_view name) {
    const int32_t gpu = track.device >= 0 ? track.device : 0;
    // TensorFlow 1's "stream:all" and "memcpy" rows, read alone, have no stream (-1).
    const int64_t stream = track.stream >= 0 ? track.stream : track.tid;
    std::string node_name;
    std::string label;
    GpuDeviceKind shared_device = GpuDeviceKind::kAllStreams;
    switch (activity.kind) {
      case ActivityKind::kMemcpy:
        node_name = absl::StrCat("Memcpy", ToAbsl(CopyKindText(activity.copy)));
        label = MemcpyLabel(node_name, activity.bytes, {});
        shared_device = GpuDeviceKind::kMemcpy;
        break;
      case ActivityKind::kMemset:
        node_name = "Memset";
        label = MemcpyLabel(node_name, activity.bytes, {});
        break;
      default:
        // A kernel's launch shape and op are not in the loaded trace: the label is its name.
        node_name = std::string(name);
        label = std::string(name);
        break;
    }
    const std::string bytes =
        TimedNode(node_name, label, activity.begin_ns, activity.end_ns).SerializeAsString();
    AppendLengthDelimited(kDeviceStepStatsNodeStats, bytes,
                          gpu_nodes_[GpuDeviceKey{gpu, shared_device, 0}]);
    pending_bytes_ += bytes.size();
    if (stream < 0) return;
    AppendLengthDelimited(kDeviceStepStatsNodeStats, bytes, gpu_nodes_[GpuDeviceKey{gpu, GpuDeviceKind::kStream, stream}]);
    pending_bytes_ += bytes.size();
  }

  // The runtime's losses node, with the counts the input reported.
  void AddLossesNode() {
    int64_t end_ns = std::numeric_limits<int64_t>::min();
    for (const Activity &activity : trace_.activities) end_ns = std::max(end_ns, activity.end_ns);
    for (const Step &step : trace_.steps) end_ns = std::max(end_ns, step.end_ns);
    if (end_ns == std::numeric_limits<int64_t>::min()) end_ns = 0;
    const TraceLosses &losses = trace_.losses;
    const std::string label = HostOpLabel(
        kLossesNodeName, "Losses",
        absl::StrCat("dropped_events=", losses.dropped_events,
                     ", unmatched_span_ends=", losses.unmatched_span_ends,
                     ", unmatched_step_ends=", losses.unmatched_step_ends,
                     ", gpu_records_dropped=", losses.gpu_records_dropped,
                     ", memory_dropped_events=", losses.memory_dropped_events,
                     ", discarded_events=", losses.discarded_events));
    tensorflow::NodeExecStats node = TimedNode(kLossesNodeName, label, end_ns, end_ns);
    node.set_thread_id(kLossesThreadId);
    HostDevice &device = host_devices_.front();
    AppendLengthDelimited(kDeviceStepStatsNodeStats, node.SerializeAsString(), device.nodes);
    device.thread_names.emplace(kLossesThreadId, kLossesThreadName);
  }

  void ShowProgress() { out_.ShowPending(pending_bytes_); }

  // One DeviceStepStats, in three parts so the (large) node list is never copied: `head` (the
  // dev_stats field's tag and length, the device name), `nodes`, `tail` (the thread names).
  struct DevicePieces {
    std::string head;
    const std::string *nodes;
    std::string tail;
  };

  // The RunMetadata of every node added since the last call, as the bytes `head` followed by
  // each device's pieces.
  std::string CollectRunMetadata(std::vector<DevicePieces> &devices) {
    const auto add_device = [&](const std::string &name, const std::string &nodes, std::string tail) {
      std::string name_field;
      AppendLengthDelimited(kDeviceStepStatsDevice, name, name_field);
      DevicePieces pieces{{}, &nodes, std::move(tail)};
      AppendVarint((uint64_t{kStepStatsDevStats} << 3) | 2, pieces.head);
      AppendVarint(name_field.size() + nodes.size() + pieces.tail.size(), pieces.head);
      pieces.head += name_field;
      devices.push_back(std::move(pieces));
    };
    for (HostDevice &host : host_devices_) {
      if (host.nodes.empty()) continue;
      std::string thread_names;
      for (const auto &[thread, thread_name] : host.thread_names) {
        std::string entry;
        AppendVarintField(kMapEntryKey, thread, entry);
        AppendLengthDelimited(kMapEntryValue, thread_name, entry);
        AppendLengthDelimited(kDeviceStepStatsThreadNames, entry, thread_names);
      }
      add_device(host.name, host.nodes, std::move(thread_names));
    }
    for (const auto &[key, nodes] : gpu_nodes_) {
      const auto &[gpu, kind, stream] = key;
      add_device(kind == GpuDeviceKind::kAllStreams ? GpuAllStreamsDevice(gpu)
                 : kind == GpuDeviceKind::kStream   ? GpuStreamDevice(gpu, stream)
                                                    : GpuMemcpyDevice(gpu),
                 nodes, {});
    }
    size_t step_stats_size = 0;
    for (const DevicePieces &device : devices) {
      step_stats_size += device.head.size() + device.nodes->size() + device.tail.size();
    }
    std::string head;
    AppendVarint((uint64_t{kRunMetadataStepStats} << 3) | 2, head);
    AppendVarint(step_stats_size, head);
    return head;
  }

  // Forgets the nodes added so far.
  void ClearNodes() {
    for (HostDevice &host : host_devices_) {
      host.nodes.clear();
      host.thread_names.clear();
    }
    gpu_nodes_.clear();
    pending_bytes_ = 0;
  }

  // The serialized RunMetadata of every node added since the last call.
  std::string TakeRunMetadata() {
    std::vector<DevicePieces> devices;
    std::string run_metadata = CollectRunMetadata(devices);
    for (const DevicePieces &device : devices) {
      absl::StrAppend(&run_metadata, device.head, *device.nodes, device.tail);
    }
    ClearNodes();
    return run_metadata;
  }

  // The same, written straight to the output: a whole trace's RunMetadata is not copied again.
  void WriteRunMetadata() {
    std::vector<DevicePieces> devices;
    out_.Write(CollectRunMetadata(devices));
    for (const DevicePieces &device : devices) {
      out_.Write(device.head);
      out_.Write(*device.nodes);
      out_.Write(device.tail);
    }
    ClearNodes();
  }

  double WallSeconds(int64_t ns) const { return static_cast<double>(Wall(ns)) / 1e9; }

  // file_version, then the GraphDef of every host op (TensorBoard's graph view needs one to
  // attach the step statistics to), as the runtime's event files start.
  void WriteEventFileStart() {
    int64_t first_ns = std::numeric_limits<int64_t>::max();
    for (const Activity &activity : trace_.activities) {
      first_ns = std::min(first_ns, activity.begin_ns);
      if (activity.track >= trace_.tracks.size()) continue;
      const Track &track = trace_.tracks[activity.track];
      if (track.kind == TrackKind::kGpuStream || IsGpuWork(activity.kind) ||
          activity.kind == ActivityKind::kGpuAnnotation) {
        continue;
      }
      const OpName split = SplitName(trace_.names.Get(activity.name));
      if (!graph_names_.insert(split.name).second) continue;
      tensorflow::NodeDef *node = graph_.add_node();
      node->set_name(std::string(split.name));
      node->set_op(std::string(split.type));
      node->set_device(HostDeviceOf(track.process).name);
    }
    for (const Step &step : trace_.steps) first_ns = std::min(first_ns, step.begin_ns);
    if (first_ns == std::numeric_limits<int64_t>::max()) first_ns = 0;
    std::string out;
    tensorflow::Event version;
    version.set_wall_time(WallSeconds(first_ns));
    version.set_file_version(kEventFileVersion);
    AppendTfRecord(version.SerializeAsString(), &out);
    if (graph_.node_size() > 0) {
      tensorflow::Event graph;
      graph.set_wall_time(WallSeconds(first_ns));
      graph.set_graph_def(graph_.SerializeAsString());
      AppendTfRecord(graph.SerializeAsString(), &out);
    }
    out_.Write(out);
  }

  // One record: a bare RunMetadata (TFRecord) or an event tagged with its step.
  void EmitRecord(const Step *step, const std::vector<uint32_t> &activities) {
    std::string run_metadata = TakeRunMetadata();
    std::string out;
    if (container_ == Format::kTfRecord) {
      AppendTfRecord(run_metadata, &out);
      out_.Write(out);
      return;
    }
    int64_t end_ns = 0;
    if (step != nullptr) {
      end_ns = step->end_ns;
    } else {
      for (uint32_t index : activities) end_ns = std::max(end_ns, trace_.activities[index].end_ns);
    }
    tensorflow::Event event;
    event.set_wall_time(WallSeconds(end_ns));
    if (step != nullptr) event.set_step(step->number);
    tensorflow::TaggedRunMetadata *tagged = event.mutable_tagged_run_metadata();
    tagged->set_tag(UniqueTag(step != nullptr ? StepTag(step->number) : kOutsideStepsTag));
    tagged->set_run_metadata(std::move(run_metadata));
    AppendTfRecord(event.SerializeAsString(), &out);
    out_.Write(out);
  }

  // TensorBoard keeps only the last record of a repeated tag: a repeat gets "_2", "_3", ...
  std::string UniqueTag(const std::string &tag) {
    std::string unique = tag;
    for (int suffix = 2; !tags_.insert(unique).second; ++suffix) unique = absl::StrCat(tag, "_", suffix);
    return unique;
  }

  const Trace &trace_;
  const Format container_;
  CountingSink &out_;
  const int64_t wall_offset_ns_;
  StepStatsReport report_;
  std::vector<HostDevice> host_devices_;
  std::vector<size_t> host_device_of_;                 // per process
  std::vector<std::optional<size_t>> step_thread_of_;  // per process: the track of its step nodes
  std::map<GpuDeviceKey, std::string> gpu_nodes_;
  uint64_t pending_bytes_ = 0;
  tensorflow::GraphDef graph_;
  absl::flat_hash_set<std::string_view> graph_names_;
  absl::flat_hash_set<std::string> tags_;
};

}  // namespace

StepStatsReport WriteStepStats(const Trace &trace, Format container,
                               CountingSink &out) {
  return StepStatsWriter(trace, container, out).Write();
}

}  // namespace tfprof
