#include "runtime/formats/chrome/timeline_py_writer.h"

#include <algorithm>
#include <limits>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/json_event_text.h"
#include "runtime/common/json_text.h"
#include "runtime/common/output_sink.h"
#include "runtime/formats/cut_file.h"
#include "runtime/common/first_fit_lanes.h"
#include "runtime/formats/tensorflow/step_stats_decode.h"
#include "runtime/formats/tensorflow/step_stats_reader.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/formats/tensorflow/timeline_labels.h"
#include "runtime/common/string_view_bridge.h"
#include "tfprof/tfprof.h"

namespace tfprof {

namespace {

// Rows no real thread or timeline.py lane can have (TensorFlow's thread ids are OS thread ids,
// far below these): the Steps row of each device, and the extra rows for improper overlaps.
constexpr int64_t kStepsRowTid = 2000000000;
constexpr int64_t kOverlapRowTidBase = 1000000000;
constexpr int64_t kMicro = 1000;  // ns

// ---- JSON pieces ---------------------------------------------------------------------------------

// Python's str() of a TensorDescription (protobuf text format) as timeline.py puts it in tensor
// snapshots, double quotes removed as timeline.py removes them.
void AppendTextFormatString(std::string &out, const std::string &text) {
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          const char octal[] = {'\\', static_cast<char>('0' + (byte >> 6)),
                                static_cast<char>('0' + ((byte >> 3) & 7)),
                                static_cast<char>('0' + (byte & 7)), '\0'};
          out += octal;
        } else {
          out += c;  // printable ASCII and UTF-8, which Python prints as is
        }
    }
  }
  out += '"';
}

std::string TensorDescriptionText(std::string_view serialized) {
  tensorflow::TensorDescription tensor;
  // The bytes passed the node's decoding (or protobuf's own parse) already.
  (void)tensor.ParseFromArray(serialized.data(), static_cast<int>(serialized.size()));
  std::string text;
  if (tensor.dtype() != 0) {
    const std::string &name = tensorflow::DataType_Name(tensor.dtype());
    absl::StrAppend(&text, "dtype: ", name.empty() ? absl::StrCat(static_cast<int>(tensor.dtype()))
                                                   : name, "\n");
  }
  if (tensor.has_shape()) {
    text += "shape {\n";
    for (const tensorflow::TensorShapeProto::Dim &dim : tensor.shape().dim()) {
      text += "  dim {\n";
      if (dim.size() != 0) absl::StrAppend(&text, "    size: ", dim.size(), "\n");
      if (!dim.name().empty()) {
        text += "    name: ";
        AppendTextFormatString(text, dim.name());
        text += "\n";
      }
      text += "  }\n";
    }
    if (tensor.shape().unknown_rank()) text += "  unknown_rank: true\n";
    text += "}\n";
  }
  if (tensor.has_allocation_description()) {
    const tensorflow::AllocationDescription &allocation = tensor.allocation_description();
    text += "allocation_description {\n";
    if (allocation.requested_bytes() != 0) {
      absl::StrAppend(&text, "  requested_bytes: ", allocation.requested_bytes(), "\n");
    }
    if (allocation.allocated_bytes() != 0) {
      absl::StrAppend(&text, "  allocated_bytes: ", allocation.allocated_bytes(), "\n");
    }
    if (!allocation.allocator_name().empty()) {
      text += "  allocator_name: ";
      AppendTextFormatString(text, allocation.allocator_name());
      text += "\n";
    }
    if (allocation.allocation_id() != 0) {
      absl::StrAppend(&text, "  allocation_id: ", allocation.allocation_id(), "\n");
    }
    if (allocation.has_single_reference()) text += "  has_single_reference: true\n";
    if (allocation.ptr() != 0) absl::StrAppend(&text, "  ptr: ", allocation.ptr(), "\n");
    text += "}\n";
  }
  text.erase(std::remove(text.begin(), text.end(), '"'), text.end());
  return text;
}

// ---- one run's ops, with the times and rows they are drawn at -----------------------------------

// The runs are read node by node: each pass that needs more than an op's times decodes what it
// needs of its NodeExecStats again from the run's bytes, so a run costs its ops' times and rows
// and its tensors, not its whole parsed message.
struct DrawnOp {
  int64_t begin_ns;
  int64_t end_ns;
  int64_t tid;
  uint32_t thread;  // NodeExecStats.thread_id
};

// Times in files are untrusted: NodeTimes' timeline.py rules clamp every field so that sums and
// differences of op times never overflow. Allocation sizes likewise: +-2^60 bytes keeps the
// negated size (a free) in range.
int64_t ClampBytes(int64_t bytes) { return std::clamp(bytes, -(int64_t{1} << 60), int64_t{1} << 60); }

// A step of tfprof's writer: its node's name and times, and the number in its name
// ("step_000042").
struct StepNode {
  std::string name;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::optional<int64_t> number;
};

