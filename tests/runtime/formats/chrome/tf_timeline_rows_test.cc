// TensorFlow timeline.py Chrome traces read into the model: the GPU tracer's devices become one
// GPU with one row per stream, the repeats on "stream:all" and "memcpy" are counted once, the
// executor's devices stay host rows, and tensor objects and allocator counters are no ops.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "doctest/doctest.h"
#include "runtime/formats/chrome/chrome_json_reader.h"
#include "runtime/model/trace.h"
#include "support/test_files.h"

namespace {

using tfprof::Activity;
using tfprof::ActivityKind;
using tfprof::Trace;
using tfprof::TrackKind;

Trace ReadText(const std::string &text, size_t window_bytes = tfprof::kChromeReadWindowBytes) {
  tfprof_test::TempDir dir;
  const std::string path = dir.File("timeline.json");
  std::ofstream(path) << text;
  Trace trace;
  trace.path = path;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const absl::Status status =
      tfprof::ReadChromeTrace(fd, false, 0, nullptr, &trace, window_bytes);
  close(fd);
  REQUIRE(status.ok());
  return trace;
}

std::string ProcessName(const std::string &pid, const std::string &name) {
  return R"({"ph":"M","name":"process_name","pid":)" + pid + R"(,"args":{"name":")" + name +
         R"("}},)";
}

// An "Op" event as timeline.py writes it: named by the op type, node and type in args.
std::string Op(const std::string &pid, const std::string &tid, const std::string &ts,
               const std::string &dur, const std::string &type, const std::string &node) {
  return R"({"ph":"X","cat":"Op","pid":)" + pid + R"(,"tid":)" + tid + R"(,"ts":)" + ts +
         R"(,"dur":)" + dur + R"(,"name":")" + type + R"(","args":{"name":")" + node +
         R"(","op":")" + type + R"("}},)";
}

// TensorFlow >= 1.4 device names. Kernels: k1 on stream 7 (lane 0), k2 on stream 7 (lane 1:
// timeline.py opens a lane when an op starts where the last one ended), k3 only on stream:all.
// Copies: c1 on stream 9 and memcpy, c2 only on memcpy. The stream 9 process is named after its
// events.
std::string Tf2Timeline() {
  const std::string host = "1", host_tensors = "2", all = "3", stream7 = "4", stream9 = "5",
                    memcpy = "6", allocators = "0";
  std::string text = R"({"traceEvents":[)";
  text += ProcessName(allocators, "Allocators");
  text += ProcessName(host, "/job:localhost/replica:0/task:0/device:GPU:0 Compute");
  text += ProcessName(host_tensors, "/job:localhost/replica:0/task:0/device:GPU:0 Tensors");
  text += ProcessName(all, "/device:GPU:0/stream:all Compute");
  text += ProcessName(stream7, "/device:GPU:0/stream:7 Compute");
  text += ProcessName(memcpy, "/device:GPU:0/memcpy Compute");
  text += Op(host, "0", "1500000000000000", "30", "MatMul", "dense/MatMul");
  text += Op(host, "1", "1500000000000010", "5", "Const", "dense/kernel");
  text += Op(host, "0", "1500000000000040", "8", "Identity", "Identity");
  text += Op(all, "0", "1500000000000100", "10", "MatMul", "dense/MatMul");
  text += Op(all, "0", "1500000000000110", "10", "MatMul", "dense/MatMul");
  text += Op(all, "0", "1500000000000200", "4", "Relu", "dense/Relu");
  text += Op(stream7, "0", "1500000000000100", "10", "MatMul", "dense/MatMul");
  text += Op(stream7, "1", "1500000000000110", "10", "MatMul", "dense/MatMul");
  text += Op(stream9, "0", "1500000000000050", "3", "MemcpyH2D", "dense/kernel");
  text += Op(memcpy, "0", "1500000000000050", "3", "MemcpyH2D", "dense/kernel");
  text += Op(memcpy, "0", "1500000000000300", "2", "MemcpyD2H", "Identity");
  // Tensor objects, an allocator counter and a data flow: none of them is an op.
  const std::string tensor = R"("cat":"Tensor","name":"dense/MatMul","pid":2,"tid":0,"id":0,)";
  text += R"({"ph":"N",)" + tensor + R"("ts":1500000000000000},)";
  text += R"({"ph":"O",)" + tensor +
          R"("ts":1500000000000029,"args":{"snapshot":{"tensor_description":"dtype: DT_FLOAT"}}},)";
  text += R"({"ph":"D",)" + tensor + R"("ts":1500000000000047},)";
  text += R"({"ph":"C","cat":"Memory","name":"GPU_0_bfc","pid":0,"tid":0,)"
          R"("ts":1500000000000000,"args":{"GPU_0_bfc":4096}},)";
  text += R"({"ph":"s","cat":"DataFlow","name":"dense/kernel","pid":1,"tid":1,)"
          R"("ts":1500000000000015,"id":0},)";
  text += R"({"ph":"t","cat":"DataFlow","name":"dense/kernel","pid":1,"tid":0,)"
          R"("ts":1500000000000040,"id":0},)";
  text += ProcessName(stream9, "/device:GPU:0/stream:9 Compute");
  text.pop_back();
  return text + "]}";
}

