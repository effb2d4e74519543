#include "runtime/formats/tensorflow/step_stats_trace_writer.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/model/gpu_names.h"
#include "runtime/common/crc32c.h"
#include "runtime/common/proto_wire.h"
#include "runtime/formats/tensorflow/node_stats_encoder.h"
#include "runtime/formats/tensorflow/step_scalars.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/common/utf8.h"
#include "runtime/model/step_index.h"
#include "runtime/common/string_view_bridge.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace tfprof {

namespace {

// Tags remembered for making repeats unique: enough for any repeat TensorBoard would confuse,
// bounded for runs of any length.
constexpr size_t kRecentTags = 65536;

std::string HostDeviceName(size_t task) {
  return absl::StrCat("/job:localhost/replica:0/task:", task, "/device:CPU:0");
}

// gpu_names.h's CoarseCopyText, except that no known direction is "Unknown" too.
std::string_view LabelCopyText(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return "HtoD";
    case CopyKind::kDeviceToHost: return "DtoH";
    case CopyKind::kDeviceToDevice: return "DtoD";
    case CopyKind::kNone:
    case CopyKind::kOther: break;
  }
  return "Unknown";
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

bool OnGpuRow(const Track &track, const Activity &activity) {
  return track.kind == TrackKind::kGpuStream || IsGpuWork(activity.kind);
}

// Event.tagged_run_metadata and TaggedRunMetadata's fields (TensorFlow's event.proto).
constexpr uint32_t kEventTaggedRunMetadata = 8;
constexpr uint32_t kTaggedRunMetadataTag = 1;
constexpr uint32_t kTaggedRunMetadataRun = 2;
// Event.graph_def, GraphDef.node and NodeDef's fields.
constexpr uint32_t kEventGraphDef = 4;
constexpr uint32_t kGraphDefNode = 1;
constexpr uint32_t kNodeDefName = 1;
constexpr uint32_t kNodeDefOp = 2;
constexpr uint32_t kNodeDefDevice = 4;


// A TFRecord of the bytes `head` then `body`, appended to `out` without joining them first.
void AppendTfRecordOf(std::string_view head, std::string_view body, std::string &out) {
  const uint64_t length = head.size() + body.size();
  char length_bytes[8];
  for (int byte = 0; byte < 8; ++byte) length_bytes[byte] = static_cast<char>(length >> (8 * byte));
  const auto append_crc = [&](uint32_t crc) {
    const uint32_t masked = MaskCrc32c(crc);
    for (int byte = 0; byte < 4; ++byte) out.push_back(static_cast<char>(masked >> (8 * byte)));
  };
  // Room for the whole record first: growing for the trailing CRC once the payload is in would
  // copy a large record into a buffer twice its size.
  const size_t needed = out.size() + length + 16;
  if (out.capacity() < needed) out.reserve(std::max(needed, 2 * out.capacity()));
  out.append(length_bytes, 8);
  append_crc(Crc32c(std::string_view(length_bytes, 8)));
  out += head;
  out += body;
  append_crc(Crc32c(body, Crc32c(head)));
}

}  // namespace

std::string StepStatsTraceWriter::Begin(int64_t start_wall_ns) {
  std::string out;
  if (format_ != Format::kTensorBoard) return out;
  tensorflow::Event event;
  event.set_wall_time(static_cast<double>(start_wall_ns) / 1e9);
  event.set_file_version(kEventFileVersion);
  AppendTfRecord(event.SerializeAsString(), &out);
  return out;
}

size_t StepStatsTraceWriter::HostDeviceOf(const Trace &trace, uint32_t process) {
  // Spans come a thread at a time: most ask for the process the one before did.
  if (process == last_process_) return last_host_device_;
  auto [found, added] = host_device_of_.try_emplace(process, host_devices_.size());
  if (added) host_devices_.push_back(HostDevice{HostDeviceName(host_devices_.size()), {}, {}});
  static_cast<void>(trace);
  last_process_ = process;
  last_host_device_ = found->second;
  return found->second;
}

const std::string &StepStatsTraceWriter::Encode(const TimedNode &node) {
  node_bytes_.clear();
  AppendNodeExecStats(node, node_bytes_);
  return node_bytes_;
}

