// What a Chrome trace of another producer (the PyTorch profiler's) holds beyond tfprof's model:
// the categories it spelled, its ProfilerStep spans, the host ops' args, the GPU events' extra
// args, its flows and its whole-trace events: read into the trace model, and written back by the
// Chrome writer as they were (checked with a JSON parser), beside tfprof's own added keys.
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "doctest/doctest.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/model/event_args.h"
#include "support/loaded_trace_checks.h"
#include "support/test_files.h"

namespace tfprof {

namespace {

using nlohmann::json;
using tfprof_test::MustLoad;
using tfprof_test::ReadFile;
using tfprof_test::TempDir;

// A PyTorch profiler trace in Kineto's layout: one step of a host op with shapes, a launch and
// its kernel, a forward-backward flow, the launch arrows, and Kineto's whole-trace events.
constexpr std::string_view kKinetoTrace = R"json({
  "schemaVersion": 1,
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 10, "tid": 11,
   "ts": 100, "dur": 900, "args": {"External id": 1, "Record function id": 0, "Ev Idx": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 110, "dur": 50,
   "args": {"External id": 2, "Sequence number": 7, "Fwd thread id": 0,
            "Input Dims": [[3, 4], [4, 5]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
   "ts": 120, "dur": 5, "args": {"External id": 2, "cbid": 211, "correlation": 33}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 130, "dur": 20,
   "args": {"External id": 2, "queued": 0, "device": 0, "context": 1, "stream": 7,
            "correlation": 33, "registers per thread": 32, "shared memory": 1024,
            "blocks per SM": 1.5, "warps per SM": 6, "grid": [2, 1, 1], "block": [128, 1, 1],
            "est. achieved occupancy %": 9}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "## forward ##", "pid": 0, "tid": 7,
   "ts": 129, "dur": 30, "args": {"External id": 2}},
  {"ph": "s", "id": 33, "pid": 10, "tid": 11, "ts": 120, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 33, "pid": 0, "tid": 7, "ts": 130, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "s", "id": 5, "pid": 10, "tid": 11, "ts": 111, "cat": "fwdbwd", "name": "fwdbwd"},
  {"ph": "f", "id": 5, "pid": 10, "tid": 11, "ts": 150, "cat": "fwdbwd", "name": "fwdbwd",
   "bp": "e"},
  {"ph": "X", "cat": "Trace", "ts": 90, "dur": 1000, "pid": "Spans", "tid": "PyTorch Profiler",
   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
  {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
   "tid": "Trace PyTorch Profiler", "ts": 90}
  ],
  "baseTimeNanoseconds": 1700000000000000000
})json";

// The events of `document` other than metadata, by (ph, cat, name, ts).
std::map<std::tuple<std::string, std::string, std::string, double>, json> EventsOf(
    const json &document) {
  std::map<std::tuple<std::string, std::string, std::string, double>, json> events;
  for (const json &event : document["traceEvents"]) {
    if (event.value("ph", "") == "M") continue;
    events[{event.value("ph", ""), event.value("cat", ""), event.value("name", ""),
            event.value("ts", 0.0)}] = event;
  }
  return events;
}

// Reads kKinetoTrace and writes it as .json again: the written document.
json RoundTrip(const TempDir &directory, Trace *loaded = nullptr) {
  const std::string input = directory.File("kineto.json");
  std::ofstream(input, std::ios::binary) << kKinetoTrace;
  Trace trace = MustLoad(input);
  const std::string output = directory.File("converted.json");
  REQUIRE(WriteTrace(trace, output, Format::kChromeJson).ok());
  if (loaded != nullptr) *loaded = std::move(trace);
  return json::parse(ReadFile(output));
}

TEST_CASE("Chrome lossless: the model keeps the file's categories, step, args and flows") {
  TempDir directory;
  Trace trace;
  RoundTrip(directory, &trace);
  REQUIRE(trace.steps.size() == 1);
  const Step &step = trace.steps.front();
  REQUIRE(step.name < trace.names.size());
  CHECK(trace.names.Get(step.name) == "ProfilerStep#4");
  CHECK(FileCategory(trace, step.category) == "user_annotation");
  REQUIRE(step.args < trace.file_args.size());
  CHECK(FileArgKeys(trace.file_args.Get(step.args)) ==
        uint64_t{1} << static_cast<unsigned>(EventArg::kExternalId));

  const auto op = std::find_if(trace.activities.begin(), trace.activities.end(),
                               [&](const Activity &a) { return trace.names.Get(a.name) == "aten::mm"; });
  REQUIRE(op != trace.activities.end());
  CHECK(op->kind == ActivityKind::kHostOp);
  CHECK(FileCategory(trace, op->category) == "cpu_op");
  CHECK(FileArgsOf(trace, *op).find("\"Input Dims\":[[3, 4], [4, 5]]") != std::string_view::npos);
  CHECK(op->step == 4);

  // The kernel keeps only what no table key holds, plus the written-only "shared memory".
  const auto kernel = std::find_if(trace.activities.begin(), trace.activities.end(),
                                   [](const Activity &a) { return a.kind == ActivityKind::kKernel; });
  REQUIRE(kernel != trace.activities.end());
  CHECK(kernel->category == kDefaultCategory);
  const auto kept = trace.gpu_file_args.find(kernel->detail);
  REQUIRE(kept != trace.gpu_file_args.end());
  std::vector<std::string> keys;
  ForEachFileArg(trace.file_args.Get(kept->second), [&](std::string_view member, EventArg) {
    keys.emplace_back(member.substr(0, member.find(':')));
  });
  CHECK(keys == std::vector<std::string>{"\"queued\"", "\"shared memory\"", "\"blocks per SM\"",
                                         "\"warps per SM\"", "\"est. achieved occupancy %\""});

  REQUIRE(trace.flows.size() == 4);
  CHECK(trace.flows[0].category == kDefaultCategory);  // ac2g, the default
  CHECK(trace.flows[0].id == 33);
  CHECK(trace.flows[1].phase == 'f');
  CHECK((trace.flows[1].flags & kFlowBindsEnclosing) != 0);
  CHECK(FileCategory(trace, trace.flows[2].category) == "fwdbwd");
  CHECK(trace.verbatim_events.size() == 2);
  CHECK(sizeof(Activity) == 48);
}

TEST_CASE("Chrome lossless: converting writes every event back with its name, cat and args") {
  TempDir directory;
  const json written = RoundTrip(directory);
  const auto input = EventsOf(json::parse(kKinetoTrace));
  const auto output = EventsOf(written);
  CHECK(output.size() == input.size());
  // Keys tfprof adds from its model: the step, the launch shape split, the GPU op's row.
  const std::vector<std::string> added = {"step", "static shared memory", "dynamic shared memory"};
  for (const auto &[key, event] : input) {
    CAPTURE(std::get<2>(key));
    const auto found = output.find(key);
    REQUIRE(found != output.end());
    const json &copy = found->second;
    CHECK(copy.value("dur", 0.0) == event.value("dur", 0.0));
    CHECK(copy.value("bp", "") == event.value("bp", ""));
    CHECK(copy.value("id", json()) == event.value("id", json()));
    const json args = event.value("args", json::object());
    const json copy_args = copy.value("args", json::object());
    for (const auto &[name, value] : args.items()) {
      CAPTURE(name);
      REQUIRE(copy_args.contains(name));
      CHECK(copy_args[name] == value);
    }
    for (const auto &[name, value] : copy_args.items()) {
      CAPTURE(name);
      CHECK((args.contains(name) ||
             std::find(added.begin(), added.end(), name) != added.end()));
    }
  }
  // No key twice: the text of the kernel's args holds "shared memory" once.
  const std::string text = written.dump();
  CHECK(text.find("\"shared memory\"") == text.rfind("\"shared memory\""));
  // The step is where the profiler drew it, not on a "Steps" row of tfprof's.
  for (const json &event : written["traceEvents"]) {
    CHECK(event.value("cat", "") != "step");
  }
}

TEST_CASE("Chrome lossless: the converted file reads back to the same model") {
  TempDir directory;
  Trace first;
  RoundTrip(directory, &first);
  Trace second = MustLoad(directory.File("converted.json"));
  CHECK(second.steps.size() == first.steps.size());
  CHECK(second.steps.front().number == 4);
  CHECK(second.activities.size() == first.activities.size());
  CHECK(second.flows.size() == first.flows.size());
  CHECK(second.categories == first.categories);
  CHECK(second.verbatim_events.size() == first.verbatim_events.size());
}

TEST_CASE("Chrome lossless: tfprof's own traces keep nothing beside the model") {
  TempDir directory;
  const std::string input = directory.File("tfprof.json");
  std::ofstream(input, std::ios::binary) << R"json({"traceEvents":[
{"ph":"X","cat":"step","name":"step 0","pid":1,"tid":2000000000,"ts":1.000,"dur":9.000,"args":{"step":0,"thread":5}},
{"ph":"X","cat":"user_annotation","name":"forward","pid":1,"tid":5,"ts":2.000,"dur":3.000,"args":{"step":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":5,"ts":2.500,"dur":0.500,"args":{"cbid":211,"correlation":9,"step":0}},
{"ph":"s","cat":"ac2g","name":"ac2g","id":9,"pid":1,"tid":5,"ts":2.500},
{"ph":"X","cat":"kernel","name":"k","pid":2,"tid":7,"ts":3.000,"dur":1.000,"args":{"device":0,"stream":7,"correlation":9,"step":0}},
{"ph":"f","cat":"ac2g","name":"ac2g","id":9,"pid":2,"tid":7,"ts":3.000,"bp":"e"}],
"tfprof":{"version":"0.4.0"}})json";
  const Trace trace = MustLoad(input);
  CHECK(trace.categories.empty());
  CHECK(trace.file_args.empty());
  CHECK(trace.gpu_file_args.empty());
  CHECK(trace.flows.empty());
  CHECK(trace.verbatim_events.empty());
  REQUIRE(trace.steps.size() == 1);
  CHECK(trace.steps.front().name == kNoName);
}

}  // namespace

}  // namespace tfprof
