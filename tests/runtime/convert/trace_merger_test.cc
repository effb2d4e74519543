// Merging traces (runtime/convert/trace_merger.h): inputs on different clocks placed at their
// wall-clock times or aligned at their first events, and labelled by what they know.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "runtime/convert/trace_merger.h"
#include "runtime/model/trace.h"
#include "support/model_builders.h"

namespace tfprof {
namespace {

using tfprof_test::ProcessOf;
using tfprof_test::StepOf;
using Json = nlohmann::json;

// A one-thread trace whose clock starts at `clock_ns`, with one span and one step at `at_ns`
// after its start.
Trace ClockTrace(const std::string &path, int64_t clock_ns, std::optional<int64_t> wall_start,
                       int64_t at_ns, std::optional<int64_t> pid) {
  Trace trace;
  trace.path = path;
  trace.pid = pid;
  // Without a pid: a TensorFlow file (its formats have none).
  trace.format = pid ? Format::kChromeJson : Format::kRunMetadata;
  trace.producer = pid ? Producer::kTfprof : Producer::kTensorFlow;
  trace.processes = {ProcessOf(pid.value_or(1), "proc"), ProcessOf(0, "GPU 0")};
  Track thread;
  thread.tid = pid.value_or(1);
  trace.tracks = {thread};
  Activity span;
  span.name = trace.names.Intern("train_step");
  span.begin_ns = clock_ns + at_ns;
  span.end_ns = clock_ns + at_ns + 5'000;
  trace.activities = {span};
  trace.steps = {StepOf(1, clock_ns + at_ns, clock_ns + at_ns + 10'000, 0)};
  if (wall_start) trace.wall_offset_ns = *wall_start - clock_ns;
  return trace;
}

TEST_CASE("trace merger: inputs with different clocks land at their wall-clock times") {
  constexpr int64_t kUnix = 1'700'000'000'000'000'000;
  TraceMerger merger(MergeAlignment::kWallClock);
  Trace a = ClockTrace("/x/a.json", 5'000'000'000'000, kUnix + 2'000'000, 0, 10);
  a.rank = 0;
  a.hostname = "node-a";
  Trace b = ClockTrace("/x/b.json", 99'000'000'000, kUnix, 0, 10);  // same pid, other host
  b.rank = 1;
  b.hostname = "node-b";
  Trace c = ClockTrace("/x/c.json", 123, kUnix + 500'000, 250, std::nullopt);
  CHECK_FALSE(merger.Add(std::move(a)).has_value());
  CHECK_FALSE(merger.Add(std::move(b)).has_value());
  CHECK_FALSE(merger.Add(std::move(c)).has_value());
  const Trace merged = merger.Finish();
  CHECK(merged.wall_offset_ns == kUnix);
  REQUIRE(merged.activities.size() == 3);
  CHECK(merged.activities[0].begin_ns == 2'000'000);
  CHECK(merged.activities[1].begin_ns == 0);
  CHECK(merged.activities[2].begin_ns == 500'250);
  CHECK(merged.activities[2].end_ns == 505'250);
  REQUIRE(merged.steps.size() == 3);
  CHECK(merged.steps[0].begin_ns == 0);  // sorted: b's first
  CHECK(merged.processes[merged.steps[0].process].name == "rank 1 \xC2\xB7 node-b \xC2\xB7 pid 10");

  std::vector<std::string> names;
  std::set<int64_t> pids;
  for (const Process &process : merged.processes) {
    names.push_back(process.name);
    pids.insert(process.pid);
  }
  CHECK(names == std::vector<std::string>{
                     "rank 0 \xC2\xB7 node-a \xC2\xB7 pid 10",
                     "rank 0 \xC2\xB7 node-a \xC2\xB7 pid 10 \xC2\xB7 GPU 0",
                     "rank 1 \xC2\xB7 node-b \xC2\xB7 pid 10",
                     "rank 1 \xC2\xB7 node-b \xC2\xB7 pid 10 \xC2\xB7 GPU 0",
                     "c.json",
                     "c.json \xC2\xB7 GPU 0"});
  CHECK(pids.size() == 6);
  CHECK(merged.processes[0].pid == 10);  // the first keeps its pid
  CHECK(merged.tracks[1].process == 2);
  CHECK(merged.names.Get(merged.activities[2].name) == "train_step");

  const Json sources = Json::parse(merger.SourcesJson());
  REQUIRE(sources.size() == 3);
  CHECK(sources[0]["aligned_by"] == "wall-clock");
  CHECK(sources[1]["shift_ns"].get<int64_t>() == -99'000'000'000);
  CHECK(sources[2]["rank"].is_null());
}

TEST_CASE("trace merger: inputs are labelled with what they know, else by file name") {
  Trace trace = ClockTrace("/x/run.pb", 0, 0, 0, std::nullopt);
  CHECK(InputLabel(trace) == "run.pb");
  trace.format = Format::kChromeJson;  // no tfprof header, but its host process's pid
  trace.producer = Producer::kPytorch;
  trace.rank = 5;
  CHECK(InputLabel(trace) == "rank 5 \xC2\xB7 pid 1");
  trace.pid = 77;
  trace.hostname = "gpu-box";
  CHECK(InputLabel(trace) == "rank 5 \xC2\xB7 gpu-box \xC2\xB7 pid 77");
}

// `trace` with a kernel of `registers` registers on the GPU's stream row, its shape interned
// after a shape of its own that the other input does not have.
void AddKernel(Trace &trace, const char *name, int32_t registers, uint32_t padding_shapes) {
  for (uint32_t k = 0; k < padding_shapes; ++k) {
    GpuWorkShape other;
    other.registers = 1000 + static_cast<int32_t>(k);
    trace.work_shapes.Intern(other);
  }
  Track stream;
  stream.process = 1;
  stream.kind = TrackKind::kGpuStream;
  stream.device = 0;
  stream.stream = 7;
  trace.tracks.push_back(stream);
  GpuWorkShape shape;
  shape.grid[0] = 80;
  shape.block[0] = 256;
  shape.registers = registers;
  GpuDetail detail;
  detail.shape = trace.work_shapes.Intern(shape);
  detail.fields = kGpuHasLaunchShape;
  Activity kernel;
  kernel.kind = ActivityKind::kKernel;
  kernel.name = trace.names.Intern(name);
  kernel.track = static_cast<uint32_t>(trace.tracks.size() - 1);
  kernel.begin_ns = trace.activities[0].begin_ns;
  kernel.end_ns = kernel.begin_ns + 100;
  kernel.detail = trace.gpu_details.Add(kernel.kind, detail);
  trace.activities.push_back(kernel);
}

TEST_CASE("trace merger: each input's kernels keep their own launch shapes") {
  TraceMerger merger(MergeAlignment::kWallClock);
  Trace a = ClockTrace("a.json", 0, 1'000'000, 0, 1);
  AddKernel(a, "gemm_a", 32, 0);  // shape 1
  Trace b = ClockTrace("b.json", 0, 1'000'000, 0, 2);
  AddKernel(b, "gemm_b", 64, 2);  // shape 3 in b: 1 and 2 are others
  Trace c = ClockTrace("c.json", 0, 1'000'000, 0, 3);
  AddKernel(c, "gemm_c", 32, 0);  // a's shape again
  CHECK_FALSE(merger.Add(std::move(a)).has_value());
  CHECK_FALSE(merger.Add(std::move(b)).has_value());
  CHECK_FALSE(merger.Add(std::move(c)).has_value());
  const Trace merged = merger.Finish();
  int kernels = 0;
  for (const Activity &activity : merged.activities) {
    if (activity.kind != ActivityKind::kKernel) continue;
    ++kernels;
    const GpuWorkShape &shape = merged.work_shapes.Get(merged.gpu_details.Get(activity.detail).shape);
    const std::string &name = merged.names.Get(activity.name);
    CHECK(shape.registers == (name == "gemm_b" ? 64 : 32));
    CHECK(shape.grid[0] == 80);
  }
  CHECK(kernels == 3);
  CHECK(merged.work_shapes.size() == 5);  // none, a's (shared with c), b's three
}

TEST_CASE("trace merger: an input without wall-clock time starts with the earliest input") {
  TraceMerger merger(MergeAlignment::kWallClock);
  CHECK_FALSE(merger.Add(ClockTrace("late.json", 1'000, 10'000'000, 0, 1)).has_value());
  CHECK_FALSE(merger.Add(ClockTrace("early.json", 7'000, 4'000'000, 100, 2)).has_value());
  const std::optional<std::string> note = merger.Add(ClockTrace("plain.json", 55, std::nullopt, 0, 3));
  REQUIRE(note.has_value());
  CHECK(note->find("plain.json: records no wall-clock time") == 0);
  const Trace merged = merger.Finish();
  CHECK(merged.wall_offset_ns == 4'000'100);
  CHECK(merged.activities[0].begin_ns == 5'999'900);
  CHECK(merged.activities[1].begin_ns == 0);
  CHECK(merged.activities[2].begin_ns == 0);
}

TEST_CASE("trace merger: --align=start puts every first event at 0 - equal labels get paths") {
  TraceMerger merger(MergeAlignment::kFirstEvent);
  CHECK_FALSE(merger.Add(ClockTrace("/runs/1/trace.json", 1'000, 10'000'000, 30, std::nullopt)).has_value());
  CHECK_FALSE(merger.Add(ClockTrace("/runs/2/trace.json", 9'000, 90'000'000, 70, std::nullopt)).has_value());
  const Trace merged = merger.Finish();
  CHECK_FALSE(merged.wall_offset_ns.has_value());
  CHECK(merged.activities[0].begin_ns == 0);
  CHECK(merged.activities[1].begin_ns == 0);
  CHECK(merged.processes[0].name == "trace.json \xC2\xB7 /runs/1/trace.json");
  CHECK(merged.processes[2].name == "trace.json \xC2\xB7 /runs/2/trace.json");
}

}  // namespace
}  // namespace tfprof