void StepStatsTraceWriter::AddHostNode(const Trace &trace, uint32_t process,
                                       const TimedNode &node) {
  AppendNodeExecStatsField(kDeviceStepStatsNodeStats, node,
                           host_devices_[HostDeviceOf(trace, process)].nodes);
}

void StepStatsTraceWriter::NameThread(const Trace &trace, const Track &track) {
  HostDevice &device = host_devices_[HostDeviceOf(trace, track.process)];
  const auto thread = static_cast<uint32_t>(track.tid);
  if (track.process == last_named_process_ && thread == last_named_thread_) return;
  if (!device.thread_names.contains(thread)) {
    device.thread_names.emplace(thread, track.name.empty() ? absl::StrCat("thread ", track.tid)
                                                           : ToValidUtf8(track.name));
  }
  // Remembered once named: a failed emplace leaves the thread to be named by the next span.
  last_named_process_ = track.process;
  last_named_thread_ = thread;
}

void StepStatsTraceWriter::AddStepNode(const Trace &trace, const Step &step) {
  const std::string tag = StepTag(step.number);
  label_.clear();
  AppendHostOpLabel(tag, kStepOpType, {}, label_);
  TimedNode node{tag, label_, Wall(trace, step.begin_ns), Wall(trace, step.end_ns), std::nullopt,
                 0};
  // On the thread that marked it, else on its process's first thread.
  uint32_t thread = step.track;
  if (thread >= trace.tracks.size()) {
    auto first = first_thread_of_.find(step.process);
    if (first == first_thread_of_.end()) {
      for (uint32_t index = 0; index < trace.tracks.size(); ++index) {
        const Track &track = trace.tracks[index];
        if (track.process == step.process && track.kind == TrackKind::kHostThread) {
          first = first_thread_of_.emplace(step.process, index).first;
          break;
        }
      }
    }
    if (first != first_thread_of_.end()) thread = first->second;
  }
  if (thread < trace.tracks.size()) {
    node.thread_id = static_cast<uint32_t>(trace.tracks[thread].tid);
    NameThread(trace, trace.tracks[thread]);
  }
  AddHostNode(trace, step.process, node);
}

void StepStatsTraceWriter::AddActivity(const Trace &trace, const Activity &activity) {
  const Track &track = trace.tracks[activity.track];
  if (OnGpuRow(track, activity)) {
    AddGpuNode(trace, activity, track);
    return;
  }
  // TensorFlow's readers reject invalid UTF-8 in these string fields: names are made valid here,
  // so everything derived from them (node, label, graph op) is too.
  std::string valid_name;
  const std::string_view name = ValidUtf8View(trace.names.Get(activity.name), valid_name);
  if (activity.kind == ActivityKind::kInstant) {  // a node of its own kind, in no graph
    label_.clear();
    AppendHostOpLabel(name, kInstantOpType, {}, label_);
    const int64_t at = Wall(trace, activity.begin_ns);
    AddHostNode(trace, track.process,
                TimedNode{name, label_, at, at, std::nullopt, static_cast<uint32_t>(track.tid)});
    NameThread(trace, track);
    return;
  }
  const OpName split = SplitName(name);
  label_.clear();
  AppendHostOpLabel(split.name, split.type, {}, label_);
  AddHostNode(trace, track.process,
              TimedNode{split.name, label_, Wall(trace, activity.begin_ns),
                        Wall(trace, activity.end_ns), std::nullopt,
                        static_cast<uint32_t>(track.tid)});
  NameThread(trace, track);
  // CUDA API calls are host nodes (their time on the thread is the launch overhead), but no op
  // of the graph.
  if (format_ == Format::kTensorBoard && activity.kind != ActivityKind::kRuntimeApi &&
      !graph_names_.contains(ToAbsl(split.name))) {
    GraphOp &op = graph_ops_.emplace_back();
    op.name = std::string(split.name);
    if (split.type != split.name) op.type = std::string(split.type);
    op.device = HostDeviceOf(trace, track.process);
    graph_names_.insert(ToAbsl(op.name));
    graph_grew_ = true;
  }
}

