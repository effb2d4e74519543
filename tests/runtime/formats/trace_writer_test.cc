// The writers of `tfprof convert` and `tfprof merge`: a Trace as Chrome JSON and as
// TensorFlow RunMetadata / TFRecord / event files, the step each activity belongs to, merging
// traces onto one wall-clock timeline, and where the output goes.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/common/string_view_bridge.h"
#include "support/model_builders.h"
#include "support/test_files.h"
#include "tfprof/tensorflow/run_metadata.pb.h"
#include "runtime/model/trace.h"
#include "runtime/model/step_index.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/formats/tensorflow/step_stats_trace_writer.h"

namespace tfprof::cli {
namespace {

using tfprof_test::ProcessOf;
using tfprof_test::StepOf;


using tfprof_test::ReadFile;
using tfprof_test::TempDir;
using Json = nlohmann::json;

constexpr int64_t kWallOffset = 1'700'000'000'000'000'000;  // ns: the trace's clock 0 in Unix time

// A small trace as the loader would make it of a tfprof file: a host process (pid 4242, one
// thread) with steps 1 and 2, and GPU 0 (pid 0) with one stream.
Trace SampleTrace() {
  Trace trace;
  trace.path = "sample.json";
  trace.producer = Producer::kTfprof;
  trace.processes = {ProcessOf(4242, "python"), ProcessOf(0, "GPU 0")};
  Track main_thread;
  main_thread.process = 0;
  main_thread.tid = 4243;
  main_thread.name = "MainThread";
  Track stream;
  stream.process = 1;
  stream.tid = 7;
  stream.name = "stream 7";
  stream.kind = TrackKind::kGpuStream;
  stream.device = 0;
  stream.stream = 7;
  trace.tracks = {main_thread, stream};
  const auto add = [&](std::string_view name, uint32_t track, int64_t begin, int64_t end,
                       ActivityKind kind) -> Activity & {
    Activity activity;
    activity.name = trace.names.Intern(name);
    activity.track = track;
    activity.begin_ns = begin;
    activity.end_ns = end;
    activity.kind = kind;
    trace.activities.push_back(activity);
    return trace.activities.back();
  };
  add("dense/MatMul:MatMul", 0, 1'000'500, 1'200'250, ActivityKind::kHostOp);
  add("volta_sgemm_128x64_nn", 1, 1'100'000, 1'150'001, ActivityKind::kKernel);
  Activity &copy = add("Memcpy HtoD (Pageable -> Device)", 1, 2'100'000, 2'100'900, ActivityKind::kMemcpy);
  copy.bytes = 4096;
  copy.copy = CopyKind::kHostToDevice;
  add("optimizer", 0, 2'000'000, 2'500'000, ActivityKind::kHostOp);
  add("prefetch", 0, 1'900'000, 2'300'000, ActivityKind::kRange);
  add("aten::mm", 0, 1'300'000, 1'400'000, ActivityKind::kHostOp);
  add("save_checkpoint", 0, 3'500'000, 3'600'000, ActivityKind::kHostOp);  // after every step
  trace.steps = {StepOf(1, 1'000'000, 2'000'000, 0), StepOf(2, 2'000'000, 3'000'000, 0)};
  trace.wall_offset_ns = kWallOffset;
  trace.pid = 4242;
  trace.hostname = "node-1";
  trace.rank = 3;
  trace.losses.reported = true;
  trace.losses.dropped_events = 5;
  AssignSteps(trace);  // as the readers do
  return trace;
}

std::string StatusText(const absl::Status &status) { return std::string(ToStd(status.message())); }

WrittenTrace Write(const Trace &trace, const std::string &path, Format format) {
  absl::StatusOr<WrittenTrace> written = WriteTrace(trace, path, format);
  INFO(StatusText(written.status()));
  REQUIRE(written.ok());
  return *written;
}

// Events of a Chrome trace by phase and name.
std::vector<Json> EventsNamed(const Json &trace, std::string_view phase, std::string_view name) {
  std::vector<Json> found;
  for (const Json &event : trace["traceEvents"]) {
    if (event["ph"] == phase && event["name"] == name) found.push_back(event);
  }
  return found;
}

std::vector<std::string_view> Records(const std::string &bytes) {
  std::vector<std::string_view> records;
  TfRecordReader reader(bytes);
  std::string_view record;
  absl::Status status;
  while ((status = reader.Next(&record)).ok()) records.push_back(record);
  CHECK(absl::IsOutOfRange(status));
  return records;
}

// Node names per device of a RunMetadata.
std::map<std::string, std::vector<std::string>> NodesByDevice(const tensorflow::RunMetadata &run) {
  std::map<std::string, std::vector<std::string>> nodes;
  for (const tensorflow::DeviceStepStats &device : run.step_stats().dev_stats()) {
    for (const tensorflow::NodeExecStats &node : device.node_stats()) {
      nodes[device.device()].push_back(node.node_name());
    }
  }
  return nodes;
}

const tensorflow::NodeExecStats *FindNode(const tensorflow::RunMetadata &run, std::string_view name) {
  for (const tensorflow::DeviceStepStats &device : run.step_stats().dev_stats()) {
    for (const tensorflow::NodeExecStats &node : device.node_stats()) {
      if (node.node_name() == name) return &node;
    }
  }
  return nullptr;
}

constexpr char kHost[] = "/job:localhost/replica:0/task:0/device:CPU:0";

TEST_CASE("trace writer: Chrome JSON keeps processes, rows, steps, kinds and the wall clock") {
  TempDir dir;
  const Trace trace = SampleTrace();
  Write(trace, dir.File("out.json"), Format::kChromeJson);
  const Json json = Json::parse(ReadFile(dir.File("out.json")));

  const Json &header = json["tfprof"];
  CHECK(header["start_time_unix_ns"].get<int64_t>() - header["start_time_monotonic_ns"].get<int64_t>() ==
        kWallOffset);
  CHECK(header["pid"] == 4242);
  CHECK(header["hostname"] == "node-1");
  CHECK(json["distributedInfo"]["rank"] == 3);
  CHECK(json["dropped_events"] == 5);

  CHECK(EventsNamed(json, "M", "process_name").size() == 2);
  std::map<int64_t, std::string> process_names;
  std::map<std::pair<int64_t, int64_t>, std::string> row_names;
  for (const Json &event : json["traceEvents"]) {
    if (event["ph"] != "M") continue;
    if (event["name"] == "process_name") process_names[event["pid"]] = event["args"]["name"];
    if (event["name"] == "thread_name") row_names[{event["pid"], event["tid"]}] = event["args"]["name"];
  }
  CHECK(process_names == std::map<int64_t, std::string>{{0, "GPU 0"}, {4242, "python"}});
  CHECK(row_names[{4242, 2000000000}] == "Steps");
  CHECK(row_names[{4242, 4243}] == "MainThread");
  CHECK(row_names[{0, 7}] == "stream 7");

  const std::vector<Json> steps = EventsNamed(json, "X", "step 1");
  REQUIRE(steps.size() == 1);
  CHECK(steps[0]["cat"] == "step");
  CHECK(steps[0]["tid"] == 2000000000);
  CHECK(steps[0]["args"]["step"] == 1);

  const std::vector<Json> matmul = EventsNamed(json, "X", "dense/MatMul:MatMul");
  REQUIRE(matmul.size() == 1);
  CHECK(matmul[0]["cat"] == "user_annotation");
  CHECK(matmul[0]["pid"] == 4242);
  CHECK(matmul[0]["tid"] == 4243);
  CHECK(matmul[0]["ts"].get<double>() == doctest::Approx(1000.5));
  CHECK(matmul[0]["dur"].get<double>() == doctest::Approx(199.75));
  CHECK(matmul[0]["args"]["step"] == 1);

  const std::vector<Json> kernel = EventsNamed(json, "X", "volta_sgemm_128x64_nn");
  REQUIRE(kernel.size() == 1);
  CHECK(kernel[0]["cat"] == "kernel");
  CHECK(kernel[0]["dur"].get<double>() == doctest::Approx(50.001));
  CHECK(kernel[0]["args"]["stream"] == 7);
  CHECK(kernel[0]["args"]["device"] == 0);
  CHECK(kernel[0]["args"]["step"] == 1);  // the host's step, from another process

  const std::vector<Json> copy = EventsNamed(json, "X", "Memcpy HtoD (Pageable -> Device)");
  REQUIRE(copy.size() == 1);
  CHECK(copy[0]["cat"] == "gpu_memcpy");
  CHECK(copy[0]["args"]["bytes"] == 4096);
  CHECK(copy[0]["args"]["kind"] == "HtoD");
  CHECK(copy[0]["args"]["step"] == 2);

  const std::vector<Json> range_begin = EventsNamed(json, "b", "prefetch");
  const std::vector<Json> range_end = EventsNamed(json, "e", "prefetch");
  REQUIRE(range_begin.size() == 1);
  REQUIRE(range_end.size() == 1);
  CHECK(range_begin[0]["id"] == range_end[0]["id"]);
  CHECK(range_end[0]["ts"].get<double>() == doctest::Approx(2300.0));

  const std::vector<Json> outside = EventsNamed(json, "X", "save_checkpoint");
  REQUIRE(outside.size() == 1);
  CHECK_FALSE(outside[0].contains("args"));
}

TEST_CASE("trace writer: Chrome JSON without wall-clock time says so, and .json.gz is gzip") {
  TempDir dir;
  Trace trace = SampleTrace();
  trace.wall_offset_ns.reset();
  trace.losses = TraceLosses{};
  Write(trace, dir.File("out.json.gz"), Format::kChromeJsonGzip);
  const Json json = Json::parse(tfprof_test::Gunzip(dir.File("out.json.gz")));
  CHECK_FALSE(json["tfprof"].contains("start_time_unix_ns"));
  CHECK_FALSE(json.contains("dropped_events"));
  CHECK(json["tfprof"]["timestamps"].get<std::string>().find("no wall-clock") != std::string::npos);
  CHECK(EventsNamed(json, "X", "optimizer").size() == 1);
}

TEST_CASE("trace writer: colliding pids and rows are renumbered, never shared") {
  TempDir dir;
  Trace trace = SampleTrace();
  trace.processes[1].pid = 4242;  // two processes with one pid
  Track twin = trace.tracks[0];   // and two rows with one tid
  trace.tracks.push_back(twin);
  trace.activities[3].track = 2;
  Write(trace, dir.File("out.json"), Format::kChromeJson);
  const Json json = Json::parse(ReadFile(dir.File("out.json")));
  std::set<int64_t> pids;
  std::set<std::pair<int64_t, int64_t>> rows;
  size_t thread_names = 0;
  for (const Json &event : json["traceEvents"]) {
    if (event["name"] == "process_name") pids.insert(event["pid"].get<int64_t>());
    if (event["name"] == "thread_name") {
      ++thread_names;
      rows.insert({event["pid"].get<int64_t>(), event["tid"].get<int64_t>()});
    }
  }
  CHECK(pids.size() == 2);
  CHECK(rows.size() == thread_names);
  const std::vector<Json> moved = EventsNamed(json, "X", "optimizer");
  REQUIRE(moved.size() == 1);
  CHECK(moved[0]["tid"] == 1000000002);
}

TEST_CASE("trace writer: a RunMetadata holds every step, the runtime's devices and wall-clock times") {
  TempDir dir;
  const Trace trace = SampleTrace();
  const WrittenTrace written = Write(trace, dir.File("out.pb"), Format::kRunMetadata);
  CHECK(written.notes.empty());
  tensorflow::RunMetadata run;
  REQUIRE(run.ParseFromString(ReadFile(dir.File("out.pb"))));
  const std::map<std::string, std::vector<std::string>> nodes = NodesByDevice(run);
  // "prefetch" crosses the end of step 1: it belongs to no step (step_index.h).
  CHECK(nodes.at(kHost) == std::vector<std::string>{"step_000001", "dense/MatMul", "aten::mm",
                                                    "step_000002", "optimizer", "prefetch",
                                                    "save_checkpoint", "tfprof/losses"});
  CHECK(nodes.at("/device:GPU:0/stream:all") == std::vector<std::string>{"volta_sgemm_128x64_nn"});
  CHECK(nodes.at("/device:GPU:0/stream:7") ==
        std::vector<std::string>{"volta_sgemm_128x64_nn", "MemcpyHtoD"});
  CHECK(nodes.at("/device:GPU:0/memcpy") == std::vector<std::string>{"MemcpyHtoD"});
  CHECK(run.step_stats().dev_stats(0).device() == kHost);  // the host first, as TensorFlow's

  const tensorflow::NodeExecStats *matmul = FindNode(run, "dense/MatMul");
  REQUIRE(matmul != nullptr);
  CHECK(matmul->timeline_label() == "dense/MatMul = MatMul()");
  CHECK(matmul->all_start_micros() == (kWallOffset + 1'000'500) / 1000);
  CHECK(matmul->all_start_nanos() == kWallOffset + 1'000'500);
  CHECK(matmul->all_end_rel_nanos() == 199'750);
  CHECK(matmul->all_end_rel_micros() == 1200 - 1000);
  CHECK(matmul->thread_id() == 4243);
  const tensorflow::NodeExecStats *scoped = FindNode(run, "aten::mm");  // no name:Type split
  REQUIRE(scoped != nullptr);
  CHECK(scoped->timeline_label() == "aten::mm = aten::mm()");
  const tensorflow::NodeExecStats *step = FindNode(run, "step_000001");
  REQUIRE(step != nullptr);
  CHECK(step->timeline_label() == "step_000001 = TrainingStep()");
  CHECK(step->all_end_rel_nanos() == 1'000'000);
  const tensorflow::NodeExecStats *copy = FindNode(run, "MemcpyHtoD");
  REQUIRE(copy != nullptr);
  CHECK(copy->timeline_label() == "MemcpyHtoD bytes:4096");
  const tensorflow::NodeExecStats *losses = FindNode(run, "tfprof/losses");
  REQUIRE(losses != nullptr);
  CHECK(losses->timeline_label().find("dropped_events=5") != std::string::npos);
  const auto &thread_names = run.step_stats().dev_stats(0).thread_names();
  CHECK(thread_names.at(4243) == "MainThread");
  CHECK(thread_names.at(0) == "tfprof");
}

TEST_CASE("trace writer: a TFRecord holds one RunMetadata per step, then the rest") {
  TempDir dir;
  const Trace trace = SampleTrace();
  Write(trace, dir.File("out.tfrecord"), Format::kTfRecord);
  const std::string bytes = ReadFile(dir.File("out.tfrecord"));
  const std::vector<std::string_view> records = Records(bytes);
  REQUIRE(records.size() == 3);
  std::vector<std::map<std::string, std::vector<std::string>>> runs;
  for (std::string_view record : records) {
    tensorflow::RunMetadata run;
    REQUIRE(run.ParseFromString(std::string(record)));
    runs.push_back(NodesByDevice(run));
  }
  CHECK(runs[0].at(kHost) == std::vector<std::string>{"step_000001", "dense/MatMul", "aten::mm"});
  CHECK(runs[0].at("/device:GPU:0/stream:7") == std::vector<std::string>{"volta_sgemm_128x64_nn"});
  CHECK(runs[1].at(kHost) == std::vector<std::string>{"step_000002", "optimizer"});
  CHECK(runs[1].at("/device:GPU:0/memcpy") == std::vector<std::string>{"MemcpyHtoD"});
  CHECK(runs[2].at(kHost) ==
        std::vector<std::string>{"prefetch", "save_checkpoint", "tfprof/losses"});
  CHECK_FALSE(runs[2].contains("/device:GPU:0/stream:7"));
}

TEST_CASE("trace writer: encoded to a consumer, a large .tfrecord comes in chunks of whole records") {
  // Thousands of steps of long-named ops: several megabytes of records, which the TensorFlow writer
  // hands over record by record (the timeline layout draws each chunk as it comes).
  Trace trace = SampleTrace();
  trace.steps.clear();
  trace.activities.clear();
  const std::string long_name(200, 'x');
  for (int64_t step = 0; step < 3000; ++step) {
    const int64_t begin = 10'000'000 + step * 1'000'000;
    trace.steps.push_back(StepOf(step, begin, begin + 900'000, 0));
    for (int op = 0; op < 10; ++op) {
      Activity activity;
      activity.name = trace.names.Intern(long_name + std::to_string(op));
      activity.track = 0;
      activity.begin_ns = begin + op * 10'000;
      activity.end_ns = activity.begin_ns + 5'000;
      trace.activities.push_back(activity);
    }
  }
  AssignSteps(trace);
  std::vector<std::string> chunks;
  EncodeTrace(trace, Format::kTfRecord, [&](std::string_view bytes) { chunks.emplace_back(bytes); });
  REQUIRE(chunks.size() > 2);
  std::string joined;
  size_t records = 0;
  for (const std::string &chunk : chunks) {
    records += Records(chunk).size();  // each chunk parses to its end: whole records only
    joined += chunk;
  }
  CHECK(records == 3000);  // a record per step (the losses ride in the last: nothing is outside)
  TempDir dir;
  Write(trace, dir.File("same.tfrecord"), Format::kTfRecord);
  CHECK(joined == ReadFile(dir.File("same.tfrecord")));  // the file's bytes exactly
}

TEST_CASE("trace writer: an event file in a log directory: version, graph, a tagged run per step") {
  TempDir dir;
  Trace trace = SampleTrace();
  trace.steps.push_back(StepOf(2, 3'000'000, 3'100'000, 0));  // a repeated step number
  const WrittenTrace written =
      Write(trace, dir.File("logs") + "/", Format::kTensorBoard);
  const std::string file = std::filesystem::path(written.path).filename().string();
  CHECK(file.starts_with("events.out.tfevents.1700000000."));
  CHECK(std::filesystem::path(written.path).parent_path() == dir.path() / "logs");
  const std::string bytes = ReadFile(written.path);
  const std::vector<std::string_view> records = Records(bytes);
  // version, graph, then per step its tagged run and its scalars, then outside_steps.
  REQUIRE(records.size() == 9);
  std::vector<tensorflow::Event> events(records.size());
  for (size_t index = 0; index < records.size(); ++index) {
    REQUIRE(events[index].ParseFromString(std::string(records[index])));
  }
  CHECK(events[0].file_version() == "brain.Event:2");
  tensorflow::GraphDef graph;
  REQUIRE(graph.ParseFromString(events[1].graph_def()));
  std::map<std::string, std::string> ops;
  for (const tensorflow::NodeDef &node : graph.node()) ops[node.name()] = node.op();
  CHECK(ops == std::map<std::string, std::string>{{"aten::mm", "aten::mm"},
                                                  {"dense/MatMul", "MatMul"},
                                                  {"optimizer", "optimizer"},
                                                  {"prefetch", "prefetch"},
                                                  {"save_checkpoint", "save_checkpoint"}});
  CHECK(events[2].tagged_run_metadata().tag() == "step_000001");
  CHECK(events[2].step() == 1);
  CHECK(events[2].wall_time() == doctest::Approx(static_cast<double>(kWallOffset + 2'000'000) / 1e9));
  // Each step's scalars follow its run, at the same step: the step time first.
  REQUIRE(events[3].what_case() == tensorflow::Event::kSummary);
  CHECK(events[3].step() == 1);
  REQUIRE(events[3].summary().value_size() >= 1);
  CHECK(events[3].summary().value(0).tag() == "tfprof/step_time_ms");
  CHECK(events[3].summary().value(0).simple_value() ==
        doctest::Approx(static_cast<double>(trace.steps[0].end_ns - trace.steps[0].begin_ns) / 1e6));
  CHECK(events[4].tagged_run_metadata().tag() == "step_000002");
  CHECK(events[5].summary().value(0).tag() == "tfprof/step_time_ms");
  CHECK(events[6].tagged_run_metadata().tag() == "step_000002_2");
  CHECK(events[7].step() == 2);
  CHECK(events[8].tagged_run_metadata().tag() == "outside_steps");
  tensorflow::RunMetadata first;
  REQUIRE(first.ParseFromString(events[2].tagged_run_metadata().run_metadata()));
  CHECK(NodesByDevice(first).at(kHost) ==
        std::vector<std::string>{"step_000001", "dense/MatMul", "aten::mm"});
}

TEST_CASE("trace writer: after a dropped piece, an event file's next piece carries the graph again") {
  const Trace trace = SampleTrace();
  StepStatsTraceWriter writer(Format::kTensorBoard);
  const auto graphs_in = [&](bool last) {
    std::string out;
    writer.Append(trace, last, trace.steps.back().end_ns, out, {});
    int graphs = 0;
    for (std::string_view record : Records(out)) {
      tensorflow::Event event;
      REQUIRE(event.ParseFromString(std::string(record)));
      if (event.what_case() == tensorflow::Event::kGraphDef) ++graphs;
    }
    return graphs;
  };
  CHECK(graphs_in(false) == 1);  // the first piece brings the ops
  CHECK(graphs_in(false) == 0);  // the same ops again: the graph is written
  writer.Restart();              // ... but that piece was lost
  CHECK(graphs_in(true) == 1);
}

TEST_CASE("trace writer: GPU rows without a stream (TensorFlow 1's stream:all) stay on the shared device") {
  TempDir dir;
  Trace trace = SampleTrace();
  trace.tracks[1].stream = -1;
  trace.tracks[1].tid = -1;
  Write(trace, dir.File("out.pb"), Format::kRunMetadata);
  tensorflow::RunMetadata run;
  REQUIRE(run.ParseFromString(ReadFile(dir.File("out.pb"))));
  const std::map<std::string, std::vector<std::string>> nodes = NodesByDevice(run);
  CHECK(nodes.at("/device:GPU:0/stream:all") == std::vector<std::string>{"volta_sgemm_128x64_nn"});
  CHECK(nodes.at("/device:GPU:0/memcpy") == std::vector<std::string>{"MemcpyHtoD"});
  CHECK(nodes.size() == 3);  // and the host
}

// An instant on a GPU's row (a marker, with args) keeps its args as file args: its
// Activity::detail indexes those, and its node takes nothing from the GPU detail that has the
// same index (a kernel's op and thread, as it once did).
TEST_CASE("trace writer: an instant on a GPU row is its own node, not a kernel's op") {
  TempDir dir;
  Trace trace = SampleTrace();
  GpuDetail kernel_detail;
  kernel_detail.op = trace.names.Intern("dense/MatMul:MatMul");
  kernel_detail.thread_id = 4243;
  trace.activities[1].detail = trace.gpu_details.Add(ActivityKind::kKernel, kernel_detail);
  Activity marker;
  marker.name = trace.names.Intern("cache_flush");
  marker.track = 1;
  marker.begin_ns = marker.end_ns = 1'160'000;
  marker.kind = ActivityKind::kInstant;
  marker.detail = trace.file_args.Add(R"("bytes": 3)");
  REQUIRE(marker.detail == trace.activities[1].detail);  // both index 0, of other tables
  trace.activities.push_back(marker);
  AssignSteps(trace);
  Write(trace, dir.File("out.pb"), Format::kRunMetadata);
  tensorflow::RunMetadata run;
  REQUIRE(run.ParseFromString(ReadFile(dir.File("out.pb"))));
  const std::map<std::string, std::vector<std::string>> nodes = NodesByDevice(run);
  CHECK(nodes.at("/device:GPU:0/stream:7") ==
        std::vector<std::string>{"dense/MatMul", "cache_flush", "MemcpyHtoD"});
  const tensorflow::NodeExecStats *kernel = FindNode(run, "dense/MatMul");
  REQUIRE(kernel != nullptr);
  CHECK(kernel->thread_id() == 4243);
  const tensorflow::NodeExecStats *own = FindNode(run, "cache_flush");
  REQUIRE(own != nullptr);
  CHECK(own->thread_id() == 0);
}

TEST_CASE("trace writer: TensorFlow output names what it cannot hold") {
  TempDir dir;
  Trace trace = SampleTrace();
  trace.wall_offset_ns.reset();
  Activity annotation = trace.activities[1];
  annotation.kind = ActivityKind::kGpuAnnotation;
  trace.activities.push_back(annotation);
  const WrittenTrace written = Write(trace, dir.File("out.pb"), Format::kRunMetadata);
  REQUIRE(written.notes.size() == 2);
  CHECK(written.notes[0].find("no wall-clock time") != std::string::npos);
  CHECK(written.notes[1].find("1 GPU annotation span") != std::string::npos);
}

TEST_CASE("trace writer: a step of the activity's own process first, else any process's") {
  Trace trace;
  trace.processes = {ProcessOf(1, "a"), ProcessOf(2, "b"), ProcessOf(3, "gpu")};
  trace.steps = {StepOf(1, 100, 200, 0), StepOf(7, 150, 300, 1), StepOf(2, 200, 300, 0),
                 StepOf(3, 400, 400, 0)};
  const StepIndex membership(trace);
  CHECK(membership.Find(0, 99) == std::nullopt);
  CHECK(membership.Find(0, 100) == 0u);
  CHECK(membership.Find(0, 199) == 0u);
  CHECK(membership.Find(0, 200) == 2u);  // [begin, end)
  CHECK(membership.Find(1, 160) == 1u);
  CHECK(membership.Find(1, 120) == std::nullopt);  // its own steps only
  CHECK(membership.Find(2, 160) == 0u);            // no steps of its own: the first process's
  CHECK(membership.Find(2, 250) == 2u);
  CHECK(membership.Find(0, 400) == std::nullopt);  // an empty step holds nothing
}

TEST_CASE("trace writer: in a merged trace, a process without steps takes its own rank's") {
  Trace trace;
  // Rank 0: host "a" with a GPU; rank 1: host "b" with a GPU. Their steps overlap in time.
  trace.processes = {ProcessOf(1, "a"), ProcessOf(2, "a gpu"), ProcessOf(3, "b"),
                     ProcessOf(4, "b gpu")};
  trace.processes[2].group = trace.processes[3].group = 1;
  trace.steps = {StepOf(1, 100, 200, 0), StepOf(9, 100, 200, 2)};
  const StepIndex membership(trace);
  CHECK(membership.Find(1, 150) == 0u);
  CHECK(membership.Find(3, 150) == 1u);  // not rank 0's step, although it comes first
  CHECK(membership.FindInGroup(1, 150) == 1u);
  CHECK(membership.FindInGroup(2, 150) == std::nullopt);
}

TEST_CASE("trace writer: an output that cannot be written fails naming it and leaves nothing") {
  TempDir dir;
  const std::string path = dir.File("missing/out.json");
  absl::StatusOr<WrittenTrace> written =
      WriteTrace(SampleTrace(), path, Format::kChromeJson);
  CHECK(absl::IsUnavailable(written.status()));
  CHECK(StatusText(written.status()).find(path) != std::string::npos);
  CHECK(dir.Entries().empty());
}

TEST_CASE("trace writer: an event file's scalars per step: step time, counters, memory peaks") {
  TempDir dir;
  Trace trace = SampleTrace();  // steps 1 [1 ms, 2 ms) and 2 [2 ms, 3 ms)
  const auto sample = [&](int64_t ns, double value, std::string_view name) {
    trace.counters.push_back(CounterSample{ns, value, trace.names.Intern(name), 0,
                                           trace.names.Intern("value")});
  };
  sample(1'100'000, 100, "host memory bytes");  // a memory counter: a memory tag
  sample(1'200'000, 3.0, "loss");
  sample(1'500'000, 400, "host memory bytes");
  sample(1'800'000, 2.5, "loss");
  sample(1'900'000, 200, "host memory bytes");
  sample(2'500'000, 1.5, "loss");
  const WrittenTrace written = Write(trace, dir.File("logs") + "/", Format::kTensorBoard);
  std::map<int64_t, std::vector<std::pair<std::string, float>>> scalars;
  const std::string bytes = ReadFile(written.path);  // the records view it
  for (std::string_view record : Records(bytes)) {
    tensorflow::Event event;
    REQUIRE(event.ParseFromString(std::string(record)));
    if (event.what_case() != tensorflow::Event::kSummary) continue;
    for (const tensorflow::Summary::Value &value : event.summary().value()) {
      REQUIRE(value.value_case() == tensorflow::Summary::Value::kSimpleValue);
      scalars[event.step()].emplace_back(value.tag(), value.simple_value());
    }
  }
  // Step 2 has no memory sample: it holds the 200 bytes step 1 ended with.
  using Scalars = std::vector<std::pair<std::string, float>>;
  CHECK(scalars == std::map<int64_t, Scalars>{
                       {1, {{"tfprof/step_time_ms", 1.0f},
                            {"tfprof/counter/loss", 2.5f},
                            {"tfprof/memory/CPU/peak_bytes", 400.0f}}},
                       {2, {{"tfprof/step_time_ms", 1.0f},
                            {"tfprof/counter/loss", 1.5f},
                            {"tfprof/memory/CPU/peak_bytes", 200.0f}}}});
}

}  // namespace
}  // namespace tfprof::cli