size_t CountKind(const Trace &trace, ActivityKind kind) {
  return static_cast<size_t>(std::count_if(trace.activities.begin(), trace.activities.end(),
                                           [&](const Activity &a) { return a.kind == kind; }));
}

const Activity *Find(const Trace &trace, ActivityKind kind, const std::string &name,
                     int64_t begin) {
  for (const Activity &activity : trace.activities) {
    if (activity.kind == kind && trace.names.Get(activity.name) == name &&
        activity.begin_ns == begin) {
      return &activity;
    }
  }
  return nullptr;
}

void CheckTf2Timeline(const Trace &trace) {
  CHECK(trace.producer == tfprof::Producer::kTensorFlow);
  CHECK(std::string(tfprof::InputFormatName(trace)) == "TensorFlow timeline Chrome trace");
  // timeline.py's times are StepStats' Unix microseconds.
  CHECK(trace.wall_offset_ns == 0);
  CHECK_FALSE(trace.losses.reported);
  CHECK(trace.events_in_file == 24);
  CHECK(trace.steps.empty());

  // The executor's device, the GPU, and the allocators' counter row.
  REQUIRE(trace.processes.size() == 3);
  CHECK(trace.processes[0].name == "/job:localhost/replica:0/task:0/device:GPU:0 Compute");
  CHECK(trace.processes[1].name == "GPU 0");
  CHECK(trace.processes[2].name == "Allocators");

  CHECK(trace.activities.size() == 3 + 3 + 2);
  CHECK(CountKind(trace, ActivityKind::kHostOp) == 3);
  CHECK(CountKind(trace, ActivityKind::kKernel) == 3);
  CHECK(CountKind(trace, ActivityKind::kMemcpy) == 2);

  // Host ops keep their threads and are named as the StepStats reader names nodes.
  const Activity *matmul =
      Find(trace, ActivityKind::kHostOp, "dense/MatMul:MatMul", 1500000000000000000);
  REQUIRE(matmul != nullptr);
  CHECK(trace.tracks[matmul->track].kind == TrackKind::kHostThread);
  CHECK(trace.tracks[matmul->track].tid == 0);
  REQUIRE(Find(trace, ActivityKind::kHostOp, "Identity", 1500000000000040000) != nullptr);

  // Both lanes of stream 7 are stream 7; kernels are named by their op type, the node is their op.
  const Activity *first = Find(trace, ActivityKind::kKernel, "MatMul", 1500000000000100000);
  const Activity *second = Find(trace, ActivityKind::kKernel, "MatMul", 1500000000000110000);
  REQUIRE(first != nullptr);
  REQUIRE(second != nullptr);
  CHECK(first->track == second->track);
  const tfprof::Track &stream7 = trace.tracks[first->track];
  CHECK(stream7.kind == TrackKind::kGpuStream);
  CHECK(stream7.device == 0);
  CHECK(stream7.stream == 7);
  CHECK(stream7.name == "stream 7");
  CHECK(trace.processes[stream7.process].name == "GPU 0");
  REQUIRE(trace.gpu_details.Has(first->detail));
  CHECK(trace.names.Get(trace.gpu_details.Get(first->detail).op) == "dense/MatMul:MatMul");

  // A stream:all event with no twin is kept, on the GPU's "stream all" row.
  const Activity *relu = Find(trace, ActivityKind::kKernel, "Relu", 1500000000000200000);
  REQUIRE(relu != nullptr);
  CHECK(trace.tracks[relu->track].name == "stream all");
  CHECK(trace.tracks[relu->track].stream == -1);
  CHECK(trace.tracks[relu->track].process == stream7.process);

  // The copy repeated on "memcpy" is a copy on its stream, direction from its name; the one that
  // is only on "memcpy" stays there.
  const Activity *h2d = Find(trace, ActivityKind::kMemcpy, "MemcpyH2D", 1500000000000050000);
  REQUIRE(h2d != nullptr);
  CHECK(h2d->copy == tfprof::CopyKind::kHostToDevice);
  CHECK(trace.tracks[h2d->track].stream == 9);
  const Activity *d2h = Find(trace, ActivityKind::kMemcpy, "MemcpyD2H", 1500000000000300000);
  REQUIRE(d2h != nullptr);
  CHECK(d2h->copy == tfprof::CopyKind::kDeviceToHost);
  CHECK(trace.tracks[d2h->track].name == "memcpy");

  // Rows: 2 host lanes, streams 7 and 9, "stream all", "memcpy", the counter row.
  CHECK(trace.tracks.size() == 7);
  for (const Activity &activity : trace.activities) CHECK(activity.track < trace.tracks.size());
  REQUIRE(trace.counters.size() == 1);
  CHECK(trace.counters[0].value == 4096);
  CHECK(trace.processes[trace.tracks[trace.counters[0].track].process].name == "Allocators");
}

}  // namespace