// tfprof's step node (step_stats_decode.h), drawn as a step over the run's devices.
std::optional<StepNode> AsStepNode(const NodeFields &stats, const DrawnOp &op) {
  const std::optional<int64_t> number = StepNodeNumber(stats);
  if (!number) return std::nullopt;
  return StepNode{std::string(stats.node_name), op.begin_ns, op.end_ns, number};
}

// The thread's name in a device's thread_names.
const std::string_view *ThreadName(const DeviceStepStatsView &view, uint32_t thread) {
  const auto entry = view.thread_names.find(thread);
  return entry != view.thread_names.end() ? &entry->second : nullptr;
}

// ---- the streaming writer ------------------------------------------------------------------------

class TimelineWriter {
 public:
  TimelineWriter(OutputSink &sink, const TimelineOptions &options) : sink_(sink), options_(options) {
    sink_.Write("{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n");
  }

  // Starts the next input's process group; `label` prefixes its process names ("" for none).
  void BeginInput(std::string label) {
    input_ = Input();
    input_.label = std::move(label);
    input_.allocators_pid = NewProcess("Allocators");
  }

  // Reads a run (its serialized message) into run_: its devices, their ops' times and the step
  // nodes. Writes nothing, so a run with a damaged node leaves no trace in the output.
  absl::Status ReadRun(const StepStatsRun &run) {
    run_.devices.clear();
    run_.steps.clear();
    run_.outputs = 0;
    absl::Status status = ForEachDeviceOf(run.message, run.message_format,
                                          [&](const DeviceStepStatsView &view) {
      RunDevice &device = run_.devices.emplace_back();
      device.view = view;
      device.gpu_trace = IsGpuTraceDevice(view.device);
      device.ops.reserve(view.nodes.size());
      for (size_t index = 0; index < view.nodes.size(); ++index) {
        if (absl::Status parsed = nodes_.Parse(run, view, index); !parsed.ok()) return parsed;
        const NodeFields &node = nodes_.node();
        DrawnOp op{0, 0, 0, node.thread_id};
        NodeTimes(node,
                  options_.rows == TimelineOptions::Rows::kThreads ? NodeTimeRule::kTimelinePyNanos
                                                                   : NodeTimeRule::kTimelinePy,
                  &op.begin_ns, &op.end_ns);
        device.ops.push_back(op);
        run_.outputs += node.outputs.size();
        if (device.gpu_trace) continue;
        if (std::optional<StepNode> step = AsStepNode(node, op)) run_.steps.push_back(std::move(*step));
      }
      return absl::OkStatus();
    });
    if (!status.ok()) {
      run_.devices.clear();
      run_.steps.clear();
    }
    return status;
  }

  // Writes the run ReadRun() read.
  void DrawRun(const StepStatsRun &run) {
    for (RunDevice &device : run_.devices) {
      device.device = &DeviceFor(std::string(device.view.device));
      if (options_.rows == TimelineOptions::Rows::kLanes) {
        AssignLanes(*device.device, device.ops);
      } else {
        AssignThreadRows(*device.device, device.view, device.ops);
      }
    }
    WriteSteps(run);
    ProduceTensors(run);
    WriteCompute(run);
    if (options_.show_memory) WriteMemory();
    object_id_base_ += static_cast<int64_t>(tensor_index_.size());
    tensors_.clear();
    tensor_index_.clear();
    run_texts_.clear();
    run_.devices.clear();
    run_.steps.clear();
  }

  // Closes the event array and writes what was converted (and what could not be).
  void Finish(std::string_view summary_json) {
    sink_.Write("\n],\n\"tfprof\":");
    sink_.Write(summary_json);
    sink_.Write("}\n");
  }

 private:
  struct ThreadRows {
    std::string name;
    std::vector<int64_t> tids;                     // row 0 is the thread's own id
    std::vector<std::vector<int64_t>> open_ends;  // per row: ends of the ops still enclosing
    FirstFitLanes fit;  // per row: takes anything when no op is open, else what nests in the last
    // Every open op's (end, row), earliest first, to close them as the ops' starts pass them.
    std::priority_queue<std::pair<int64_t, size_t>, std::vector<std::pair<int64_t, size_t>>,
                        std::greater<>>
        closing;
  };

  struct Device {
    int64_t compute_pid = 0;
    int64_t tensors_pid = 0;
    bool gpu_trace = false;
    int64_t next_sort_index = 1;  // 0 is the Steps row
    bool steps_row_named = false;
    absl::flat_hash_map<uint32_t, ThreadRows> threads;
    std::vector<bool> lanes_named;
  };

  struct Input {
    std::string label;
    int64_t allocators_pid = 0;
    std::vector<std::unique_ptr<Device>> devices;
    absl::flat_hash_map<std::string, Device *> by_name;
  };