void StepStatsTraceWriter::AddGpuNode(const Trace &trace, const Activity &activity,
                                      const Track &track) {
  // Any kind may sit on a GPU's row (a step annotation, whose detail is its args): only GPU
  // details are read as one.
  const std::optional<GpuDetail> gpu_detail = ActivityGpuDetail(trace, activity);
  const GpuDetail *detail = gpu_detail ? &*gpu_detail : nullptr;
  std::string valid_name;
  std::string valid_op;
  const std::string_view name = ValidUtf8View(trace.names.Get(activity.name), valid_name);
  const std::string_view op = detail != nullptr && detail->op < trace.names.size()
                                  ? ValidUtf8View(trace.names.Get(detail->op), valid_op)
                                  : std::string_view();
  std::string kind;  // a copy's or memset's node name without an op
  std::string_view node_name;
  label_.clear();
  GpuDeviceKind shared_device = GpuDeviceKind::kAllStreams;
  if (activity.kind == ActivityKind::kMemcpy || activity.kind == ActivityKind::kMemset) {
    // "MemcpyHtoD", "Memset": TensorFlow's names for copies and memsets without an op.
    kind =
        activity.kind == ActivityKind::kMemset
            ? std::string("Memset")
            : absl::StrCat("Memcpy", ToAbsl(detail != nullptr && detail->copy_direction != 0
                                                ? CopyKindName(static_cast<GpuCopyKind>(detail->copy_direction))
                                                : LabelCopyText(activity.copy)));
    node_name = op.empty() ? std::string_view(kind) : SplitOpName(op).name;
    label_ = MemcpyLabel(kind, activity.bytes, op);
    if (activity.kind == ActivityKind::kMemcpy) shared_device = GpuDeviceKind::kMemcpy;
  } else {
    node_name = op.empty() ? name : SplitOpName(op).name;
    if (detail != nullptr && (detail->fields & kGpuHasLaunchShape) != 0) {
      const GpuWorkShape &work = trace.work_shapes.Get(detail->shape);
      KernelShape shape;
      for (int axis = 0; axis < 3; ++axis) {
        shape.grid[axis] = work.grid[axis];
        shape.block[axis] = work.block[axis];
      }
      shape.registers = work.registers;
      shape.shared_memory = work.static_shared + work.dynamic_shared;
      AppendKernelLabel(name, shape, op, label_);
    } else if (op.empty()) {
      label_ = name;
    } else {
      absl::StrAppend(&label_, ToAbsl(name), "@@", ToAbsl(op), "#");
    }
  }
  TimedNode node{node_name, label_, Wall(trace, activity.begin_ns), Wall(trace, activity.end_ns),
                 std::nullopt, 0};
  if (detail != nullptr && detail->launch_ns != kNoStep) {
    node.wall_scheduled_ns = Wall(trace, detail->launch_ns);
  }
  if (detail != nullptr) node.thread_id = static_cast<uint32_t>(detail->thread_id);
  const std::string &bytes = Encode(node);
  const int32_t gpu = track.device >= 0 ? track.device : 0;
  // TensorFlow 1's "stream:all" and "memcpy" rows, read alone, have no stream (-1).
  const int64_t stream = track.stream >= 0 ? track.stream : track.tid;
  AppendLengthDelimited(kDeviceStepStatsNodeStats, bytes, gpu_nodes_[GpuDeviceKey{gpu, shared_device, 0}]);
  if (stream >= 0) {
    AppendLengthDelimited(kDeviceStepStatsNodeStats, bytes,
                          gpu_nodes_[GpuDeviceKey{gpu, GpuDeviceKind::kStream, stream}]);
  }
}

void StepStatsTraceWriter::AddLossesNode(const Trace &trace, int64_t end_ns) {
  const std::string label = LossesLabel(trace.losses, trace.gpu.state);
  const TimedNode node{kLossesNodeName, label, Wall(trace, end_ns), Wall(trace, end_ns),
                       std::nullopt, kLossesThreadId};
  if (host_devices_.empty()) host_devices_.push_back(HostDevice{HostDeviceName(0), {}, {}});
  HostDevice &device = host_devices_.front();
  AppendLengthDelimited(kDeviceStepStatsNodeStats, Encode(node), device.nodes);
  device.thread_names.emplace(kLossesThreadId, kLossesThreadName);
}

