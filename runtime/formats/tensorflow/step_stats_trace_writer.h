// The one writer of TensorFlow's formats (docs/tensorflow.md): the trace model as one RunMetadata
// (.pb), a TFRecord file of one RunMetadata per step (.tfrecord), or a TensorBoard event file
// (file_version, GraphDefs of the host ops, one tagged_run_metadata per step tagged step_NNNNNN,
// each followed by the step's scalars for TensorBoard's Scalars tab: step_scalars.h).
// The runtime's export and stream, `tfprof convert`/`merge` and prof_convert() all write through
// it, as the model grows or all at once.
//
// Records: one per step of what Append() is given, holding a node step_NNNNNN of type
// TrainingStep and the activities StepIndex puts in that step, in time order (an enclosing span
// before what it encloses); the activities in no step go to one more record, tagged
// outside_steps, after the steps. The losses node (tf_names.h) is in every outside_steps record
// (saying "recorded=false" when the trace states no losses), which tells tfprof's reader that the
// record is no step; the last Append() puts the final losses in its last record, the outside one
// or else the last step's (an outside record of its own only when it has no step), so N steps
// with nothing outside them are N records. Devices: a host process's threads on
// /job:localhost/replica:0/task:K/device:CPU:0 (K: the host processes in the order they appear),
// kernels and memsets on /device:GPU:N/stream:all and /device:GPU:N/stream:S,
// copies on /device:GPU:N/memcpy and /device:GPU:N/stream:S, as TensorFlow's CUPTI tracer writes
// them: a kernel's label carries its launch shape and the op that launched it when the model
// knows them ("k regs:R shm:S grid:x,y,z block:x,y,z@@op#"), its scheduled time the launch call's
// start. Times are wall-clock (the model's clock plus Trace::wall_offset_ns), in floored whole
// microseconds and exact nanoseconds.
//
// CUDA API calls are host nodes on their threads (not ops of the GraphDef). Not written, because
// TensorFlow's formats have no place for them (counted in the report): GPU annotation spans,
// instants, counters (an event file's step scalars hold their last value per step),
// synchronisation waits, tracer overhead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/formats/format.h"
#include "runtime/formats/format_writer.h"
#include "runtime/formats/tensorflow/node_stats_encoder.h"
#include "runtime/model/trace.h"

namespace tfprof {

// What the writer left out because the format cannot hold it.
struct StepStatsReport {
  size_t gpu_annotations_skipped = 0;  // gpu_user_annotation spans
  size_t others_skipped = 0;           // instants, counters, syncs, tracer overhead
};

class StepStatsTraceWriter final : public FormatWriter {
 public:
  // `format`: kRunMetadata, kTfRecord or kTensorBoard.
  explicit StepStatsTraceWriter(Format format) : format_(format) {}

  Ending ending() const override { return Ending::kOnce; }

  // The file's first bytes: an event file's file_version record stamped `start_wall_ns`; nothing
  // for the other formats.
  std::string Begin(int64_t start_wall_ns) override;

  // The records of the steps and activities `trace` holds now (see above), appended to `out`; with
  // `last`, the final losses too, when the trace states them. An event file gets a GraphDef
  // record ahead of the batch when it brought host ops the last GraphDef did not have. For
  // kRunMetadata nothing is appended: the nodes accumulate until Finish(). `end_ns` (the model's
  // clock) stamps the losses node and the outside_steps event. `drain`, when given, takes a
  // .tfrecord's records whenever more than kDrainBytes wait (event files keep a piece whole: its
  // graph record goes first).
  static constexpr size_t kDrainBytes = size_t{1} << 20;
  void Append(const Trace &trace, bool last, int64_t end_ns, std::string &out,
              const Drain &drain) override;

  // A streamed piece was dropped: nodes it left half-gathered are let go, and an event file's
  // next piece carries the graph again (the dropped one may have been the one to carry it).
  void Restart() override;

  // The file's last bytes: kRunMetadata's one message; an event file's last GraphDef when ops
  // appeared since the last one.
  std::string Finish(const Trace &trace, int64_t end_ns) override;

  // What was left out (the report), and times not on the wall clock when the trace has none.
  std::vector<std::string> Notes(const Trace &trace) const override;

 private:
  // GPU devices in TensorFlow's order: per GPU, stream:all, its streams, then memcpy.
  enum class GpuDeviceKind { kAllStreams, kStream, kMemcpy };
  using GpuDeviceKey = std::tuple<int32_t, GpuDeviceKind, int64_t>;  // gpu, kind, stream
  struct HostDevice {
    std::string name;
    std::string nodes;  // serialized DeviceStepStats.node_stats entries
    std::map<uint32_t, std::string> thread_names;
  };

  size_t HostDeviceOf(const Trace &trace, uint32_t process);
  const std::string &Encode(const TimedNode &node);  // into node_bytes_
  void AddHostNode(const Trace &trace, uint32_t process, const TimedNode &node);
  void NameThread(const Trace &trace, const Track &track);
  void AddStepNode(const Trace &trace, const Step &step);
  void AddActivity(const Trace &trace, const Activity &activity);
  void AddGpuNode(const Trace &trace, const Activity &activity, const Track &track);
  void AddLossesNode(const Trace &trace, int64_t end_ns);
  std::string TakeRunMetadata();
  std::string GraphRecordIfGrew(int64_t wall_ns);
  std::string UniqueTag(const std::string &tag);
  int64_t Wall(const Trace &trace, int64_t ns) const { return ns + trace.wall_offset_ns.value_or(0); }

  const Format format_;
  // Reused for every node, so that a span costs no allocation: its label, its encoded bytes.
  std::string label_;
  std::string node_bytes_;
  // The last process HostDeviceOf() looked up and the last thread NameThread() named.
  uint32_t last_process_ = UINT32_MAX;
  size_t last_host_device_ = 0;
  uint32_t last_named_process_ = UINT32_MAX;
  uint32_t last_named_thread_ = 0;
  StepStatsReport report_;
  std::vector<HostDevice> host_devices_;
  bool wrote_record_ = false;  // Append() made a record (a step's or the outside one) already
  absl::flat_hash_map<uint32_t, size_t> host_device_of_;  // process -> host_devices_
  absl::flat_hash_map<uint32_t, uint32_t> first_thread_of_;  // process -> its first host track
  std::map<GpuDeviceKey, std::string> gpu_nodes_;
  // The host ops seen so far, for TensorBoard's graph view: one node per op name.
  // The GraphDef's ops (event files only), each name held once: graph_names_ views them.
  struct GraphOp {
    std::string name;
    std::optional<std::string> type;  // unset: the same as the name
    size_t device = 0;                // its host device
  };
  std::deque<GraphOp> graph_ops_;
  absl::flat_hash_set<absl::string_view> graph_names_;
  bool graph_grew_ = false;
  // Recent tags: TensorBoard keeps only the last record of a tag, so a repeated one gets "_2".
  // Each recent tag, with the first suffix to try when it comes again.
  absl::flat_hash_map<std::string, int> tags_;
  std::deque<std::string> tag_order_;
};

}  // namespace tfprof