  // A device of the run being drawn: its serialized nodes and their ops, in stored order.
  struct RunDevice {
    DeviceStepStatsView view;
    bool gpu_trace = false;
    Device *device = nullptr;
    std::vector<DrawnOp> ops;
  };

  struct RunState {
    std::vector<RunDevice> devices;
    std::vector<StepNode> steps;
    size_t outputs = 0;  // of all its nodes: the tensors ProduceTensors() makes at most
  };

  // The `index`th node of `device`, decoded again (ReadRun() decoded every node once already):
  // the `parts` a pass needs.
  const NodeFields &Node(const StepStatsRun &run, const RunDevice &device, size_t index,
                         NodeParts parts) {
    nodes_.ParseAgain(run, device.view, index, parts);
    return nodes_.node();
  }

  // A produced tensor, as timeline.py's _TensorTracker keeps it. Its texts are views of the run's
  // message or of run_texts_ (Keep()): a run can hold a million tensors.
  struct Tensor {
    std::string_view name;
    int64_t object_id;
    int64_t create_ns;
    int64_t last_unref_ns;
    int64_t pid;
    std::string_view allocator;
    int64_t bytes;
    // Where its flow arrows start: the producer's end, pid and row.
    int64_t flow_ns;
    int64_t flow_pid;
    int64_t flow_tid;
  };

  void BeginEvent() {
    if (!first_event_) sink_.Write(",\n");
    first_event_ = false;
  }

  // A duration.
  void Time(EventText &text, int64_t ns) const {
    if (options_.rows == TimelineOptions::Rows::kLanes) {
      text.Int(ns / kMicro);  // whole microseconds, printed as timeline.py prints them
    } else {
      text.Micros(ns);
    }
  }
  // A timestamp: its high digits are the previous one's, mostly.
  void Timestamp(EventText &text, int64_t ns) {
    if (options_.rows == TimelineOptions::Rows::kLanes) {
      text.WholeTimestamp(ns, timestamps_);
    } else {
      text.Timestamp(ns, timestamps_);
    }
  }

  void Metadata(std::string_view kind, int64_t pid, int64_t tid, std::string_view arg_key,
                std::string_view json_value) {
    BeginEvent();
    sink_.Write(absl::StrCat("{\"ph\":\"M\",\"pid\":", pid, ",\"tid\":", tid, ",\"name\":\"",
                             ToAbsl(kind), "\",\"args\":{\"", ToAbsl(arg_key),
                             "\":", ToAbsl(json_value), "}}"));
  }

  // Starts an event: {"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":..
  void EventHead(EventText &text, char phase, std::string_view category, std::string_view name,
                 int64_t pid, int64_t tid, int64_t ns) {
    text.Literal("{\"ph\":\"");
    text.Add(phase);
    text.Literal("\",\"cat\":\"");
    text.Add(category);
    text.Literal("\",\"name\":");
    text.JsonString(name);
    text.Literal(",\"pid\":");
    text.Int(pid);
    text.Literal(",\"tid\":");
    text.Int(tid);
    text.Literal(",\"ts\":");
    Timestamp(text, ns);
  }

  // An event of a flow or an object: its head and its "id", nothing more.
  void WriteIdEvent(char phase, std::string_view category, std::string_view name, int64_t pid,
                    int64_t tid, int64_t ns, int64_t id) {
    WriteEvent([&](EventText &text) {
      EventHead(text, phase, category, name, pid, tid, ns);
      text.Literal(",\"id\":");
      text.Int(id);
      text.Add('}');
    });
  }

  // Writes the event `fill(EventText &)` assembles (in event_, reused).
  template <typename Fill>
  void WriteEvent(Fill &&fill) {
    event_.clear();
    EventText text(event_);
    fill(text);
    BeginEvent();
    sink_.Write(text.Flushed());
  }

  int64_t NewProcess(std::string_view name) {
    const int64_t pid = next_pid_++;
    const std::string full =
        input_.label.empty() ? std::string(name) : absl::StrCat(input_.label, ": ", ToAbsl(name));
    Metadata("process_name", pid, 0, "name", QuotedJson(full));
    Metadata("process_sort_index", pid, 0, "sort_index", absl::StrCat(pid));
    return pid;
  }

  // Devices get their pids the first time a run names them, in order, as in timeline.py.
  Device &DeviceFor(const std::string &name) {
    auto found = input_.by_name.find(name);
    if (found != input_.by_name.end()) return *found->second;
    auto device = std::make_unique<Device>();
    device->compute_pid = NewProcess(absl::StrCat(name, " Compute"));
    device->tensors_pid = NewProcess(absl::StrCat(name, " Tensors"));
    device->gpu_trace = IsGpuTraceDevice(name);
    Device &added = *device;
    input_.devices.push_back(std::move(device));
    input_.by_name.emplace(name, &added);
    return added;
  }