std::string StepStatsTraceWriter::TakeRunMetadata() {
  // Each device's message is its name, its nodes (already serialized) and its thread names. The
  // sizes are summed first and the nodes copied straight into the result, each buffer let go once
  // copied: nesting the messages one copy at a time held a large record in memory four times.
  struct DevicePart {
    std::string head;              // the device name field
    std::string *nodes = nullptr;  // emptied once copied
    std::string tail;              // thread name entries
    size_t Size() const { return head.size() + (nodes ? nodes->size() : 0) + tail.size(); }
  };
  std::vector<DevicePart> parts;
  for (HostDevice &host : host_devices_) {
    if (host.nodes.empty()) continue;
    DevicePart &part = parts.emplace_back();
    AppendLengthDelimited(kDeviceStepStatsDevice, host.name, part.head);
    part.nodes = &host.nodes;
    for (const auto &[thread, thread_name] : host.thread_names) {
      std::string entry;
      AppendVarintField(kMapEntryKey, thread, entry);
      AppendLengthDelimited(kMapEntryValue, thread_name, entry);
      AppendLengthDelimited(kDeviceStepStatsThreadNames, entry, part.tail);
    }
    host.thread_names.clear();
  }
  last_named_process_ = UINT32_MAX;  // every thread is named again in the next record
  for (auto &[key, nodes] : gpu_nodes_) {
    const auto &[gpu, kind, stream] = key;
    DevicePart &part = parts.emplace_back();
    AppendLengthDelimited(kDeviceStepStatsDevice,
                          kind == GpuDeviceKind::kAllStreams ? GpuAllStreamsDevice(gpu)
                          : kind == GpuDeviceKind::kStream   ? GpuStreamDevice(gpu, stream)
                                                             : GpuMemcpyDevice(gpu),
                          part.head);
    part.nodes = &nodes;
  }
  if (parts.empty()) {
    // Nothing TensorFlow's formats hold (a trace of counters, say): one host device with no
    // node, so that the file is still a RunMetadata that TensorFlow and tfprof read.
    AppendLengthDelimited(kDeviceStepStatsDevice, HostDeviceName(0), parts.emplace_back().head);
  }
  const auto field_size = [](uint32_t field, size_t bytes) {
    return VarintSize(field << 3 | 2) + VarintSize(bytes) + bytes;
  };
  size_t step_stats_size = 0;
  for (const DevicePart &part : parts) step_stats_size += field_size(kStepStatsDevStats, part.Size());
  std::string run_metadata;
  run_metadata.reserve(field_size(kRunMetadataStepStats, step_stats_size));
  AppendVarint(kRunMetadataStepStats << 3 | 2, run_metadata);
  AppendVarint(step_stats_size, run_metadata);
  for (DevicePart &part : parts) {
    AppendVarint(kStepStatsDevStats << 3 | 2, run_metadata);
    AppendVarint(part.Size(), run_metadata);
    run_metadata += part.head;
    if (part.nodes != nullptr) {
      run_metadata += *part.nodes;
      std::string().swap(*part.nodes);
    }
    run_metadata += part.tail;
  }
  gpu_nodes_.clear();
  return run_metadata;
}

void StepStatsTraceWriter::Restart() {
  for (HostDevice &device : host_devices_) {
    device.nodes.clear();
    device.thread_names.clear();
  }
  gpu_nodes_.clear();
  last_named_process_ = UINT32_MAX;
  graph_grew_ = !graph_ops_.empty();
}

std::string StepStatsTraceWriter::GraphRecordIfGrew(int64_t wall_ns) {
  std::string out;
  if (!graph_grew_ || format_ != Format::kTensorBoard) return out;
  graph_grew_ = false;
  // GraphDef { repeated NodeDef node = 1 } of NodeDef { name = 1, op = 2, device = 4 }, written
  // here as protobuf would (empty fields left out), and framed into its Event without copies.
  const auto append_text = [](uint32_t field, std::string_view text, std::string &to) {
    if (!text.empty()) AppendLengthDelimited(field, text, to);
  };
  std::string graph;
  std::string node;
  for (const GraphOp &op : graph_ops_) {
    node.clear();
    append_text(kNodeDefName, op.name, node);
    append_text(kNodeDefOp, op.type ? *op.type : op.name, node);
    append_text(kNodeDefDevice, host_devices_[op.device].name, node);
    AppendLengthDelimited(kGraphDefNode, node, graph);
  }
  tensorflow::Event event;
  event.set_wall_time(static_cast<double>(wall_ns) / 1e9);
  std::string head = event.SerializeAsString();
  AppendVarint(kEventGraphDef << 3 | 2, head);
  AppendVarint(graph.size(), head);
  AppendTfRecordOf(head, graph, out);
  return out;
}