TEST_CASE("tf timeline: GPU tracer devices become streams, repeats count once, tensors no ops") {
  CheckTf2Timeline(ReadText(Tf2Timeline()));
}

TEST_CASE("tf timeline: the same through a window that cuts every event") {
  CheckTf2Timeline(ReadText(Tf2Timeline(), 64));
}

TEST_CASE("tf timeline: a merge's inputs keep their own GPUs") {
  std::string text = R"({"traceEvents":[)";
  text += ProcessName("1", "a.pb: /gpu:0/stream:1 Compute");
  text += ProcessName("2", "b.pb: /gpu:0/stream:1 Compute");
  text += Op("1", "0", "1500000000000000", "5", "Add", "add");
  text += Op("2", "0", "1500000000000000", "5", "Add", "add");
  text.pop_back();
  const Trace trace = ReadText(text + "]}");
  REQUIRE(trace.processes.size() == 2);
  CHECK(trace.processes[0].name == "a.pb: GPU 0");
  CHECK(trace.processes[1].name == "b.pb: GPU 0");
  CHECK(CountKind(trace, ActivityKind::kKernel) == 2);
}

TEST_CASE("tf timeline: \"Op\" events of processes that are no TensorFlow device stay as read") {
  std::string text = R"({"traceEvents":[)";
  text += ProcessName("1", "worker Compute");
  text += Op("1", "0", "1500000000000000", "5", "Add", "add");
  text.pop_back();
  const Trace trace = ReadText(text + "]}");
  CHECK(trace.producer == tfprof::Producer::kOther);
  CHECK_FALSE(trace.wall_offset_ns.has_value());
  REQUIRE(trace.activities.size() == 1);
  CHECK(trace.activities[0].kind == ActivityKind::kHostOp);
  CHECK(trace.names.Get(trace.activities[0].name) == "Add");
}

TEST_CASE("tf timeline: tfprof's step node is the step and its losses node no op") {
  // timeline.py's drawing of step statistics tfprof wrote.
  std::string text = R"({"traceEvents":[)";
  text += ProcessName("1", "/job:localhost/replica:0/task:0/device:CPU:0 Compute");
  text += Op("1", "0", "1500000000000000", "100", "TrainingStep", "step_000003");
  text += Op("1", "0", "1500000000000010", "50", "forward", "forward");
  text += Op("1", "1", "1500000000000200", "0", "Losses", "tfprof/losses");
  text.pop_back();
  const Trace trace = ReadText(text + "]}");
  REQUIRE(trace.steps.size() == 1);
  CHECK(trace.steps[0].number == 3);
  CHECK(trace.steps[0].begin_ns == 1500000000000000000);
  CHECK(trace.steps[0].end_ns == 1500000000000100000);
  REQUIRE(trace.activities.size() == 1);
  CHECK(trace.names.Get(trace.activities[0].name) == "forward");
  CHECK(trace.tracks.size() == 1);
}