  void NameRow(const Device &device, int64_t tid, std::string_view name, int64_t sort_index) {
    Metadata("thread_name", device.compute_pid, tid, "name", QuotedJson(name));
    Metadata("thread_sort_index", device.compute_pid, tid, "sort_index", absl::StrCat(sort_index));
  }

  // timeline.py's _assign_lanes: the first lane whose last op ended strictly before this one
  // starts, in stored order; whole microseconds.
  void AssignLanes(Device &device, std::vector<DrawnOp> &ops) {
    // Each lane is free from one microsecond after its last op's end (found in O(log lanes):
    // a scan made 100,000 overlapping ops quadratic).
    FirstFitLanes lanes;
    lanes.Add(1, INT64_MIN);
    for (DrawnOp &op : ops) {
      // Whole microseconds, from the clamped times (lanes mode takes them from the micros fields).
      const int64_t start = op.begin_ns / kMicro;
      const size_t lane = lanes.Find(start, INT64_MAX);
      const int64_t end = op.end_ns / kMicro;
      if (lane == lanes.size()) {
        lanes.Add(end + 1, INT64_MIN);
      } else {
        lanes.Set(lane, end + 1, INT64_MIN);
      }
      op.tid = static_cast<int64_t>(lane);
      if (device.lanes_named.size() <= lane) device.lanes_named.resize(lane + 1, false);
      if (!device.lanes_named[lane]) {
        device.lanes_named[lane] = true;
        NameRow(device, op.tid, absl::StrCat("lane ", lane), static_cast<int64_t>(lane) + 1);
      }
    }
  }