std::string StepStatsTraceWriter::UniqueTag(const std::string &tag) {
  // The suffixes probed start after the last one given to this tag while it is recent, so a step
  // number repeated n times costs O(n) probes, not O(n^2).
  std::string unique = tag;
  auto base = tags_.find(tag);
  if (base != tags_.end()) {
    int suffix = base->second;
    do unique = absl::StrCat(tag, "_", suffix++);
    while (tags_.contains(unique));
    base->second = suffix;
  }
  tags_.emplace(unique, 2);
  tag_order_.push_back(unique);
  if (tag_order_.size() > kRecentTags) {
    tags_.erase(tag_order_.front());
    tag_order_.pop_front();
  }
  return unique;
}

void StepStatsTraceWriter::Append(const Trace &trace, bool last, int64_t end_ns, std::string &out,
                                  const Drain &drain) {
  // Each activity's record: its step's (Activity::step, which the readers and the session's
  // export set by the model's rule), else the outside record (index steps.size()). A step is
  // found by its number within its recording; where a recording numbers two steps alike, the
  // rule itself (StepIndex) tells which one holds the activity.
  const size_t outside = trace.steps.size();
  std::vector<std::vector<uint32_t>> records(outside + 1);
  constexpr size_t kAmbiguous = SIZE_MAX;
  const auto group_of = [&trace](uint32_t process) {
    return process < trace.processes.size() ? trace.processes[process].group : 0;
  };
  absl::flat_hash_map<std::pair<uint32_t, int64_t>, size_t> step_by_number;
  for (size_t step = 0; step < outside; ++step) {
    const auto [entry, added] = step_by_number.try_emplace(
        std::make_pair(group_of(trace.steps[step].process), trace.steps[step].number), step);
    if (!added) entry->second = kAmbiguous;
  }
  std::optional<StepIndex> index;
  const auto record_of = [&](const Activity &activity) -> size_t {
    if (activity.step == kNoStep) return outside;
    const auto found = step_by_number.find(
        std::make_pair(group_of(trace.tracks[activity.track].process), activity.step));
    if (found == step_by_number.end()) return outside;
    if (found->second != kAmbiguous) return found->second;
    if (!index) index.emplace(trace);
    return index->Of(activity).value_or(outside);
  };
  for (uint32_t position = 0; position < trace.activities.size(); ++position) {
    const Activity &activity = trace.activities[position];
    if (activity.track >= trace.tracks.size()) continue;
    switch (activity.kind) {
      case ActivityKind::kGpuAnnotation: ++report_.gpu_annotations_skipped; continue;
      case ActivityKind::kSync:
      case ActivityKind::kOverhead: ++report_.others_skipped; continue;
      default: break;
    }
    records[record_of(activity)].push_back(position);
  }
  // An event file carries counters per step as scalars (step_scalars.h); the others have no place.
  if (format_ != Format::kTensorBoard) report_.others_skipped += trace.counters.size();
  const std::vector<std::vector<std::pair<std::string, double>>> scalars =
      format_ == Format::kTensorBoard ? StepScalars(trace)
                                      : std::vector<std::vector<std::pair<std::string, double>>>();
  // Nodes in time order, an enclosing span before the spans it encloses, as TensorFlow's executor
  // records them.
  for (std::vector<uint32_t> &record : records) SortEnclosingFirst(trace.activities, record);
  std::vector<size_t> order(outside);
  for (size_t step = 0; step < outside; ++step) order[step] = step;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return trace.steps[a].begin_ns < trace.steps[b].begin_ns;
  });
  // The losses node (tf_names.h) goes into every outside record, and the file's last record
  // carries the final losses: the outside record when there is one, else the last step's. Only
  // losses with nowhere else to go make an outside record of their own.
  const bool final_losses = last && trace.losses.reported;
  if (!records[outside].empty() || (final_losses && order.empty())) order.push_back(outside);
  // A file of no record at all (0 bytes) is no TFRecord any reader takes: the end of one that
  // had nothing to hold writes one empty record.
  if (last && order.empty() && !wrote_record_) order.push_back(outside);
  if (!order.empty()) wrote_record_ = true;

  std::string events;
  for (size_t place = 0; place < order.size(); ++place) {
    const size_t record = order[place];
    if (record != outside) AddStepNode(trace, trace.steps[record]);
    int64_t record_end_ns = std::numeric_limits<int64_t>::min();
    for (uint32_t position : records[record]) {
      AddActivity(trace, trace.activities[position]);
      record_end_ns = std::max(record_end_ns, trace.activities[position].end_ns);
    }
    if (record == outside || (final_losses && place + 1 == order.size())) {
      AddLossesNode(trace, end_ns);
    }
    if (format_ == Format::kRunMetadata) continue;  // one message for all, at Finish()
    const std::string run_metadata = TakeRunMetadata();
    if (format_ == Format::kTfRecord) {
      AppendTfRecordOf({}, run_metadata, events);
      // A large piece is handed over record by record (a .tfrecord has no graph to put first).
      if (drain && events.size() >= kDrainBytes) {
        out += events;
        events.clear();
        drain(out);
      }
      continue;
    }
    const Step *step = record == outside ? nullptr : &trace.steps[record];
    const int64_t wall_end_ns = Wall(
        trace, step != nullptr ? step->end_ns
               : record_end_ns == std::numeric_limits<int64_t>::min() ? end_ns
                                                                      : record_end_ns);
    // The Event's fields before its tagged_run_metadata (field 8) serialized by protobuf, the
    // rest framed here around the run's bytes, so that they are not copied twice more.
    tensorflow::Event event;
    event.set_wall_time(static_cast<double>(wall_end_ns) / 1e9);
    if (step != nullptr) event.set_step(step->number);
    std::string head = event.SerializeAsString();
    std::string tag_field;
    AppendLengthDelimited(kTaggedRunMetadataTag,
                          UniqueTag(step != nullptr ? StepTag(step->number) : kOutsideStepsTag),
                          tag_field);
    const size_t tagged_size = tag_field.size() + VarintSize(kTaggedRunMetadataRun << 3 | 2) +
                               VarintSize(run_metadata.size()) + run_metadata.size();
    AppendVarint(kEventTaggedRunMetadata << 3 | 2, head);
    AppendVarint(tagged_size, head);
    head += tag_field;
    AppendVarint(kTaggedRunMetadataRun << 3 | 2, head);
    AppendVarint(run_metadata.size(), head);
    AppendTfRecordOf(head, run_metadata, events);
    if (step != nullptr && record < scalars.size() && !scalars[record].empty()) {
      // The step's scalars, an event of their own at the same step and time.
      tensorflow::Event summary;
      summary.set_wall_time(static_cast<double>(wall_end_ns) / 1e9);
      summary.set_step(step->number);
      for (const auto &[tag, value] : scalars[record]) {
        tensorflow::Summary::Value *entry = summary.mutable_summary()->add_value();
        entry->set_tag(tag);
        entry->set_simple_value(static_cast<float>(value));
      }
      AppendTfRecord(summary.SerializeAsString(), &events);
    }
  }
  // One GraphDef ahead of the batch when it brought new ops: TensorBoard keeps the newest graph
  // of a run, and warns for each extra one.
  if (!events.empty()) events.insert(0, GraphRecordIfGrew(Wall(trace, end_ns)));
  if (out.empty()) {
    out.swap(events);  // the batch's records are not copied again
  } else {
    out += events;
  }
}

std::string StepStatsTraceWriter::Finish(const Trace &trace, int64_t end_ns) {
  if (format_ == Format::kRunMetadata) return TakeRunMetadata();
  return GraphRecordIfGrew(Wall(trace, end_ns));
}

std::vector<std::string> StepStatsTraceWriter::Notes(const Trace &trace) const {
  std::vector<std::string> notes;
  if (!trace.wall_offset_ns) {
    notes.push_back(
        "the input recorded no wall-clock time: the TensorFlow times are its own clock's, "
        "not microseconds since 1970");
  }
  if (report_.gpu_annotations_skipped > 0) {
    notes.push_back(absl::StrCat(report_.gpu_annotations_skipped,
                                 " GPU annotation spans (gpu_user_annotation) were left out: "
                                 "TensorFlow's formats have no such node"));
  }
  if (report_.others_skipped > 0) {
    notes.push_back(absl::StrCat(report_.others_skipped,
                                 " counter samples, synchronisation waits and tracer "
                                 "overheads were left out: TensorFlow's formats have no such node"));
  }
  return notes;
}

}  // namespace tfprof
