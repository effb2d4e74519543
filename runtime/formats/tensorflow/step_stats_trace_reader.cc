#include "runtime/formats/tensorflow/step_stats_trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/common/ascii_text.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/formats/cut_file.h"
#include "runtime/formats/tensorflow/step_stats_decode.h"
#include "runtime/formats/tensorflow/step_stats_reader.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/formats/tensorflow/timeline_labels.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/model/memory_series.h"
#include "runtime/model/trace_builder.h"

namespace tfprof {

namespace {

// The decimal number at the start of `text` (at most 18 digits); false when there is none.
bool LeadingNumber(std::string_view text, int64_t *number, size_t *length = nullptr) {
  size_t digits = 0;
  int64_t value = 0;
  while (digits < text.size() && digits < 18 && IsDigit(text[digits])) {
    value = value * 10 + (text[digits] - '0');
    ++digits;
  }
  if (digits == 0) return false;
  *number = value;
  if (length != nullptr) *length = digits;
  return true;
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Where `needle` (lower case) first occurs in `text`, ignoring case.
size_t FindIgnoringCase(std::string_view text, std::string_view needle) {
  if (needle.size() > text.size()) return std::string_view::npos;
  for (size_t at = 0; at + needle.size() <= text.size(); ++at) {
    size_t index = 0;
    while (index < needle.size() && Lower(text[at + index]) == needle[index]) ++index;
    if (index == needle.size()) return at;
  }
  return std::string_view::npos;
}

// The first word of a GPU tracer's label: "MemcpyHtoD" of "MemcpyHtoD bytes:4096@@op#".
std::string_view LabelHead(std::string_view label) {
  const size_t end = std::min(label.find(' '), label.find("@@"));
  return label.substr(0, end);
}

// Bytes a copy moved: "bytes:N" (tfprof, TensorFlow 2) or "N bytes" (TensorFlow 1) in the label,
// else the first output's allocation, else the node's memory.
uint64_t CopyBytes(const NodeFields &node) {
  const std::string_view label = node.timeline_label;
  int64_t bytes = 0;
  if (const size_t at = label.find("bytes:");
      at != std::string_view::npos && LeadingNumber(label.substr(at + 6), &bytes)) {
    return static_cast<uint64_t>(bytes);
  }
  if (const size_t at = label.find(" bytes"); at != std::string_view::npos) {
    size_t first = at;
    while (first > 0 && IsDigit(label[first - 1])) --first;
    if (first < at && LeadingNumber(label.substr(first, at - first), &bytes)) {
      return static_cast<uint64_t>(bytes);
    }
  }
  if (!node.outputs.empty()) {
    const int64_t requested = node.outputs[0].requested_bytes;
    if (requested > 0) return static_cast<uint64_t>(requested);
  }
  if (!node.memory.empty() && node.memory[0].total_bytes > 0) {
    return static_cast<uint64_t>(node.memory[0].total_bytes);
  }
  return 0;
}

// "'FILE': byte offset N: PROBLEM" and "'FILE': record at byte offset N: PROBLEM" (the runtime
// reader's DataLoss messages) as "FILE: byte N: PROBLEM"; other messages get `path` in front.
std::string ReaderMessage(std::string_view message, const std::string &path) {
  if (message.size() > 2 && message[0] == '\'') {
    const size_t close = message.find("': ", 1);
    if (close != std::string_view::npos) {
      const std::string_view file = message.substr(1, close - 1);
      std::string_view rest = message.substr(close + 3);
      std::string_view kind;
      constexpr std::string_view kRecord = "record at byte offset ";
      constexpr std::string_view kByte = "byte offset ";
      if (rest.substr(0, kRecord.size()) == kRecord) {
        rest.remove_prefix(kRecord.size());
        kind = "record: ";
      } else if (rest.substr(0, kByte.size()) == kByte) {
        rest.remove_prefix(kByte.size());
      } else {
        return absl::StrCat(ToAbsl(file), ": ", ToAbsl(rest));
      }
      int64_t offset = 0;
      size_t digits = 0;
      if (LeadingNumber(rest, &offset, &digits) && rest.substr(digits, 2) == ": ") {
        return absl::StrCat(ToAbsl(file), ": byte ", offset, ": ", ToAbsl(kind),
                            ToAbsl(rest.substr(digits + 2)));
      }
    }
  }
  return absl::StrCat(path, ": ", ToAbsl(message));
}

// A file whose first byte is 0x0a (field 1, length-delimited) starts the way a RunMetadata or a
// StepStats does: when it does not parse, it is a damaged one, not some other kind of file.
bool StartsLikeStepStats(const std::string &path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char first = 0;
  const ssize_t got = read(fd, &first, 1);
  close(fd);
  return got == 1 && first == 0x0a;
}

// Turns runs into the trace's rows, activities and steps.
class StepStatsBuilder {
 public:
  explicit StepStatsBuilder(Trace *trace) : builder_(trace), trace_(trace) {}

  // Reads one run node by node: the run's serialized message is walked twice (its devices, then
  // their nodes), and one NodeExecStats is parsed at a time, so memory follows the trace model,
  // not the input's protobuf objects. DataLoss for a node that does not parse.
  absl::Status AddRun(const StepStatsRun &run) {
    std::vector<TfDevice> devices;
    std::vector<int32_t> gpus_with_streams;
    absl::Status walked =
        ForEachDeviceOf(run.message, run.message_format, [&](const DeviceStepStatsView &view) {
          devices.push_back(ClassifyTfDevice(view.device));
          if (devices.back().kind == TfDevice::kGpuStream) {
            gpus_with_streams.push_back(devices.back().gpu);
          }
          return absl::OkStatus();
        });
    if (!walked.ok()) return walked;
    run_begin_ = INT64_MAX;
    run_end_ = INT64_MIN;
    run_process_.reset();
    bool has_step_node = false;
    bool has_losses_node = false;
    size_t index = 0;
    const auto add_device = [&](const DeviceStepStatsView &view) {
      const TfDevice &where = devices[index++];
      trace_->events_in_file += view.nodes.size();
      switch (where.kind) {
        case TfDevice::kHost:
          return AddHostDevice(run, view, &has_step_node, &has_losses_node);
        case TfDevice::kGpuAll:
        case TfDevice::kGpuMemcpy:
          // TensorFlow's tracers (and tfprof) write every kernel and copy twice: here and on its
          // stream's device.
          if (std::find(gpus_with_streams.begin(), gpus_with_streams.end(), where.gpu) !=
              gpus_with_streams.end()) {
            return absl::OkStatus();
          }
          return AddGpuDevice(run, view, where);
        case TfDevice::kGpuStream:
          return AddGpuDevice(run, view, where);
        case TfDevice::kGpuOther:
          break;
      }
      return absl::OkStatus();
    };
    if (absl::Status status = ForEachDeviceOf(run.message, run.message_format, add_device);
        !status.ok()) {
      return status;
    }
    tfprof_written_ = tfprof_written_ || has_step_node || has_losses_node;
    // A run of TensorFlow's own is one step; tfprof's runs carry their step node instead, and
    // its "outside_steps" run holds what ran outside every step.
    if (!has_step_node && !tfprof_written_ && run.tag != kOutsideStepsTag &&
        run_begin_ <= run_end_) {
      Step step;
      step.number = run.event_step.has_value() ? *run.event_step : static_cast<int64_t>(run.index);
      step.begin_ns = run_begin_;
      step.end_ns = run_end_;
      step.process = run_process_.value_or(0);
      builder_.AddStep(step);
    }
    return absl::OkStatus();
  }

  void Finish() {
    if (!trace_->activities.empty() || !trace_->steps.empty()) trace_->wall_offset_ns = 0;
    builder_.Finish();
  }

 private:
  absl::Status AddHostDevice(const StepStatsRun &run, const DeviceStepStatsView &view,
                             bool *has_step_node, bool *has_losses_node) {
    const uint32_t process = ProcessFor(view.device);
    if (!run_process_) run_process_ = process;
    for (size_t index = 0; index < view.nodes.size(); ++index) {
      if (absl::Status parsed = nodes_.Parse(run, view, index); !parsed.ok()) return parsed;
      const NodeFields &node = nodes_.node();
      int64_t begin_ns = 0;
      int64_t end_ns = 0;
      NodeTimes(node, NodeTimeRule::kPrecise, &begin_ns, &end_ns);
      if (const std::optional<int64_t> number = StepNodeNumber(node)) {
        Step step;
        step.number = *number;
        step.begin_ns = begin_ns;
        step.end_ns = end_ns;
        step.process = process;
        builder_.AddStep(step);
        *has_step_node = true;
        continue;
      }
      if (node.node_name == kLossesNodeName) {
        std::string gpu_state;
        ParseLossesLabel(node.timeline_label, &trace_->losses, &gpu_state);
        if (!gpu_state.empty()) {
          trace_->gpu.reported = true;
          trace_->gpu.state = std::move(gpu_state);
        }
        *has_losses_node = true;
        continue;
      }
      // "name:Type" as TensorFlow's annotations and tfprof's spans name ops; just "name" when the
      // label gives no other type.
      const ParsedOpLabel label = ParseHostOpLabel(node.timeline_label);
      if (label.type == kInstantOpType) {  // tfprof's writer keeps instants so (tf_names.h)
        name_.assign(node.node_name);
        Add(ActivityKind::kInstant, HostTrack(process, node.thread_id, view), begin_ns, begin_ns,
            0, CopyKind::kNone);
        continue;
      }
      name_.assign(node.node_name);
      if (name_.empty()) name_.assign(label.name);
      if (label.type != "unknown" && !label.type.empty() && label.type != node.node_name) {
        name_.push_back(':');
        name_.append(label.type);
      }
      Add(ActivityKind::kHostOp, HostTrack(process, node.thread_id, view), begin_ns, end_ns, 0,
          CopyKind::kNone);
      AddAllocatorSamples(node, process, end_ns);
    }
    return absl::OkStatus();
  }

  absl::Status AddGpuDevice(const StepStatsRun &run, const DeviceStepStatsView &view,
                            const TfDevice &where) {
    const uint32_t process = ProcessFor(absl::StrCat("GPU ", std::max(where.gpu, 0)));
    if (!run_process_) run_process_ = process;
    const int64_t row = where.kind == TfDevice::kGpuStream ? where.stream
                        : where.kind == TfDevice::kGpuAll  ? kAllStreamsRow
                                                           : kMemcpyRow;
    const uint32_t track = GpuTrack(process, where, row);
    for (size_t index = 0; index < view.nodes.size(); ++index) {
      if (absl::Status parsed = nodes_.Parse(run, view, index); !parsed.ok()) return parsed;
      const NodeFields &node = nodes_.node();
      int64_t begin_ns = 0;
      int64_t end_ns = 0;
      NodeTimes(node, NodeTimeRule::kPrecise, &begin_ns, &end_ns);
      const std::string_view label = node.timeline_label;
      std::string_view head = LabelHead(label);
      std::string_view node_name = node.node_name;
      // TensorFlow 1 names copies "<op annotation>:MEMCPYHtoD".
      const std::string_view name_tail = node_name.substr(node_name.rfind(':') + 1);
      if (head.empty()) head = name_tail;
      ActivityKind kind = ActivityKind::kKernel;
      if (where.kind == TfDevice::kGpuMemcpy || where.copies ||
          StartsWithIgnoringCase(head, "memcpy")) {
        kind = ActivityKind::kMemcpy;
      } else if (StartsWithIgnoringCase(head, "memset")) {
        kind = ActivityKind::kMemset;
      }
      if (kind == ActivityKind::kKernel) {
        // "<kernel> regs:R shm:S grid:... block:...@@op#" (TensorFlow 2, tfprof), or no label with
        // the kernel (or its op) as the node name (TensorFlow 1).
        size_t end = label.find(" regs:");
        if (end == std::string_view::npos) end = label.find("@@");
        const std::string_view kernel = label.substr(0, end);
        name_.assign(kernel.empty() ? node_name : kernel);
        Add(kind, track, begin_ns, end_ns, 0, CopyKind::kNone);
        continue;
      }
      const std::string_view copy_name =
          !LabelHead(label).empty() ? LabelHead(label)
          : StartsWithIgnoringCase(name_tail, "memcpy") ||
                  StartsWithIgnoringCase(name_tail, "memset")
              ? name_tail
              : node_name;
      name_.assign(copy_name);
      CopyKind copy = CopyKind::kNone;
      if (kind == ActivityKind::kMemcpy) {
        copy = CopyKindFromName(copy_name);
        if (copy == CopyKind::kNone) copy = CopyKindFromName(label);
        if (copy == CopyKind::kNone) copy = CopyKindFromName(view.device);
        if (copy == CopyKind::kNone) copy = CopyKind::kOther;
      }
      Add(kind, track, begin_ns, end_ns, CopyBytes(node), copy);
    }
    return absl::OkStatus();
  }

  // An activity named `name_`.
  void Add(ActivityKind kind, uint32_t track, int64_t begin_ns, int64_t end_ns, uint64_t bytes,
           CopyKind copy) {
    Activity activity;
    activity.begin_ns = begin_ns;
    activity.end_ns = end_ns;
    activity.bytes = bytes;
    activity.name = trace_->names.Intern(name_);
    activity.track = track;
    activity.kind = kind;
    activity.copy = copy;
    builder_.AddActivity(activity);
    run_begin_ = std::min(run_begin_, begin_ns);
    run_end_ = std::max(run_end_, end_ns);
  }

  // TensorFlow's allocator statistics: each allocator's bytes in use as the node ended, a counter
  // per allocator on its device's counter row (runtime/model/memory_series.h reads them).
  void AddAllocatorSamples(const NodeFields &node, uint32_t process, int64_t ns) {
    for (const NodeMemoryFields &used : node.memory) {
      if (used.allocator_bytes_in_use <= 0) continue;
      if (allocator_series_ == kNoName) {
        allocator_series_ = trace_->names.Intern(kAllocatorBytesInUseSeries);
      }
      trace_->counters.push_back(
          CounterSample{ns, static_cast<double>(used.allocator_bytes_in_use),
                        trace_->names.Intern(used.allocator_name), builder_.CounterRow(process),
                        allocator_series_});
    }
  }

  // The formats have no pids: processes are numbered from 0 and found by their device's name.
  uint32_t ProcessFor(std::string_view name) { return builder_.NamedProcess(name); }

  uint32_t HostTrack(uint32_t process, uint32_t thread_id, const DeviceStepStatsView &view) {
    const uint32_t row = builder_.ThreadRow(process, thread_id);
    Track &track = trace_->tracks[row];
    if (track.name.empty()) {
      if (auto name = view.thread_names.find(thread_id); name != view.thread_names.end()) {
        track.name.assign(name->second);
      }
    }
    return row;
  }

  uint32_t GpuTrack(uint32_t process, const TfDevice &where, int64_t row) {
    bool added = false;
    const uint32_t index = builder_.ThreadRow(process, row, &added);
    if (added) {
      Track &track = trace_->tracks[index];
      track.kind = TrackKind::kGpuStream;
      track.device = std::max(where.gpu, 0);
      track.stream = row >= 0 ? row : -1;
      track.name = row == kAllStreamsRow ? std::string("stream all")
                   : row == kMemcpyRow   ? std::string("memcpy")
                                         : absl::StrCat("stream ", row);
    }
    return index;
  }

  // Rows of "stream:all" and "memcpy" when no per-stream device repeats them.
  static constexpr int64_t kAllStreamsRow = -1;
  static constexpr int64_t kMemcpyRow = -2;

  TraceBuilder builder_;
  Trace *const trace_;
  bool tfprof_written_ = false;  // a step or losses node was seen: runs are not steps
  int64_t run_begin_ = 0;
  int64_t run_end_ = 0;
  std::optional<uint32_t> run_process_;
  std::string name_;
  uint32_t allocator_series_ = kNoName;  // kAllocatorBytesInUseSeries, once interned
  NodeExecStatsParser nodes_;  // the node being read
};

}  // namespace

TfDevice ClassifyTfDevice(std::string_view device) {
  TfDevice result;
  // "/device:GPU:0/stream:7", "/gpu:0/memcpy", "/gpu:0 (Tesla K80)/context#1/stream#7:Kernel".
  const size_t gpu = FindIgnoringCase(device, "gpu:");
  const bool tracer_row = gpu != std::string_view::npos &&
                          (device.find("/stream") != std::string_view::npos ||
                           device.find("/memcpy") != std::string_view::npos ||
                           device.find("/sync") != std::string_view::npos ||
                           device.find("stream#") != std::string_view::npos);
  if (!tracer_row) return result;
  int64_t index = 0;
  result.gpu = LeadingNumber(device.substr(gpu + 4), &index) ? static_cast<int32_t>(index) : 0;
  const std::string_view rest = device.substr(gpu + 4);
  size_t stream_at = rest.find("/stream:");
  size_t stream_text = stream_at == std::string_view::npos ? 0 : stream_at + 8;
  if (stream_at == std::string_view::npos) {
    stream_at = rest.find("stream#");
    stream_text = stream_at + 7;
  }
  if (stream_at != std::string_view::npos) {
    const std::string_view stream = rest.substr(stream_text);
    if (stream.substr(0, 3) == "all") {
      result.kind = TfDevice::kGpuAll;
      return result;
    }
    size_t digits = 0;
    if (LeadingNumber(stream, &result.stream, &digits)) {
      result.kind = TfDevice::kGpuStream;
      result.copies = FindIgnoringCase(stream.substr(digits), "memcpy") != std::string_view::npos;
      return result;
    }
    result.kind = TfDevice::kGpuOther;  // TensorFlow 2's "stream:" of other events
    return result;
  }
  result.kind = rest.find("/memcpy") != std::string_view::npos ? TfDevice::kGpuMemcpy
                                                               : TfDevice::kGpuOther;
  return result;
}

absl::Status ReadStepStatsTrace(ProgressListener *progress, Trace *trace) {
  const std::string &path = trace->path;
  struct stat info {};
  const bool directory = stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
  const uint64_t file_size = directory ? 0 : static_cast<uint64_t>(info.st_size);
  absl::StatusOr<std::unique_ptr<StepStatsReader>> reader =
      StepStatsReader::Open(path);
  if (!reader.ok()) {
    const absl::Status &status = reader.status();
    if (absl::IsInvalidArgument(status)) return status;  // a log directory of several runs
    if (!absl::IsDataLoss(status)) {
      return absl::Status(status.code(), absl::StrCat(path, ": ", ToAbsl(ToStd(status.message()))));
    }
    if (directory && status.message().find("no event files") != absl::string_view::npos) {
      return absl::UnavailableError(absl::StrCat(
          path, ": a directory with no TensorBoard event file (no file name below it contains "
                "\"tfevents\")"));
    }
    if (!directory && !StartsLikeStepStats(path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": not a trace: in no format tfprof reads (tried Chrome trace JSON, gzip, a "
                "Perfetto trace, an XPlane profile, and TensorFlow's RunMetadata, StepStats, "
                "TFRecord and event files)"));
    }
    return absl::DataLossError(ReaderMessage(ToStd(status.message()), path));
  }
  trace->format = (*reader)->format();
  trace->producer = Producer::kTensorFlow;
  const std::string what = absl::StrCat("reading ", path);
  StepStatsBuilder builder(trace);
  StepStatsRun run;
  absl::Status status;
  while (true) {
    status = (*reader)->Next(&run);
    if (status.ok()) status = builder.AddRun(run);
    if (!status.ok()) break;
    if (progress != nullptr) progress->Update(what, run.offset, file_size);
  }
  builder.Finish();
  if (absl::IsOutOfRange(status)) return absl::OkStatus();
  if (const size_t none = status.message().find("no step statistics to convert");
      absl::IsDataLoss(status) && none != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a trace: ", status.message().substr(none)));
  }
  if (absl::IsDataLoss(status)) {
    absl::Status named = absl::DataLossError(ReaderMessage(ToStd(status.message()), path));
    if (const std::optional<CutFacts> cut = FileEndsEarly(status)) {
      named = MarkFileEndsEarly(std::move(named), *cut);
    }
    return named;
  }
  return absl::Status(status.code(), absl::StrCat(path, ": ", ToAbsl(ToStd(status.message()))));
}

}  // namespace tfprof