  // One row per thread; ops of a thread that overlap without nesting (asynchronous ops) go to
  // extra rows, so no row ever holds a partial overlap.
  void AssignThreadRows(Device &device, const DeviceStepStatsView &view, std::vector<DrawnOp> &ops) {
    std::vector<size_t> order(ops.size());
    for (size_t index = 0; index < ops.size(); ++index) order[index] = index;
    // Enclosing ops before the ops they enclose.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::make_tuple(ops[a].begin_ns, -ops[a].end_ns) <
             std::make_tuple(ops[b].begin_ns, -ops[b].end_ns);
    });
    for (const size_t index : order) {
      DrawnOp &op = ops[index];
      // GPU-trace devices record the launching host thread; their rows are the stream itself.
      const uint32_t thread = device.gpu_trace ? 0 : op.thread;
      auto [found, added] = device.threads.try_emplace(thread);
      ThreadRows &rows = found->second;
      if (added) {
        const std::string_view *name = device.gpu_trace ? nullptr : ThreadName(view, thread);
        rows.name = name != nullptr ? std::string(*name)
                    : thread == 0   ? std::string("ops")
                                    : absl::StrCat("thread ", thread);
      }
      // The ops ended by this one's start close (an op nested in a row ends first there).
      while (!rows.closing.empty() && rows.closing.top().first <= op.begin_ns) {
        const size_t closed = rows.closing.top().second;
        rows.closing.pop();
        rows.open_ends[closed].pop_back();
        SetRowFit(rows, closed);
      }
      // The first row with nothing open or whose last open op encloses this one.
      const size_t row = rows.fit.Find(op.begin_ns, op.end_ns);
      if (row == rows.tids.size()) {
        const int64_t tid = row == 0 ? static_cast<int64_t>(thread) : next_overlap_tid_++;
        rows.tids.push_back(tid);
        rows.open_ends.emplace_back();
        rows.fit.Add(INT64_MIN, INT64_MIN);
        NameRow(device, tid, row == 0 ? rows.name : absl::StrCat(rows.name, " (overlap ", row, ")"),
                device.next_sort_index++);
      }
      rows.open_ends[row].push_back(op.end_ns);
      rows.closing.emplace(op.end_ns, row);
      SetRowFit(rows, row);
      op.tid = rows.tids[row];
    }
  }

  static void SetRowFit(ThreadRows &rows, size_t row) {
    const std::vector<int64_t> &ends = rows.open_ends[row];
    if (ends.empty()) {
      rows.fit.Set(row, INT64_MIN, INT64_MIN);
    } else {
      rows.fit.Set(row, INT64_MAX, ends.back());
    }
  }

  // Step spans on the Steps row of every device that ran ops in the run: one per tfprof step node
  // (its extent, named by it), else one for the whole run, named by its event tag or its index.
  void WriteSteps(const StepStatsRun &run) {
    std::string args_tail = ",\"file\":";
    AppendJsonString(args_tail, run.file);
    args_tail += "}}";
    const auto args = [&](std::optional<int64_t> step) {
      std::string text = absl::StrCat(",\"args\":{\"run\":", run.index);
      if (step) absl::StrAppend(&text, ",\"step\":", *step);
      return text + args_tail;
    };
    if (run_.steps.empty()) {
      int64_t begin = 0;
      int64_t end = 0;
      bool any = false;
      for (const RunDevice &device : run_.devices) {
        for (const DrawnOp &op : device.ops) {
          begin = any ? std::min(begin, op.begin_ns) : op.begin_ns;
          end = any ? std::max(end, op.end_ns) : op.end_ns;
          any = true;
        }
      }
      if (!any) return;
      WriteStepSpans(run.tag.empty() ? absl::StrCat("run ", run.index) : run.tag, begin, end,
                     args(run.event_step));
      return;
    }
    for (const StepNode &step : run_.steps) {
      // A record holding one step: its event step is that step's number.
      const std::optional<int64_t> number =
          run_.steps.size() == 1 && run.event_step ? run.event_step : step.number;
      WriteStepSpans(step.name, step.begin_ns, step.end_ns, args(number));
    }
  }

  void WriteStepSpans(const std::string &label, int64_t begin, int64_t end, const std::string &args) {
    for (const RunDevice &run_device : run_.devices) {
      Device &device = *run_device.device;
      if (run_device.ops.empty()) continue;
      if (!device.steps_row_named) {
        device.steps_row_named = true;
        NameRow(device, kStepsRowTid, "Steps", 0);
      }
      WriteEvent([&](EventText &text) {
        EventHead(text, 'X', "step", label, device.compute_pid, kStepsRowTid, begin);
        text.Literal(",\"dur\":");
        Time(text, end - begin);
        text.Add(args);
      });
    }
  }

  // `text` for as long as the run is drawn: a view of the run's message when it lies there (the
  // hand decoder's fields), else a copy in `store` (what the generated parser decoded is gone at
  // the next node): run_texts_, or batch_texts_ for texts a batch of ops needs only while drawn.
  static std::string_view Keep(const StepStatsRun &run, std::string_view text,
                               std::deque<std::string> &store) {
    const auto *begin = run.message.data();
    if (text.empty() || (std::less_equal<>()(begin, text.data()) &&
                         std::less_equal<>()(text.data() + text.size(), begin + run.message.size()))) {
      return text;
    }
    return store.emplace_back(text);
  }
  std::string_view Keep(const StepStatsRun &run, std::string_view text) {
    return Keep(run, text, run_texts_);
  }

  // timeline.py's _analyze_tensors: every output of every op is a tensor named "node" (first) or
  // "node:i" (the i-th output entry), created at the op's start.
  void ProduceTensors(const StepStatsRun &run) {
    // Sized once: grown by doubling, a million-tensor run held the old and the new array at once.
    tensors_.reserve(run_.outputs);
    tensor_index_.reserve(run_.outputs);
    for (const RunDevice &run_device : run_.devices) {
      const Device &device = *run_device.device;
      for (size_t first = 0; first < run_device.ops.size(); first += kComputeBatch) {
        const size_t count = std::min(kComputeBatch, run_device.ops.size() - first);
        // The batch's tensors, each name's slot in the table prefetched ...
        batch_tensors_.clear();
        batch_texts_.clear();
        for (size_t index = first; index < first + count; ++index) {
          const DrawnOp &op = run_device.ops[index];
          const NodeFields &stats = Node(run, run_device, index, NodeParts::kAgain);
          for (size_t output = 0; output < stats.outputs.size(); ++output) {
            const NodeOutputFields &value = stats.outputs[output];
            const std::string_view name =
                output == 0 ? Keep(run, stats.node_name)
                            : run_texts_.emplace_back(
                                  absl::StrCat(ToAbsl(stats.node_name), ":", output));
            tensor_index_.prefetch(ToAbsl(name));
            batch_tensors_.push_back(
                {Tensor{name, 0, op.begin_ns, op.end_ns, device.tensors_pid,
                        Keep(run, value.allocator_name), ClampBytes(value.requested_bytes),
                        op.end_ns, device.compute_pid, op.tid},
                 options_.show_memory ? Keep(run, value.tensor_description, batch_texts_)
                                      : std::string_view()});
          }
        }
        // ... then added in order.
        for (auto &[tensor, description] : batch_tensors_) AddTensor(tensor, description);
      }
    }
  }

  // A tensor ProduceTensors() made (its object id given here), and its snapshot when memory is
  // shown.
  void AddTensor(Tensor &tensor, std::string_view description) {
    tensor.object_id = object_id_base_ + static_cast<int64_t>(tensors_.size());
    if (options_.show_memory) {
      // Made at the op's start, on its row (flow_tid), and last used at its end (so far).
      WriteIdEvent('N', "Tensor", tensor.name, tensor.pid, tensor.flow_tid, tensor.create_ns,
                   tensor.object_id);
      WriteEvent([&](EventText &text) {
        EventHead(text, 'O', "Tensor", tensor.name, tensor.pid, tensor.flow_tid,
                  tensor.last_unref_ns - kMicro);
        text.Literal(",\"id\":");
        text.Int(tensor.object_id);
        text.Literal(",\"args\":{\"snapshot\":{\"tensor_description\":");
        text.JsonString(TensorDescriptionText(description));
        text.Literal("}}}");
      });
    }
    // A name seen before keeps its place (a Python dict), with the new tensor.
    auto [found, added] = tensor_index_.try_emplace(ToAbsl(tensor.name), tensors_.size());
    if (added) {
      tensors_.push_back(tensor);
    } else {
      tensors_[found->second] = tensor;
    }
  }

  // An op of the batch WriteCompute() is drawing: its texts (views that outlive the next node's
  // decoding) and its inputs' place in batch_inputs_.
  struct BatchedOp {
    std::string_view name;
    std::string_view type;
    ParsedOpLabel label;
    size_t first_input = 0;
    size_t input_count = 0;
  };
  // An input of a batched op: its tensor's name (a partition's "/_N" suffix dropped when only
  // the name without it is a tensor) and the tensor's index in tensors_.
  struct BatchedInput {
    std::string_view tensor_name;
    size_t tensor = kNoTensor;
  };
  static constexpr size_t kNoTensor = SIZE_MAX;
  // Ops drawn per batch: their inputs' tensors are looked up ahead of drawing them, so that the
  // lookups' cache misses (a million-tensor table, the names in the mapped input) overlap.
  static constexpr size_t kComputeBatch = 32;

  // timeline.py's _show_compute: op events in stored order, and a flow from each input's
  // producer to the op unless both sit on the same row.
  void WriteCompute(const StepStatsRun &run) {
    for (const RunDevice &run_device : run_.devices) {
      const Device &device = *run_device.device;
      for (size_t first = 0; first < run_device.ops.size(); first += kComputeBatch) {
        const size_t count = std::min(kComputeBatch, run_device.ops.size() - first);
        batch_.resize(count);
        batch_inputs_.clear();
        batch_texts_.clear();
        // The batch's labels, and a prefetch of each input's slot in the tensor table.
        for (size_t offset = 0; offset < count; ++offset) {
          BatchedOp &batched = batch_[offset];
          batched = BatchedOp{};
          DescribeOp(run, run_device, first + offset, &batched);
          batched.first_input = batch_inputs_.size();
          ForEachLabelInput(batched.label, [&](std::string_view input) {
            tensor_index_.prefetch(ToAbsl(input));
            batch_inputs_.push_back({input, kNoTensor});
          });
          batched.input_count = batch_inputs_.size() - batched.first_input;
        }
        // Their tensors, each prefetched in turn.
        for (BatchedInput &input : batch_inputs_) {
          input.tensor = FindTensor(&input.tensor_name);
          if (input.tensor != kNoTensor) __builtin_prefetch(&tensors_[input.tensor], 1);
        }
        for (size_t offset = 0; offset < count; ++offset) {
          const BatchedOp &batched = batch_[offset];
          const DrawnOp &op = run_device.ops[first + offset];
          WriteEvent([&](EventText &text) {
            EventHead(text, 'X', "Op", batched.type, device.compute_pid, op.tid, op.begin_ns);
            text.Literal(",\"dur\":");
            Time(text, op.end_ns - op.begin_ns);
            text.Literal(",\"args\":{\"name\":");
            text.JsonString(batched.name);
            text.Literal(",\"op\":");
            text.JsonString(batched.type);
            int64_t input_number = 0;
            ForEachLabelInput(batched.label, [&](std::string_view input) {
              text.Literal(",\"input");
              text.Int(input_number++);
              text.Literal("\":");
              text.JsonString(input);
            });
            text.Literal("}}");
          });
          for (size_t input = 0; input < batched.input_count; ++input) {
            ConsumeInput(batch_inputs_[batched.first_input + input], device, op);
          }
        }
      }
    }
  }

  // The `index`th op's name, type and label, as timeline.py reads them.
  void DescribeOp(const StepStatsRun &run, const RunDevice &run_device, size_t index,
                  BatchedOp *op) {
    const NodeFields &stats = Node(run, run_device, index, NodeParts::kNames);
    // Views of the message stay; the generated parser's texts go at the next node: kept.
    const std::string_view node_name = Keep(run, stats.node_name, batch_texts_);
    const std::string_view timeline_label = Keep(run, stats.timeline_label, batch_texts_);
    op->name = node_name;
    if (run_device.device->gpu_trace) {
      const KernelOpName kernel = ParseKernelLabel(timeline_label, node_name);
      op->name = kernel.name;
      op->type = kernel.type;
    } else if (node_name == "RecvTensor") {
      op->type = "RecvTensor";  // RPC tracing writes no executor label
    } else {
      op->label = ParseHostOpLabel(timeline_label);
      op->type = op->label.type;
    }
  }

  // The tensor an input names (tensors_'s index, else kNoTensor); a name that is none may be a
  // partition's stand-in, "x/_12" for "x", and then `*name` becomes the tensor's.
  size_t FindTensor(std::string_view *name) const {
    auto found = tensor_index_.find(ToAbsl(*name));
    if (found == tensor_index_.end()) {
      // Partitioning inserted a Send/Recv: "x/_12" stands for "x".
      const size_t suffix = name->rfind("/_");
      if (suffix == std::string_view::npos || suffix == 0) return kNoTensor;
      found = tensor_index_.find(ToAbsl(name->substr(0, suffix)));
      if (found == tensor_index_.end()) return kNoTensor;
      *name = name->substr(0, suffix);
    }
    return found->second;
  }

  void ConsumeInput(const BatchedInput &input, const Device &device, const DrawnOp &op) {
    if (input.tensor == kNoTensor) return;
    Tensor &tensor = tensors_[input.tensor];
    tensor.last_unref_ns = std::max(tensor.last_unref_ns, op.end_ns - kMicro);
    if (!options_.show_dataflow) return;
    if (tensor.flow_pid == device.compute_pid && tensor.flow_tid == op.tid) return;
    const int64_t flow_id = next_flow_id_++;
    WriteIdEvent('s', "DataFlow", input.tensor_name, tensor.flow_pid, tensor.flow_tid,
                 tensor.flow_ns, flow_id);
    WriteIdEvent('t', "DataFlow", input.tensor_name, device.compute_pid, op.tid, op.begin_ns,
                 flow_id);
  }

  // timeline.py's _show_memory_counters: each tensor's deletion, then per allocator (in the order
  // tensors first name them) the running total of live bytes at every allocation and free.
  void WriteMemory() {
    std::vector<std::string_view> allocators;
    absl::flat_hash_map<std::string_view, std::vector<std::tuple<int64_t, int64_t, std::string_view>>>
        changes;
    for (const Tensor &tensor : tensors_) {
      WriteIdEvent('D', "Tensor", tensor.name, tensor.pid, 0, tensor.last_unref_ns,
                   tensor.object_id);
      auto [found, added] = changes.try_emplace(tensor.allocator);
      if (added) allocators.push_back(tensor.allocator);
      found->second.emplace_back(tensor.create_ns, tensor.bytes, tensor.name);
      found->second.emplace_back(tensor.last_unref_ns, -tensor.bytes, tensor.name);
    }
    for (std::string_view allocator : allocators) {
      std::vector<std::tuple<int64_t, int64_t, std::string_view>> &list = changes[allocator];
      std::sort(list.begin(), list.end());
      int64_t total = 0;
      for (const auto &change : list) {
        const int64_t ns = std::get<0>(change);
        const int64_t bytes = std::get<1>(change);
        // Sizes come from the file: saturate rather than overflow on absurd ones.
        if (__builtin_add_overflow(total, bytes, &total)) {
          total = bytes > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
        }
        WriteEvent([&](EventText &text) {
          EventHead(text, 'C', "Memory", allocator, input_.allocators_pid, 0, ns);
          text.Literal(",\"args\":{");
          text.JsonString(allocator);
          text.Add(':');
          text.Int(total);
          text.Literal("}}");
        });
      }
    }
  }

  OutputSink &sink_;
  const TimelineOptions &options_;
  bool first_event_ = true;
  std::string event_;  // the event being formatted, reused
  MicrosFormatter timestamps_;
  Input input_;
  int64_t next_pid_ = 0;
  int64_t next_flow_id_ = 0;
  int64_t next_overlap_tid_ = kOverlapRowTidBase;
  int64_t object_id_base_ = 0;
  RunState run_;
  NodeExecStatsParser nodes_;  // the node being read
  std::vector<Tensor> tensors_;  // this run's, in timeline.py's dict order
  absl::flat_hash_map<absl::string_view, size_t> tensor_index_;  // views of the tensors' names
  std::deque<std::string> run_texts_;  // this run's tensor texts not in its message (Keep())
  std::deque<std::string> batch_texts_;  // likewise, the current batch's op texts
  std::vector<BatchedOp> batch_;             // WriteCompute()'s, reused
  std::vector<BatchedInput> batch_inputs_;
  std::vector<std::pair<Tensor, std::string_view>> batch_tensors_;  // ProduceTensors()'s, reused
};

