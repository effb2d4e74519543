// StepStats -> Chrome trace: timeline.py's processes, op events, lanes, flows and memory, the
// thread-row mode, merging runs and files, and salvaging damaged input. Every test parses the
// output and checks its events.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "runtime/convert/convert.h"
#include "support/step_stats_builder.h"
#include "support/test_files.h"

namespace tfprof {

namespace {

using nlohmann::json;
using tfprof_test::AddOp;
using tfprof_test::AddOutput;
using tfprof_test::Framed;
using tfprof_test::SmallRun;
using tfprof_test::TempDir;
using tfprof_test::WriteFile;

constexpr int64_t kStepsRowTid = 2000000000;

// The engine's options for layout=timeline and `text`.
ConvertOptions Options(const std::string &text) {
  absl::StatusOr<ConvertOptions> options = ParseConvertOptions("layout=timeline," + text);
  REQUIRE(options.ok());
  return *options;
}

// One input converted, several merged, as prof_convert() and prof_merge() do.
ConvertResult Run(const std::vector<std::string> &inputs, const std::string &output,
                  const ConvertOptions &options) {
  return inputs.size() == 1 ? ConvertTrace(inputs.front(), output, options, nullptr)
                            : MergeTraces(inputs, output, options, nullptr);
}

json Convert(const std::vector<std::string> &inputs, const std::string &output,
             const ConvertOptions &options) {
  const ConvertResult result = Run(inputs, output, options);
  INFO(result.status.message());
  REQUIRE(result.status.ok());
  REQUIRE(result.damage.empty());
  return json::parse(output.size() > 3 && output.substr(output.size() - 3) == ".gz"
                         ? tfprof_test::Gunzip(output)
                         : tfprof_test::ReadFile(output));
}

std::vector<json> Events(const json &trace, const std::string &phase,
                         const std::string &category = "") {
  std::vector<json> found;
  for (const json &event : trace["traceEvents"]) {
    if (event["ph"] == phase && (category.empty() || event.value("cat", "") == category)) {
      found.push_back(event);
    }
  }
  return found;
}

json Only(const std::vector<json> &events, const std::string &name) {
  std::vector<json> matches;
  for (const json &event : events) {
    if (event["name"] == name) matches.push_back(event);
  }
  INFO(name);
  REQUIRE(matches.size() == 1);
  return matches[0];
}

std::map<int64_t, std::string> ProcessNames(const json &trace) {
  std::map<int64_t, std::string> names;
  for (const json &event : Events(trace, "M")) {
    if (event["name"] == "process_name") names[event["pid"]] = event["args"]["name"];
  }
  return names;
}

std::map<int64_t, std::string> ThreadNames(const json &trace, int64_t pid) {
  std::map<int64_t, std::string> names;
  for (const json &event : Events(trace, "M")) {
    if (event["name"] == "thread_name" && event["pid"] == pid) names[event["tid"]] = event["args"]["name"];
  }
  return names;
}

const std::string kCpu = "/job:localhost/replica:0/task:0/device:CPU:0";

}  // namespace

TEST_CASE("converter: options parse like prof_start's and errors list what is accepted") {
  CHECK(Options("").timeline.show_dataflow);
  CHECK_FALSE(Options("").timeline.show_memory);
  CHECK(Options("").timeline.rows == TimelineOptions::Rows::kThreads);
  const ConvertOptions set = Options(" show_memory=on, show_dataflow=false,rows=lanes,salvage=YES,");
  CHECK(set.layout == ConvertOptions::Layout::kTimeline);
  CHECK(set.timeline.show_memory);
  CHECK_FALSE(set.timeline.show_dataflow);
  CHECK(set.timeline.rows == TimelineOptions::Rows::kLanes);
  CHECK(set.salvage);
  CHECK(ParseConvertOptions("").value().layout == ConvertOptions::Layout::kTfprof);
  CHECK(ParseConvertOptions("format=tfrecord").value().format == Format::kTfRecord);
  CHECK(ParseConvertOptions("align=start").value().align == MergeAlignment::kFirstEvent);
  CHECK(ParseConvertOptions("rows=fast").status().message() ==
        "option 'rows' at offset 0: 'fast' is not one of threads, lanes");
  CHECK(ParseConvertOptions("salvage=on,colour=red").status().message() ==
        "option 'colour' at offset 11: unknown key (known: layout, format, align, fold, salvage, "
        "tensorboard_profile, show_dataflow, show_memory, rows)");
  CHECK(ParseConvertOptions("fold=on").value().fold);
  CHECK(ParseConvertOptions("").value().tensorboard_profile);
  CHECK(!ParseConvertOptions("tensorboard_profile=off").value().tensorboard_profile);
  CHECK(ParseConvertOptions("format=xplane").value().format == Format::kXPlane);
  CHECK(ParseConvertOptions("show_memory=maybe").status().message() ==
        "option 'show_memory' at offset 0: 'maybe' is not one of on, off (also true/false, "
        "yes/no, 1/0)");
  CHECK(ParseConvertOptions("layout=kineto").status().message() ==
        "option 'layout' at offset 0: 'kineto' is not one of tfprof, timeline");
  CHECK(ParseConvertOptions("format=xml").status().message() ==
        "option 'format' at offset 0: 'xml' is not one of json, json.gz, pb, tfrecord, tensorboard, "
        "perfetto, xplane");
  CHECK(ParseConvertOptions("salvage=on,salvage=off").status().message() ==
        "option 'salvage' at offset 11: given twice");
}

TEST_CASE("converter: timeline options need layout=timeline, align needs a tfprof-layout merge") {
  TempDir dir;
  WriteFile(dir.File("run.pb"), SmallRun(10).SerializeAsString());
  const ConvertResult rows =
      ConvertTrace(dir.File("run.pb"), dir.File("out.json"), ParseConvertOptions("rows=lanes").value(), nullptr);
  CHECK(rows.stage == ConvertStage::kOptions);
  CHECK(std::string(rows.status.message()).find("need layout=timeline") != std::string::npos);
  const ConvertResult align = ConvertTrace(dir.File("run.pb"), dir.File("out.json"),
                                           ParseConvertOptions("align=start").value(), nullptr);
  CHECK(align.stage == ConvertStage::kOptions);
  CHECK(dir.Entries() == std::set<std::string>{"run.pb"});
}

TEST_CASE("converter: lanes mode reproduces timeline.py's processes, ops, lanes and flows") {
  TempDir dir;
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *cpu = run.mutable_step_stats()->add_dev_stats();
  cpu->set_device(kCpu);
  AddOutput(AddOp(cpu, "x", "x = Const()", 100, 10, 7), "cpu", 16);
  AddOutput(AddOp(cpu, "y", "y = Const()", 105, 20, 8), "cpu", 8);    // overlaps x: lane 1
  AddOp(cpu, "z", "z = Add(x, y/_3)", 120, 5, 7);                     // after x: lane 0
  AddOp(cpu, "w", "w = Neg(x)", 110, 1, 7);                            // x ended at 110: lane 2
  tensorflow::DeviceStepStats *gpu = run.mutable_step_stats()->add_dev_stats();
  gpu->set_device("/device:GPU:0/stream:all");
  AddOp(gpu, "k", "gemm regs:8@@dense/MatMul:MatMul#id=1#", 130, 3);
  AddOp(gpu, "m", "MEMCPYHtoD", 131, 1)->set_node_name("copy:MEMCPYHtoD");
  WriteFile(dir.File("run.pb"), run.SerializeAsString());

  const json trace = Convert({dir.File("run.pb")}, dir.File("out.json"), Options("rows=lanes"));
  CHECK(ProcessNames(trace) == std::map<int64_t, std::string>{
                                   {0, "Allocators"},
                                   {1, kCpu + " Compute"},
                                   {2, kCpu + " Tensors"},
                                   {3, "/device:GPU:0/stream:all Compute"},
                                   {4, "/device:GPU:0/stream:all Tensors"}});
  const std::vector<json> ops = Events(trace, "X", "Op");
  REQUIRE(ops.size() == 6);
  // Stored order, integer microseconds, name = type, args as timeline.py writes them.
  CHECK(ops[2] == json::parse(R"({"ph":"X","cat":"Op","name":"Add","pid":1,"tid":0,"ts":120,"dur":5,
                                  "args":{"name":"z","op":"Add","input0":"x","input1":"y/_3"}})"));
  CHECK(ops[0]["tid"] == 0);
  CHECK(ops[1]["tid"] == 1);
  CHECK(ops[3]["tid"] == 2);
  CHECK(ops[4] == json::parse(R"({"ph":"X","cat":"Op","name":"MatMul","pid":3,"tid":0,"ts":130,"dur":3,
                                  "args":{"name":"dense/MatMul","op":"MatMul"}})"));
  CHECK(ops[5]["name"] == "MEMCPYHtoD");
  CHECK(ops[5]["args"]["name"] == "copy");
  CHECK(ops[5]["tid"] == 1);  // 131 is not after the kernel's end (133)

  // Flows: x (lane 0) -> z (lane 0) is on one row: none. y (lane 1) -> z via "y/_3": one.
  // x (lane 0) -> w (lane 2): one. Producer end to consumer start.
  const std::vector<json> starts = Events(trace, "s");
  const std::vector<json> ends = Events(trace, "t");
  REQUIRE(starts.size() == 2);
  REQUIRE(ends.size() == 2);
  CHECK(starts[0] == json::parse(R"({"ph":"s","cat":"DataFlow","name":"y","pid":1,"tid":1,"ts":125,"id":0})"));
  CHECK(ends[0] == json::parse(R"({"ph":"t","cat":"DataFlow","name":"y","pid":1,"tid":0,"ts":120,"id":0})"));
  CHECK(starts[1]["name"] == "x");
  CHECK(starts[1]["ts"] == 110);
  CHECK(ends[1]["tid"] == 2);
  CHECK(ends[1]["id"] == 1);

  // The run is one span on each device's Steps row.
  const std::vector<json> steps = Events(trace, "X", "step");
  REQUIRE(steps.size() == 2);
  CHECK(steps[0]["name"] == "run 0");
  CHECK(steps[0]["tid"] == kStepsRowTid);
  CHECK(steps[0]["ts"] == 100);
  CHECK(steps[0]["dur"] == 33);
  CHECK(ThreadNames(trace, 1)[kStepsRowTid] == "Steps");

  CHECK(trace["tfprof"]["converted_from"][0]["runs"] == 1);
  CHECK(trace["tfprof"]["converted_from"][0]["format"] == "TensorFlow RunMetadata");

  const json no_flows = Convert({dir.File("run.pb")}, dir.File("no_flows.json"),
                                Options("rows=lanes,show_dataflow=off"));
  CHECK(Events(no_flows, "s").empty());
  CHECK(Events(no_flows, "X", "Op").size() == 6);
}

TEST_CASE("converter: show_memory gives tensor objects and running allocator totals") {
  TempDir dir;
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *cpu = run.mutable_step_stats()->add_dev_stats();
  cpu->set_device(kCpu);
  tensorflow::NodeExecStats *a = AddOp(cpu, "a", "a = Const()", 100, 10, 1);
  AddOutput(a, "cpu", 16);
  AddOutput(a, "gpu_host", 4);
  AddOutput(AddOp(cpu, "b", "b = Square(a)", 120, 10, 2), "cpu", 32);
  AddOp(cpu, "c", "c = Add(a, b, a:1)", 140, 10, 1);
  WriteFile(dir.File("run.pb"), run.SerializeAsString());

  const json trace = Convert({dir.File("run.pb")}, dir.File("out.json"),
                             Options("rows=lanes,show_memory=on"));
  const std::vector<json> created = Events(trace, "N");
  REQUIRE(created.size() == 3);
  CHECK(created[1] == json::parse(R"({"ph":"N","cat":"Tensor","name":"a:1","pid":2,"tid":0,"ts":100,"id":1})"));
  const json snapshot = Only(Events(trace, "O"), "b");
  CHECK(snapshot["ts"] == 129);
  CHECK(snapshot["args"]["snapshot"]["tensor_description"] ==
        "dtype: DT_FLOAT\nshape {\n  dim {\n    size: 8\n  }\n}\nallocation_description {\n"
        "  requested_bytes: 32\n  allocator_name: cpu\n}\n");
  // Deleted at the last consumer's end minus 1 µs (c ends at 150).
  CHECK(Only(Events(trace, "D"), "a")["ts"] == 149);
  CHECK(Only(Events(trace, "D"), "b")["ts"] == 149);

  std::vector<std::pair<int64_t, int64_t>> cpu_counter;
  for (const json &counter : Events(trace, "C", "Memory")) {
    CHECK(counter["pid"] == 0);
    if (counter["name"] == "cpu") cpu_counter.emplace_back(counter["ts"], counter["args"]["cpu"]);
  }
  CHECK(cpu_counter == std::vector<std::pair<int64_t, int64_t>>{{100, 16}, {120, 48}, {149, 16}, {149, 0}});
  std::vector<int64_t> gpu_host_counter;
  for (const json &counter : Events(trace, "C", "Memory")) {
    if (counter["name"] == "gpu_host") gpu_host_counter.push_back(counter["args"]["gpu_host"]);
  }
  CHECK(gpu_host_counter == std::vector<int64_t>{4, 0});
}

TEST_CASE("converter: absurd times and sizes from a file are clamped, never overflow") {
  // Found by fuzz_convert (tests/fuzz/corpus/regression_time_overflow.pb): start micros near
  // INT64_MAX overflowed the nanosecond conversion.
  TempDir dir;
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *cpu = run.mutable_step_stats()->add_dev_stats();
  cpu->set_device(kCpu);
  tensorflow::NodeExecStats *huge = AddOp(cpu, "huge", "huge = Const()", INT64_MAX / 2, INT64_MAX, 1);
  huge->set_all_start_nanos(INT64_MIN);
  huge->set_all_end_rel_nanos(INT64_MAX);
  AddOutput(huge, "cpu", INT64_MAX);
  AddOutput(AddOp(cpu, "tiny", "tiny = Neg(huge)", INT64_MIN, INT64_MIN, 1), "cpu", INT64_MIN);
  WriteFile(dir.File("run.pb"), run.SerializeAsString());
  for (const char *options : {"rows=lanes,show_memory=on", "rows=threads,show_memory=on"}) {
    const json trace = Convert({dir.File("run.pb")}, dir.File("out.json"), Options(options));
    REQUIRE(Events(trace, "X", "Op").size() == 2);
    const json op = Only(Events(trace, "X", "Op"), "Const");
    CHECK(op["ts"].get<double>() == doctest::Approx(3e15));  // clamped to +-3e15 us
    CHECK(op["dur"].get<double>() >= 0);
    for (const json &counter : Events(trace, "C", "Memory")) {
      CHECK(counter["args"]["cpu"].get<int64_t>() <= (int64_t{1} << 61));
    }
  }
}

TEST_CASE("converter: thread rows are real thread ids, named, split only on improper overlap") {
  TempDir dir;
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *cpu = run.mutable_step_stats()->add_dev_stats();
  cpu->set_device(kCpu);
  (*cpu->mutable_thread_names())[4242] = "input_pipeline";
  AddOp(cpu, "outer", "outer = While()", 100, 50, 4242);
  AddOutput(AddOp(cpu, "inner", "inner = Map()", 110, 10, 4242), "cpu", 4);  // nests in outer
  AddOp(cpu, "async", "async = Recv()", 140, 30, 4242);      // starts in outer, ends after it
  AddOp(cpu, "other", "other = Add(inner)", 200, 5, 77);     // an unnamed thread
  tensorflow::NodeExecStats *fast = AddOp(cpu, "fast", "fast = Identity()", 300, 0, 77);
  fast->set_all_start_nanos(300250);  // sub-microsecond precision kept
  fast->set_all_end_rel_nanos(400);
  WriteFile(dir.File("run.pb"), run.SerializeAsString());

  const json trace = Convert({dir.File("run.pb")}, dir.File("out.json"), Options(""));
  const std::map<int64_t, std::string> rows = ThreadNames(trace, 1);
  CHECK(rows.at(4242) == "input_pipeline");
  CHECK(rows.at(77) == "thread 77");
  CHECK(rows.at(kStepsRowTid) == "Steps");
  REQUIRE(rows.size() == 4);
  const std::vector<json> ops = Events(trace, "X", "Op");
  CHECK(Only(ops, "While")["tid"] == 4242);
  CHECK(Only(ops, "Map")["tid"] == 4242);
  const int64_t overlap_row = Only(ops, "Recv")["tid"];
  CHECK(rows.at(overlap_row) == "input_pipeline (overlap 1)");
  CHECK(Only(ops, "Identity")["ts"].get<double>() == doctest::Approx(300.25));
  CHECK(Only(ops, "Identity")["dur"].get<double>() == doctest::Approx(0.4));
  // A flow from inner (thread 4242) to other (thread 77).
  CHECK(Only(Events(trace, "s"), "inner")["tid"] == 4242);
  CHECK(Only(Events(trace, "t"), "inner")["tid"] == 77);
}

TEST_CASE("converter: many runs and files merge on one timeline, each run a named step span") {
  TempDir dir;
  // tfprof's own writer: a TrainingStep node per step.
  std::string records;
  for (int step = 1; step <= 3; ++step) {
    tensorflow::RunMetadata run = SmallRun(1000000 + step * 1000);
    tensorflow::DeviceStepStats *cpu = run.mutable_step_stats()->mutable_dev_stats(0);
    char name[32];
    std::snprintf(name, sizeof name, "step_%06d", step);
    AddOp(cpu, name, std::string(name) + " = TrainingStep()", 1000000 + step * 1000 - 5, 100, 11);
    records += Framed(run.SerializeAsString());
  }
  WriteFile(dir.File("steps.tfrecord"), records);
  // An event file from another process, with its own tags, and a second device.
  std::filesystem::create_directories(dir.path() / "worker");
  WriteFile(dir.File("worker/events.out.tfevents.5.w"),
            tfprof_test::FileVersionRecord() +
                tfprof_test::TaggedRecord(SmallRun(1001500, "/job:worker/task:0/device:CPU:0"),
                                          "train_step_a", 40));
  // And a bare StepStats: named by its record index.
  WriteFile(dir.File("single.pb"), SmallRun(1003500).step_stats().SerializeAsString());

  const json trace = Convert({dir.File("steps.tfrecord"), dir.File("worker"), dir.File("single.pb")},
                             dir.File("merged.json.gz"), Options(""));
  const std::map<int64_t, std::string> processes = ProcessNames(trace);
  CHECK(processes == std::map<int64_t, std::string>{
                         {0, "steps.tfrecord: Allocators"},
                         {1, "steps.tfrecord: " + kCpu + " Compute"},
                         {2, "steps.tfrecord: " + kCpu + " Tensors"},
                         {3, "worker: Allocators"},
                         {4, "worker: /job:worker/task:0/device:CPU:0 Compute"},
                         {5, "worker: /job:worker/task:0/device:CPU:0 Tensors"},
                         {6, "single.pb: Allocators"},
                         {7, "single.pb: " + kCpu + " Compute"},
                         {8, "single.pb: " + kCpu + " Tensors"}});
  std::vector<json> steps = Events(trace, "X", "step");
  REQUIRE(steps.size() == 5);
  std::sort(steps.begin(), steps.end(), [](const json &a, const json &b) { return a["ts"] < b["ts"]; });
  CHECK(steps[0]["name"] == "step_000001");
  CHECK(steps[0]["args"]["step"] == 1);
  CHECK(steps[0]["pid"] == 1);
  CHECK(steps[0]["ts"].get<double>() == doctest::Approx(1000995.0));  // the step node's extent
  CHECK(steps[0]["dur"].get<double>() == doctest::Approx(100.0));
  CHECK(steps[1]["name"] == "train_step_a");
  CHECK(steps[1]["args"]["step"] == 40);
  CHECK(steps[1]["pid"] == 4);
  CHECK(steps[2]["name"] == "step_000002");
  CHECK(steps[3]["name"] == "step_000003");
  CHECK(steps[3]["args"]["run"] == 2);
  CHECK(steps[4]["name"] == "run 0");
  CHECK(steps[4]["pid"] == 7);
  CHECK(steps[4]["ts"].get<double>() == doctest::Approx(1003500.0));
  CHECK(steps[4]["dur"].get<double>() == doctest::Approx(50.0));
  // 3 runs x 4 ops, 1 x 3, 1 x 3; each op at its own wall-clock time.
  CHECK(Events(trace, "X", "Op").size() == 18);
  std::set<int64_t> flow_ids;
  for (const json &flow : Events(trace, "s")) flow_ids.insert(flow["id"].get<int64_t>());
  CHECK(flow_ids.size() == Events(trace, "s").size());  // unique across runs and files
  CHECK(trace["tfprof"]["converted_from"].size() == 3);
  CHECK(trace["tfprof"]["converted_from"][1]["format"] == "TensorBoard event file");
}

TEST_CASE("converter: a whole session in one RunMetadata gives a step span per step node") {
  TempDir dir;
  tensorflow::RunMetadata run = SmallRun(1000);
  tensorflow::DeviceStepStats *cpu = run.mutable_step_stats()->mutable_dev_stats(0);
  AddOp(cpu, "step_000007", "step_000007 = TrainingStep()", 1000, 30, 11);
  AddOp(cpu, "step_000008", "step_000008 = TrainingStep()", 1030, 30, 11);
  WriteFile(dir.File("session.pb"), run.SerializeAsString());
  const json trace = Convert({dir.File("session.pb")}, dir.File("out.json"), Options(""));
  const std::vector<json> steps = Events(trace, "X", "step");
  REQUIRE(steps.size() == 2);
  CHECK(steps[0]["name"] == "step_000007");
  CHECK(steps[0]["args"]["step"] == 7);
  CHECK(steps[1]["name"] == "step_000008");
  CHECK(steps[1]["ts"].get<double>() == doctest::Approx(1030.0));
  CHECK(steps[1]["dur"].get<double>() == doctest::Approx(30.0));
}

TEST_CASE("converter: damage fails the conversion - salvage writes what was read before it") {
  TempDir dir;
  std::string records;
  for (int index = 0; index < 3; ++index) records += Framed(SmallRun(1000 * (index + 1)).SerializeAsString());
  const size_t third = 2 * records.size() / 3;
  std::string damaged = records;
  damaged[third + 20] = static_cast<char>(damaged[third + 20] ^ 0x40);  // in the third's data
  WriteFile(dir.File("bad.tfrecord"), damaged);
  WriteFile(dir.File("good.pb"), SmallRun(9000).SerializeAsString());

  const ConvertResult failed = Run({dir.File("bad.tfrecord")}, dir.File("out.json"), Options(""));
  CHECK(absl::IsDataLoss(failed.status));
  CHECK(failed.stage == ConvertStage::kReading);
  CHECK(std::string(failed.status.message()).rfind("'" + dir.File("bad.tfrecord") + "': record at byte offset " +
                                                std::to_string(third) + ": data CRC mismatch",
                                            0) == 0);
  CHECK(dir.Entries() == std::set<std::string>{"bad.tfrecord", "good.pb"});  // nothing written

  const ConvertResult salvaged =
      Run({dir.File("bad.tfrecord"), dir.File("good.pb")}, dir.File("out.json"), Options("salvage=on"));
  CHECK(salvaged.status.ok());
  REQUIRE(salvaged.damage.size() == 1);
  CHECK(salvaged.damage[0].find("data CRC mismatch") != std::string::npos);
  const json trace = json::parse(tfprof_test::ReadFile(dir.File("out.json")));
  CHECK(Events(trace, "X", "step").size() == 3);  // two from the damaged file, one from the good
  CHECK(Events(trace, "X", "Op").size() == 9);
  CHECK(trace["tfprof"]["converted_from"][0]["runs"] == 2);
  CHECK(std::string(trace["tfprof"]["converted_from"][0]["error"]).find("data CRC mismatch") !=
        std::string::npos);
  CHECK(trace["tfprof"]["converted_from"][1]["runs"] == 1);
}

TEST_CASE("converter: a file cut short (a killed writer) converts its whole runs, with a warning") {
  TempDir dir;
  std::string records;
  for (int index = 0; index < 3; ++index) records += Framed(SmallRun(1000 * (index + 1)).SerializeAsString());
  WriteFile(dir.File("cut.tfrecord"), records.substr(0, records.size() - 7));
  const ConvertResult converted = Run({dir.File("cut.tfrecord")}, dir.File("out.json"), Options(""));
  REQUIRE(converted.status.ok());
  CHECK(converted.damage.empty());
  REQUIRE(converted.cut_inputs.size() == 1);
  CHECK(converted.cut_inputs[0] ==
        dir.File("cut.tfrecord") + ": the file ends at byte " + std::to_string(records.size() - 7) +
            " (inside the last record: cut while being written?); recovered to its last whole "
            "step: kept 2 runs; dropped the cut record");
  const json trace = json::parse(tfprof_test::ReadFile(dir.File("out.json")));
  CHECK(Events(trace, "X", "step").size() == 2);
  CHECK(trace["tfprof"]["converted_from"][0]["runs"] == 2);
}

// A length-delimited protobuf field: its tag, its length (under 128 bytes here) and the bytes.
std::string LengthDelimited(int field, const std::string &bytes) {
  REQUIRE(bytes.size() < 128);
  return std::string{static_cast<char>(field << 3 | 2), static_cast<char>(bytes.size())} + bytes;
}

TEST_CASE("converter: a run with a damaged node is damage, and none of that run is drawn") {
  TempDir dir;
  // The second run gains a device whose only node has an output (field 7) cut inside: its
  // tensor description (field 3) declares 5 bytes where 2 remain. After a device of sound nodes.
  const std::string bad_node = LengthDelimited(1, "Op") + LengthDelimited(7, "\x1a\x05" "ab");
  const std::string bad_device = LengthDelimited(1, "/device:CPU:1") + LengthDelimited(2, bad_node);
  const std::string second_run =
      SmallRun(2000).SerializeAsString() + LengthDelimited(1, LengthDelimited(1, bad_device));
  const std::string first = Framed(SmallRun(1000).SerializeAsString());
  WriteFile(dir.File("runs.tfrecord"), first + Framed(second_run) +
                                           Framed(SmallRun(3000).SerializeAsString()));

  const ConvertResult failed = Run({dir.File("runs.tfrecord")}, dir.File("out.json"), Options(""));
  CHECK(absl::IsDataLoss(failed.status));
  // The reader's wire check finds it, at the cut field's own byte offset.
  CHECK(std::string(failed.status.message()) ==
        "'" + dir.File("runs.tfrecord") + "': record at byte offset " + std::to_string(first.size()) +
            ": not a RunMetadata record: corrupt protobuf: field 3's length (5 bytes) runs past the "
            "end of the enclosing message (2 bytes left) (at byte offset " +
            std::to_string(first.size() + 12 + SmallRun(2000).ByteSizeLong() + 4 +
                           LengthDelimited(1, "/device:CPU:1").size() + 2 +
                           LengthDelimited(1, "Op").size() + 2) +
            ")");
  CHECK(dir.Entries() == std::set<std::string>{"runs.tfrecord"});

  const ConvertResult salvaged =
      Run({dir.File("runs.tfrecord")}, dir.File("out.json"), Options("salvage=on"));
  CHECK(salvaged.status.ok());
  REQUIRE(salvaged.damage.size() == 1);
  const json trace = json::parse(tfprof_test::ReadFile(dir.File("out.json")));
  // Only the first run: nothing of the damaged one, not even its device on CPU:0.
  CHECK(Events(trace, "X", "step").size() == 1);
  CHECK(Events(trace, "X", "Op").size() == 3);
  CHECK(trace["tfprof"]["converted_from"][0]["runs"] == 1);
  for (const auto &[pid, name] : ProcessNames(trace)) CHECK(name.find("CPU:1") == std::string::npos);
}

TEST_CASE("converter: the output must be a Chrome trace path - unreadable inputs are file errors") {
  TempDir dir;
  WriteFile(dir.File("run.pb"), SmallRun(10).SerializeAsString());
  const ConvertResult extension = Run({dir.File("run.pb")}, dir.File("out.pb"), Options(""));
  CHECK(absl::IsInvalidArgument(extension.status));
  CHECK(extension.stage == ConvertStage::kOutput);
  CHECK(std::string(extension.status.message()).find("name it .json or .json.gz") != std::string::npos);
  const ConvertResult missing = Run({dir.File("nope.pb")}, dir.File("out.json"), Options("salvage=on"));
  CHECK(absl::IsUnavailable(missing.status));
  CHECK(missing.stage == ConvertStage::kReading);
  CHECK_FALSE(std::filesystem::exists(dir.File("out.json")));
}

}  // namespace tfprof