// Process-name prefixes for a merge: each input's file name, or its whole path where two inputs
// share a file name. A single input gets none, so its names are timeline.py's.
std::vector<std::string> InputLabels(const std::vector<std::string> &inputs) {
  std::vector<std::string> labels;
  if (inputs.size() == 1) return {std::string()};
  absl::flat_hash_map<std::string, int> counts;
  for (const std::string &input : inputs) {
    ++counts[std::filesystem::path(input).lexically_normal().filename().string()];
  }
  for (const std::string &input : inputs) {
    const std::string name = std::filesystem::path(input).lexically_normal().filename().string();
    labels.push_back(name.empty() || counts[name] > 1 ? input : name);
  }
  return labels;
}

std::string SummaryJson(const std::vector<TimelineInput> &inputs,
                        const std::vector<std::string> &formats, const std::vector<size_t> &runs,
                        const std::vector<std::string> &errors, const TimelineOptions &options) {
  std::string json = absl::StrCat("{\"version\":", QuotedJson(prof_version_string()),
                                  ",\"converted_from\":[");
  for (size_t index = 0; index < inputs.size(); ++index) {
    const TimelineInput &input = inputs[index];
    absl::StrAppend(&json, index == 0 ? "" : ",", "{\"path\":", QuotedJson(input.path),
                    ",\"format\":", formats[index].empty() ? "null" : QuotedJson(formats[index]),
                    ",\"runs\":", runs[index]);
    if (!errors[index].empty()) absl::StrAppend(&json, ",\"error\":", QuotedJson(errors[index]));
    json += "}";
  }
  absl::StrAppend(&json, "],\"rows\":",
                  options.rows == TimelineOptions::Rows::kLanes ? "\"lanes\"" : "\"threads\"",
                  ",\"timestamps\":\"wall-clock microseconds since the Unix epoch\"}");
  return json;
}

}  // namespace

absl::Status WriteTimelineLayout(const std::vector<TimelineInput> &inputs,
                                 const TimelineOptions &options, bool salvage, OutputSink &sink,
                                 ProgressListener *progress, std::vector<std::string> *damage,
                                 std::vector<std::string> *cut_inputs) {
  TimelineWriter writer(sink, options);
  std::vector<std::string> paths;
  for (const TimelineInput &input : inputs) paths.push_back(input.path);
  const std::vector<std::string> labels = InputLabels(paths);
  std::vector<size_t> runs(inputs.size(), 0);
  std::vector<std::string> errors(inputs.size());
  std::vector<std::string> formats(inputs.size());
  for (size_t index = 0; index < inputs.size(); ++index) {
    const TimelineInput &input = inputs[index];
    const std::string what = absl::StrCat("reading ", input.path);
    const auto draw = [&](const StepStatsRun &run) -> absl::Status {
      if (absl::Status read = writer.ReadRun(run); !read.ok()) return read;
      if (runs[index]++ == 0) writer.BeginInput(labels[index]);
      writer.DrawRun(run);
      if (progress != nullptr) progress->Update(what, run.offset, 0);
      return absl::OkStatus();
    };
    absl::Status status;
    if (input.encode) {
      // The engine's own records, whole: drawn as they come.
      StepStatsRun run;
      run.file = input.path;
      uint64_t offset = 0;
      status = input.encode(&formats[index], [&](std::string_view records) {
        TfRecordReader reader(records);
        std::string_view record;
        for (uint64_t at = 0; status.ok() && reader.Next(&record).ok(); at = reader.offset()) {
          run.message = record;
          run.offset = offset + at;
          status = draw(run);
          ++run.index;
        }
        offset += records.size();
      });
      if (progress != nullptr) progress->Finish();
      if (!status.ok()) return status;
      continue;
    }
    absl::StatusOr<std::unique_ptr<StepStatsReader>> reader = StepStatsReader::Open(input.path);
    if (reader.ok()) {
      formats[index] = FormatName((*reader)->format());
      StepStatsRun run;
      while ((status = (*reader)->Next(&run)).ok()) {
        if (status = draw(run); !status.ok()) break;
      }
      if (absl::IsOutOfRange(status)) status = absl::OkStatus();
    } else {
      status = reader.status();
    }
    if (progress != nullptr) progress->Finish();
    if (status.ok()) continue;
    // A TFRecord or event file that ends early lost its cut record only: every run before it is
    // a whole step, drawn.
    if (const std::optional<CutFacts> cut = FileEndsEarly(status);
        cut && !cut->steps_may_be_partial && cut_inputs != nullptr) {
      cut_inputs->push_back(absl::StrCat(
          cut->file.empty() ? input.path : cut->file, ": the file ends at byte ", cut->file_bytes,
          " (", cut->problem, ": cut while being written?); recovered to its last whole step: kept ",
          runs[index], runs[index] == 1 ? " run" : " runs", "; dropped the cut record"));
      continue;
    }
    // Damage fails the conversion unless salvaging; unreadable files always do.
    if (!salvage || !absl::IsDataLoss(status)) return status;
    errors[index] = std::string(status.message());
    damage->push_back(errors[index]);
  }
  writer.Finish(SummaryJson(inputs, formats, runs, errors, options));
  return absl::OkStatus();
}

}  // namespace tfprof
