// GPU activity in every output: a hand-built trace model with host spans, steps and CUPTI records
// on two devices, written as Chrome trace JSON (read back with a JSON parser) and as TensorFlow
// RunMetadata/TFRecord (read back with the generated messages), and the per-step partitioner's
// handling of GPU work that arrives late.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/collector/event.h"
#include "runtime/export/export_context.h"
#include "runtime/export/exporter.h"
#include "runtime/common/output_sink.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/export/step_partitioner.h"
#include "runtime/export/trace_stream.h"
#include "runtime/session/memory_limits.h"
#include "runtime/convert/convert.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/model/memory_series.h"
#include "runtime/session/session_log.h"
#include "support/export_context_builder.h"
#include "support/loaded_trace_checks.h"
#include "support/test_files.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace {

using nlohmann::json;
using tfprof::Event;
using tfprof::EventKind;
using tfprof::GpuActivity;
using tfprof::GpuActivityKind;
using tfprof::GpuApiCall;
using tfprof::GpuCopyKind;
using tfprof::GpuMemoryKind;
using tfprof::SpanExternalId;
using tfprof_test::ReadFile;
using tfprof_test::TempDir;

constexpr int64_t kPid = tfprof_test::kTrainerPid;
constexpr int64_t kMainTid = 1234;
constexpr int64_t kWorkerTid = 5678;
constexpr int64_t kApiOnlyTid = 9999;
constexpr int64_t kWallBaseNs = 1700000000000000000;  // wall clock at the model's base time
const uint64_t kMatMulId = SpanExternalId(1, 1);
const uint64_t kForwardId = SpanExternalId(1, 2);
const uint64_t kSetupId = SpanExternalId(1, 3);
constexpr char kMatMul[] = "model/dense/MatMul:MatMul";

// Events at nanosecond offsets from a whole-millisecond base, so offset 1500 is base_us + 1.500.
struct GpuTraceBuilder {
  tfprof::SessionLog model;
  tfprof::ExportContext context = tfprof_test::TrainerContext();
  int64_t base = 0;

  GpuTraceBuilder() {
    base = context.converter.start_ns() / 1000000 * 1000000;
    context.start_monotonic_ns = base;
    context.start_wall_ns = kWallBaseNs;
    context.end_ns = base + 30000;
    context.losses.dropped = 5;
    model.AddTrack(kMainTid);
    model.tracks[0].name = "main";
    model.AddTrack(kWorkerTid);
    model.tracks[1].name = "loader";
  }

  uint64_t Ticks(int64_t offset) const { return static_cast<uint64_t>(base + offset); }
  void Host(size_t track, int64_t offset, EventKind kind, uint32_t name, uint64_t arg) {
    model.tracks[track].events.Append(Event{Ticks(offset), arg, name, kind, 0});
  }
  void SpanBegin(size_t track, int64_t offset, const char *name, uint64_t external_id) {
    Host(track, offset, EventKind::kSpanBegin, model.names.Intern(name), external_id);
  }
  void SpanEnd(size_t track, int64_t offset) { Host(track, offset, EventKind::kSpanEnd, 0, 0); }
  void StepBegin(size_t track, int64_t offset, int64_t step) {
    Host(track, offset, EventKind::kStepBegin, 0, static_cast<uint64_t>(step));
  }
  void StepEnd(size_t track, int64_t offset) { Host(track, offset, EventKind::kStepEnd, 0, 0); }

  void Call(int64_t os_tid, int64_t begin, int64_t end, uint32_t correlation, const char *name,
            bool launches = true, bool driver = false, uint64_t external_id = 0) {
    GpuApiCall call;
    call.start_ticks = Ticks(begin);
    call.end_ticks = Ticks(end);
    call.os_tid = os_tid;
    call.correlation = correlation;
    call.callback_id = driver ? 307 : 211;
    call.name = model.gpu.names.Intern(name);
    call.driver = driver;
    call.launches_work = launches;
    model.gpu.api_calls.Append(call);
    if (external_id != 0) model.gpu.external_correlations.Append({correlation, external_id});
  }
  GpuActivity Work(GpuActivityKind kind, uint32_t device, uint32_t stream, int64_t begin,
                   int64_t end, uint32_t correlation) const {
    GpuActivity activity;
    activity.kind = kind;
    activity.device = device;
    activity.context = device + 1;
    activity.stream = stream;
    activity.start_ticks = Ticks(begin);
    activity.end_ticks = Ticks(end);
    activity.correlation = correlation;
    return activity;
  }
  void Kernel(uint32_t device, uint32_t stream, int64_t begin, int64_t end, uint32_t correlation,
              const char *name, uint64_t graph_id = 0) {
    GpuActivity kernel = Work(GpuActivityKind::kKernel, device, stream, begin, end, correlation);
    kernel.name = model.gpu.names.Intern(name);
    kernel.grid[0] = 128;
    kernel.block[0] = 256;
    kernel.registers = 32;
    kernel.static_shared = 1024;
    kernel.dynamic_shared = 2048;
    kernel.graph_id = graph_id;
    model.gpu.activities.Append(kernel);
  }
  void Copy(uint32_t device, uint32_t stream, int64_t begin, int64_t end, uint32_t correlation,
            GpuCopyKind kind, GpuMemoryKind from, GpuMemoryKind to, uint64_t bytes,
            uint32_t peer = 0) {
    GpuActivity copy = Work(GpuActivityKind::kMemcpy, device, stream, begin, end, correlation);
    copy.copy_kind = kind;
    copy.src_memory = from;
    copy.dst_memory = to;
    copy.bytes = bytes;
    copy.peer_device = peer;
    model.gpu.activities.Append(copy);
  }

  int64_t Offset(const json &micros) const {
    return std::llround(micros.get<double>() * 1000.0) - base;
  }
  int64_t WallMicros(int64_t offset) const { return (kWallBaseNs + offset) / 1000; }
};

// Main thread: step 1 [1000, 9000) with the MatMul span [2000, 5000), step 2 [10000, 20000) with
// "forward" [11000, 15000); "setup" [100, 500) outside steps. Its launches: a kernel, an HtoD copy
// and a kernel that runs past the step's end (step 1); a CUDA graph of three kernels, a DtoH copy,
// a peer copy and a memset (step 2); a kernel outside steps. The loader thread launches a kernel
// through the driver API in step 2 with no span open; an untracked thread synchronises.
GpuTraceBuilder BuildGpuTrace() {
  GpuTraceBuilder b;
  using K = GpuActivityKind;
  b.SpanBegin(0, 100, "setup", kSetupId);
  b.Call(kMainTid, 300, 350, 50, "cudaLaunchKernel", true, false, kSetupId);
  b.SpanEnd(0, 500);
  b.StepBegin(0, 1000, 1);
  b.SpanBegin(0, 2000, kMatMul, kMatMulId);
  b.Call(kMainTid, 2500, 2600, 10, "cudaLaunchKernel", true, false, kMatMulId);
  b.Call(kMainTid, 3000, 3100, 11, "cudaMemcpyAsync", true, false, kMatMulId);
  b.Call(kMainTid, 4500, 4600, 12, "cudaLaunchKernel", true, false, kMatMulId);
  b.SpanEnd(0, 5000);
  b.StepEnd(0, 9000);
  b.StepBegin(0, 10000, 2);
  b.SpanBegin(0, 11000, "forward", kForwardId);
  b.Call(kMainTid, 11500, 11600, 20, "cudaGraphLaunch", true, false, kForwardId);
  b.Call(kMainTid, 13000, 13100, 21, "cudaMemcpyAsync", true, false, kForwardId);
  b.Call(kMainTid, 13200, 13300, 22, "cudaMemcpyPeerAsync", true, false, kForwardId);
  b.Call(kMainTid, 13400, 13500, 23, "cudaMemsetAsync", true, false, kForwardId);
  b.SpanEnd(0, 15000);
  b.StepEnd(0, 20000);
  b.Call(kWorkerTid, 16000, 16100, 30, "cuLaunchKernel", true, true);
  b.Call(kApiOnlyTid, 18000, 18500, 40, "cudaStreamSynchronize", false);

  b.Kernel(0, 7, 400, 450, 50, "init_kernel");
  b.Kernel(0, 7, 3000, 4000, 10, "_Z6matmulPfS_i");
  b.Copy(0, 7, 4100, 5100, 11, GpuCopyKind::kHtoD, GpuMemoryKind::kPinned, GpuMemoryKind::kDevice, 4096);
  b.Kernel(0, 7, 9500, 12000, 12, "late_kernel");  // ends after its step did
  b.Kernel(1, 13, 12600, 13000, 20, "graph_b", 77);  // the graph's kernels, not in time order
  b.Kernel(1, 13, 12000, 12500, 20, "graph_a", 77);
  b.Kernel(1, 13, 13100, 13500, 20, "graph_c", 77);
  b.Copy(1, 14, 13600, 14000, 21, GpuCopyKind::kDtoH, GpuMemoryKind::kDevice, GpuMemoryKind::kPageable, 1024);
  b.Copy(0, 8, 14000, 14500, 22, GpuCopyKind::kPtoP, GpuMemoryKind::kDevice, GpuMemoryKind::kDevice, 2000000, 1);
  GpuActivity memset = b.Work(K::kMemset, 0, 8, 14600, 14700, 23);
  memset.bytes = 512;
  memset.memset_value = 7;
  memset.src_memory = GpuMemoryKind::kDevice;
  b.model.gpu.activities.Append(memset);
  b.Kernel(0, 7, 17000, 17500, 30, "relu_kernel");

  b.model.gpu.syncs.Append({b.Ticks(18000), b.Ticks(18500), 40, 1, 7, tfprof::GpuSyncKind::kStream});
  b.model.gpu.syncs.Append({b.Ticks(19000), b.Ticks(19200), 41, 2, UINT32_MAX, tfprof::GpuSyncKind::kContext});
  b.model.gpu.overheads.Append({b.Ticks(500), b.Ticks(600), b.model.gpu.names.Intern("CUPTI buffer flush"), kMainTid});
  b.model.gpu.memory_changes.Append({b.Ticks(2500), 2000000, 0x2000, 0});
  b.model.gpu.memory_changes.Append({b.Ticks(1500), 1000000, 0x1000, 0});
  b.model.gpu.memory_changes.Append({b.Ticks(6000), -1000000, 0x1000, 0});
  b.model.gpu.memory_changes.Append({b.Ticks(11000), 4096, 0x3000, 1});
  b.model.gpu.devices.push_back({0, "NVIDIA H100 80GB HBM3", 85000000000, 9, 0, 132});
  b.model.gpu.devices.push_back({1, "NVIDIA A100-SXM4-40GB", 42000000000, 8, 0, 108});
  b.model.gpu.state = tfprof::GpuTracingState::kActive;
  b.model.gpu.library_path = "/usr/local/cuda/lib64/libcupti.so.12";
  b.model.gpu.losses.records_dropped = 3;
  b.model.gpu.losses.buffers_refused = 1;
  b.model.gpu.losses.records_unparsed = 2;
  return b;
}

json WriteJson(const GpuTraceBuilder &b, const TempDir &dir) {
  const std::string path = dir.File("trace.json");
  REQUIRE(tfprof::ExportTrace(b.model, b.context, path).ok());
  return json::parse(ReadFile(path));
}

std::vector<json> Events(const json &trace, const std::string &ph, const std::string &name) {
  std::vector<json> found;
  for (const json &event : trace.at("traceEvents")) {
    if (event.at("ph") == ph && event.value("name", "") == name) found.push_back(event);
  }
  return found;
}

json Only(const json &trace, const std::string &ph, const std::string &name) {
  const std::vector<json> found = Events(trace, ph, name);
  INFO("ph=", ph, " name=", name);
  REQUIRE(found.size() == 1);
  return found[0];
}

// The metadata record of `kind` for (pid, tid).
json Meta(const json &trace, const std::string &kind, int64_t pid, int64_t tid) {
  std::vector<json> found;
  for (const json &event : Events(trace, "M", kind)) {
    if (event.at("pid") == pid && event.at("tid") == tid) found.push_back(event);
  }
  INFO("kind=", kind, " pid=", pid, " tid=", tid);
  REQUIRE(found.size() == 1);
  return found[0].at("args");
}

tensorflow::RunMetadata ParseRunMetadata(const std::string &bytes) {
  tensorflow::RunMetadata metadata;
  REQUIRE(metadata.ParseFromString(bytes));
  return metadata;
}

std::vector<std::string> DeviceNames(const tensorflow::RunMetadata &metadata) {
  std::vector<std::string> names;
  for (const auto &device : metadata.step_stats().dev_stats()) names.push_back(device.device());
  return names;
}

const tensorflow::DeviceStepStats &Device(const tensorflow::RunMetadata &metadata,
                                          const std::string &name) {
  for (const auto &device : metadata.step_stats().dev_stats()) {
    if (device.device() == name) return device;
  }
  FAIL("no device ", name);
  return metadata.step_stats().dev_stats(0);
}

std::vector<std::string> NodeNames(const tensorflow::DeviceStepStats &device) {
  std::vector<std::string> names;
  for (const auto &node : device.node_stats()) names.push_back(node.node_name());
  return names;
}

const tensorflow::NodeExecStats &Node(const tensorflow::DeviceStepStats &device,
                                      const std::string &label_prefix) {
  for (const auto &node : device.node_stats()) {
    if (node.timeline_label().rfind(label_prefix, 0) == 0) return node;
  }
  FAIL("no node labelled ", label_prefix, " on ", device.device());
  return device.node_stats(0);
}

const std::string kLossesLabel =
    "tfprof/losses = Losses(dropped_events=5, unmatched_span_ends=0, unmatched_step_ends=0, "
    "gpu_records_dropped=3, gpu_buffers_refused=1, gpu_records_unparsed=2, gpu_late_records=0, "
    "gpu_state=active, memory_dropped_events=0, discarded_events=0)";

}  // namespace

TEST_CASE("gpu export: json has a process per device, a row per stream, and Kineto's kernel args") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  const json trace = WriteJson(b, dir);

  CHECK(Meta(trace, "process_name", 0, 0) == json{{"name", "GPU 0"}});
  CHECK(Meta(trace, "process_labels", 0, 0) == json{{"labels", "NVIDIA H100 80GB HBM3"}});
  CHECK(Meta(trace, "process_sort_index", 0, 0) == json{{"sort_index", 5000000}});
  CHECK(Meta(trace, "process_name", 1, 0) == json{{"name", "GPU 1"}});
  CHECK(Meta(trace, "process_sort_index", 1, 0) == json{{"sort_index", 5000001}});
  CHECK(Meta(trace, "thread_name", 0, 7) == json{{"name", "stream 7"}});
  CHECK(Meta(trace, "thread_sort_index", 0, 7) == json{{"sort_index", 7}});
  CHECK(Meta(trace, "thread_name", 0, 8) == json{{"name", "stream 8"}});
  CHECK(Meta(trace, "thread_name", 1, 13) == json{{"name", "stream 13"}});
  CHECK(Meta(trace, "thread_name", 1, 14) == json{{"name", "stream 14"}});

  const json matmul = Only(trace, "X", "matmul(float*, float*, int)");  // demangled
  CHECK(matmul["cat"] == "kernel");
  CHECK(matmul["pid"] == 0);
  CHECK(matmul["tid"] == 7);
  CHECK(b.Offset(matmul["ts"]) == 3000);
  CHECK(matmul["dur"].get<double>() == doctest::Approx(1.0));
  const json expected_args = {{"device", 0},
                              {"context", 1},
                              {"stream", 7},
                              {"correlation", 10},
                              {"External id", kMatMulId},
                              {"registers per thread", 32},
                              {"shared memory", 3072},
                              {"static shared memory", 1024},
                              {"dynamic shared memory", 2048},
                              {"grid", {128, 0, 0}},
                              {"block", {256, 0, 0}},
                              {"op", kMatMul},
                              {"step", 1}};
  CHECK(matmul["args"] == expected_args);

  // Launched in step 1, ran mostly in step 2: it is step 1's.
  CHECK(Only(trace, "X", "late_kernel")["args"]["step"] == 1);
  // Launched outside steps, by "setup".
  const json init = Only(trace, "X", "init_kernel");
  CHECK(init["args"]["op"] == "setup");
  CHECK_FALSE(init["args"].contains("step"));
  // The driver launch from a thread with no span open: no op, no external id.
  const json relu = Only(trace, "X", "relu_kernel");
  CHECK(relu["args"]["step"] == 2);
  CHECK_FALSE(relu["args"].contains("op"));
  CHECK_FALSE(relu["args"].contains("External id"));
  for (const char *name : {"graph_a", "graph_b", "graph_c"}) {
    const json kernel = Only(trace, "X", name);
    CHECK(kernel["pid"] == 1);
    CHECK(kernel["tid"] == 13);
    CHECK(kernel["args"]["graph id"] == 77);
    CHECK(kernel["args"]["op"] == "forward");
    CHECK(kernel["args"]["step"] == 2);
  }
}

TEST_CASE("gpu export: json copies, memsets, API calls, syncs, overhead and memory") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  const json trace = WriteJson(b, dir);

  const json htod = Only(trace, "X", "Memcpy HtoD (Pinned -> Device)");
  CHECK(htod["cat"] == "gpu_memcpy");
  CHECK(htod["pid"] == 0);
  CHECK(htod["tid"] == 7);
  CHECK(htod["args"] == json{{"device", 0}, {"context", 1}, {"stream", 7}, {"correlation", 11},
                             {"External id", kMatMulId}, {"bytes", 4096},
                             {"memory bandwidth (GB/s)", 4.096}, {"kind", "HtoD"},
                             {"op", kMatMul}, {"step", 1}});
  const json dtoh = Only(trace, "X", "Memcpy DtoH (Device -> Pageable)");
  CHECK(dtoh["pid"] == 1);
  CHECK(dtoh["args"]["kind"] == "DtoH");
  const json peer = Only(trace, "X", "Memcpy PtoP (Device -> Device)");
  CHECK(peer["args"]["src device"] == 0);
  CHECK(peer["args"]["dst device"] == 1);
  CHECK(peer["args"]["memory bandwidth (GB/s)"] == 4000.0);
  const json memset = Only(trace, "X", "Memset (Device)");
  CHECK(memset["cat"] == "gpu_memset");
  CHECK(memset["tid"] == 8);
  CHECK(memset["args"] == json{{"device", 0}, {"context", 1}, {"stream", 8}, {"correlation", 23},
                               {"External id", kForwardId}, {"bytes", 512}, {"value", 7},
                               {"op", "forward"}, {"step", 2}});

  // API calls on their threads' rows; a thread with no host track gets a row of its own.
  const std::vector<json> launches = Events(trace, "X", "cudaLaunchKernel");
  REQUIRE(launches.size() == 3);
  for (const json &call : launches) {
    CHECK(call["cat"] == "cuda_runtime");
    CHECK(call["pid"] == kPid);
    CHECK(call["tid"] == kMainTid);
  }
  json first;
  for (const json &call : launches) {
    if (call["args"]["correlation"] == 10) first = call;
  }
  CHECK(first["args"] == json{{"cbid", 211}, {"correlation", 10}, {"External id", kMatMulId}, {"step", 1}});
  const json driver = Only(trace, "X", "cuLaunchKernel");
  CHECK(driver["cat"] == "cuda_driver");
  CHECK(driver["tid"] == kWorkerTid);
  CHECK(driver["args"] == json{{"cbid", 307}, {"correlation", 30}, {"step", 2}});
  const json sync_call = Only(trace, "X", "cudaStreamSynchronize");
  CHECK(sync_call["tid"] == kApiOnlyTid);
  CHECK(Meta(trace, "thread_name", kPid, kApiOnlyTid) == json{{"name", "thread 9999"}});

  const json stream_sync = Only(trace, "X", "Stream Sync");
  CHECK(stream_sync["cat"] == "cuda_sync");
  CHECK(stream_sync["pid"] == 0);
  CHECK(stream_sync["tid"] == 1000007);
  CHECK(Meta(trace, "thread_name", 0, 1000007) == json{{"name", "stream 7 sync"}});
  const json context_sync = Only(trace, "X", "Context Sync");
  CHECK(context_sync["pid"] == 1);  // context 2 ran device 1's work
  CHECK(context_sync["tid"] == 999999);
  CHECK(Meta(trace, "thread_name", 1, 999999) == json{{"name", "context sync"}});

  const json overhead = Only(trace, "X", "CUPTI buffer flush");
  CHECK(overhead["cat"] == "overhead");
  CHECK(overhead["pid"] == kPid);
  CHECK(Meta(trace, "thread_name", kPid, overhead["tid"].get<int64_t>()) ==
        json{{"name", "CUPTI overhead"}});
  CHECK(overhead["tid"] != kMainTid);

  std::vector<std::pair<int64_t, int64_t>> memory;  // (offset, bytes) of device 0
  for (const json &counter : Events(trace, "C", "GPU memory")) {
    CHECK(counter["tid"] == 0);
    if (counter["pid"] == 0) memory.emplace_back(b.Offset(counter["ts"]), counter["args"]["bytes in use"]);
    if (counter["pid"] == 1) CHECK(counter["args"]["bytes in use"] == 4096);
  }
  CHECK(memory == std::vector<std::pair<int64_t, int64_t>>{{1500, 1000000}, {2500, 3000000}, {6000, 2000000}});
}

TEST_CASE("gpu export: json flows from each launch to its first GPU work, and per-step stream spans") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  const json trace = WriteJson(b, dir);

  std::map<int64_t, json> starts;
  std::map<int64_t, json> finishes;
  for (const json &event : trace.at("traceEvents")) {
    if (event.value("cat", "") != "ac2g") continue;
    CHECK(event["name"] == "ac2g");
    std::map<int64_t, json> &side = event["ph"] == "s" ? starts : finishes;
    CHECK(side.emplace(event["id"].get<int64_t>(), event).second);  // one arrow per correlation
  }
  const std::vector<int64_t> ids = {10, 11, 12, 20, 21, 22, 23, 30, 50};
  CHECK(starts.size() == ids.size());
  CHECK(finishes.size() == ids.size());
  for (int64_t id : ids) {
    INFO("correlation ", id);
    REQUIRE(starts.count(id) == 1);
    REQUIRE(finishes.count(id) == 1);
    CHECK(starts[id]["pid"] == kPid);
    CHECK(finishes[id]["bp"] == "e");
    CHECK(finishes[id]["ts"].get<double>() >= starts[id]["ts"].get<double>());
  }
  CHECK(starts[30]["tid"] == kWorkerTid);
  CHECK(b.Offset(starts[20]["ts"]) == 11500);
  // The graph's arrow ends at its earliest kernel.
  CHECK(finishes[20]["pid"] == 1);
  CHECK(finishes[20]["tid"] == 13);
  CHECK(b.Offset(finishes[20]["ts"]) == 12000);

  std::map<std::tuple<int64_t, int64_t, std::string>, std::pair<int64_t, int64_t>> spans;
  for (const json &event : trace.at("traceEvents")) {
    if (event.value("cat", "") != "gpu_user_annotation") continue;
    CHECK(event["args"]["step"] == (event["name"] == "step 1" ? 1 : 2));
    const int64_t begin = b.Offset(event["ts"]);
    spans[{event["pid"], event["tid"], event["name"]}] = {
        begin, begin + std::llround(event["dur"].get<double>() * 1000.0)};
  }
  using Key = std::tuple<int64_t, int64_t, std::string>;
  const std::map<Key, std::pair<int64_t, int64_t>> expected = {
      {Key{0, 7, "step 1"}, {3000, 12000}},   // through the late kernel's end
      {Key{0, 7, "step 2"}, {17000, 17500}},
      {Key{0, 8, "step 2"}, {14000, 14700}},
      {Key{1, 13, "step 2"}, {12000, 13500}},
      {Key{1, 14, "step 2"}, {13600, 14000}}};
  CHECK(spans == expected);
}

TEST_CASE("gpu export: json metadata carries devices, GPU state and losses apart from host losses") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  const json trace = WriteJson(b, dir);
  CHECK(trace["dropped_events"] == 5);
  CHECK(trace["gpu_records_dropped"] == 3);
  REQUIRE(trace["deviceProperties"].size() == 2);
  CHECK(trace["deviceProperties"][0] == json{{"id", 0}, {"name", "NVIDIA H100 80GB HBM3"},
                                             {"totalGlobalMem", 85000000000}, {"computeMajor", 9},
                                             {"computeMinor", 0}, {"numSms", 132}});
  CHECK(trace["tfprof"]["gpu"] == json{{"state", "active"}, {"reason", ""},
                                       {"cupti", "/usr/local/cuda/lib64/libcupti.so.12"},
                                       {"records_dropped", 3}, {"buffers_refused", 1},
                                       {"records_unparsed", 2}, {"late_records", 0},
                                       {"kernels", 7}, {"memcpys", 3}, {"memsets", 1},
                                       {"api_calls", 10}});
}

TEST_CASE("gpu export: json of a host-only session says why GPU tracing was off") {
  TempDir dir;
  GpuTraceBuilder b;
  b.model.gpu.state = tfprof::GpuTracingState::kUnavailable;
  b.model.gpu.reason = "libcupti.so not found";
  const json trace = WriteJson(b, dir);
  CHECK_FALSE(trace.contains("deviceProperties"));
  CHECK(trace["gpu_records_dropped"] == 0);
  CHECK(trace["tfprof"]["gpu"]["state"] == "unavailable");
  CHECK(trace["tfprof"]["gpu"]["reason"] == "libcupti.so not found");
  for (const json &event : trace["traceEvents"]) CHECK(event["pid"] == kPid);
}

TEST_CASE("gpu export: GPU processes move aside when the host pid is a device id") {
  TempDir dir;
  GpuTraceBuilder b = BuildGpuTrace();
  b.context.pid = 1;  // the first process of a container
  const json trace = WriteJson(b, dir);
  CHECK(Meta(trace, "process_name", 1000000, 0) == json{{"name", "GPU 0"}});
  CHECK(Meta(trace, "process_name", 1000001, 0) == json{{"name", "GPU 1"}});
  CHECK(Only(trace, "X", "matmul(float*, float*, int)")["pid"] == 1000000);
  CHECK(Only(trace, "X", "cuLaunchKernel")["pid"] == 1);
}

TEST_CASE("gpu export: .pb has TensorFlow's GPU devices, kernel labels naming the op, and losses") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  const std::string path = dir.File("run.pb");
  REQUIRE(tfprof::ExportTrace(b.model, b.context, path).ok());
  const tensorflow::RunMetadata metadata = ParseRunMetadata(ReadFile(path));
  CHECK(DeviceNames(metadata) ==
        std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0",
                                 "/device:GPU:0/stream:all", "/device:GPU:0/stream:7",
                                 "/device:GPU:0/stream:8", "/device:GPU:0/memcpy",
                                 "/device:GPU:1/stream:all", "/device:GPU:1/stream:13",
                                 "/device:GPU:1/stream:14", "/device:GPU:1/memcpy"});
  const auto &all0 = Device(metadata, "/device:GPU:0/stream:all");
  CHECK(NodeNames(all0) == std::vector<std::string>{"model/dense/MatMul", "model/dense/MatMul",
                                                    "forward", "relu_kernel", "setup"});
  const tensorflow::NodeExecStats &matmul = Node(all0, "matmul(");
  CHECK(matmul.timeline_label() ==
        "matmul(float*, float*, int) regs:32 shm:3072 grid:128,0,0 block:256,0,0"
        "@@model/dense/MatMul:MatMul#");
  CHECK(matmul.all_start_micros() == b.WallMicros(3000));
  CHECK(matmul.all_end_rel_micros() == 1);
  CHECK(matmul.op_end_rel_micros() == 1);
  CHECK(matmul.all_start_nanos() == kWallBaseNs + 3000);
  CHECK(matmul.all_end_rel_nanos() == 1000);
  CHECK(matmul.scheduled_micros() == b.WallMicros(2500));
  CHECK(matmul.scheduled_nanos() == kWallBaseNs + 2500);
  CHECK(matmul.thread_id() == kMainTid);
  const tensorflow::NodeExecStats &relu = Node(all0, "relu_kernel");
  CHECK(relu.timeline_label() == "relu_kernel regs:32 shm:3072 grid:128,0,0 block:256,0,0");
  CHECK(relu.thread_id() == kWorkerTid);
  CHECK(Node(all0, "Memset").timeline_label() == "Memset bytes:512@@forward#");

  const auto &stream7 = Device(metadata, "/device:GPU:0/stream:7");
  CHECK(stream7.node_stats_size() == 5);  // 4 kernels and the HtoD copy
  const auto &memcpy0 = Device(metadata, "/device:GPU:0/memcpy");
  REQUIRE(memcpy0.node_stats_size() == 2);
  CHECK(memcpy0.node_stats(0).node_name() == "model/dense/MatMul");
  CHECK(memcpy0.node_stats(0).timeline_label() == "MemcpyHtoD bytes:4096@@model/dense/MatMul:MatMul#");
  CHECK(memcpy0.node_stats(1).timeline_label() == "MemcpyPtoP bytes:2000000@@forward#");
  CHECK(Device(metadata, "/device:GPU:1/stream:13").node_stats_size() == 3);
  CHECK(Device(metadata, "/device:GPU:1/memcpy").node_stats(0).timeline_label() ==
        "MemcpyDtoH bytes:1024@@forward#");

  const auto &host = metadata.step_stats().dev_stats(0);
  const tensorflow::NodeExecStats &losses = Node(host, "tfprof/losses");
  CHECK(losses.node_name() == tfprof::kLossesNodeName);
  CHECK(losses.timeline_label() == kLossesLabel);
  CHECK(losses.thread_id() == 0);
  CHECK(host.thread_names().at(0) == "tfprof");
}

TEST_CASE("gpu export: .tfrecord puts GPU work in the step that launched it") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  const std::string path = dir.File("run.tfrecord");
  REQUIRE(tfprof::ExportTrace(b.model, b.context, path).ok());
  const std::string bytes = ReadFile(path);
  tfprof::TfRecordReader reader(bytes);
  std::vector<tensorflow::RunMetadata> records;
  std::string_view record;
  while (reader.Next(&record).ok()) records.push_back(ParseRunMetadata(std::string(record)));
  REQUIRE(records.size() == 3);

  // Step 1: the MatMul kernel, its copy, and the kernel that ended in step 2's time.
  CHECK(DeviceNames(records[0]) ==
        std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0",
                                 "/device:GPU:0/stream:all", "/device:GPU:0/stream:7",
                                 "/device:GPU:0/memcpy"});
  std::vector<std::string> labels;
  for (const auto &node : Device(records[0], "/device:GPU:0/stream:7").node_stats()) {
    labels.push_back(node.timeline_label().substr(0, node.timeline_label().find(' ')));
  }
  CHECK(labels == std::vector<std::string>{"matmul(float*,", "MemcpyHtoD", "late_kernel"});
  // Step 2: the graph, the copies, the memset and the loader's kernel.
  CHECK(Device(records[1], "/device:GPU:1/stream:13").node_stats_size() == 3);
  CHECK(Device(records[1], "/device:GPU:0/stream:all").node_stats_size() == 2);
  CHECK(Device(records[1], "/device:GPU:0/memcpy").node_stats_size() == 1);
  // Outside steps: "setup", the CUDA call that launched its kernel (host nodes, as every API
  // call), the kernel, and the losses node.
  const auto &host = records[2].step_stats().dev_stats(0);
  CHECK(NodeNames(host) == std::vector<std::string>{"setup", "cudaLaunchKernel", "tfprof/losses"});
  CHECK(host.node_stats(2).timeline_label() == kLossesLabel);
  CHECK(NodeNames(Device(records[2], "/device:GPU:0/stream:all")) == std::vector<std::string>{"setup"});
}

TEST_CASE("gpu export: the converter reads our GPU .pb as timeline.py does, ops from the labels") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  REQUIRE(tfprof::ExportTrace(b.model, b.context, dir.File("run.pb")).ok());
  const tfprof::ConvertOptions options = tfprof::ParseConvertOptions("layout=timeline,rows=lanes").value();
  REQUIRE(tfprof::ConvertTrace(dir.File("run.pb"), dir.File("out.json"), options, nullptr).status.ok());
  const json trace = json::parse(ReadFile(dir.File("out.json")));
  std::map<int64_t, std::string> processes;
  for (const json &event : Events(trace, "M", "process_name")) {
    processes[event["pid"]] = event["args"]["name"];
  }
  std::multiset<std::tuple<std::string, std::string, std::string>> kernels;  // device, type, name
  for (const json &event : trace["traceEvents"]) {
    if (event["ph"] != "X" || event["cat"] != "Op") continue;
    const std::string &device = processes[event["pid"]];
    if (device == "/device:GPU:1/stream:13 Compute" || device == "/device:GPU:0/memcpy Compute") {
      kernels.emplace(device, event["name"], event["args"]["name"]);
    }
  }
  using Op = std::tuple<std::string, std::string, std::string>;
  CHECK(kernels == std::multiset<Op>{Op{"/device:GPU:1/stream:13 Compute", "unknown", "forward"},
                                     Op{"/device:GPU:1/stream:13 Compute", "unknown", "forward"},
                                     Op{"/device:GPU:1/stream:13 Compute", "unknown", "forward"},
                                     Op{"/device:GPU:0/memcpy Compute", "MatMul", "model/dense/MatMul"},
                                     Op{"/device:GPU:0/memcpy Compute", "unknown", "forward"}});
}

TEST_CASE("gpu export: a step waits for its GPU work, and work that comes later is counted late") {
  GpuTraceBuilder b;
  tfprof::StepPartitioner partitioner;
  b.StepBegin(0, 1000, 1);
  b.SpanBegin(0, 2000, kMatMul, kMatMulId);
  b.Call(kMainTid, 2500, 2600, 10, "cudaLaunchKernel", true, false, kMatMulId);
  b.Call(kMainTid, 2700, 2800, 11, "cudaLaunchKernel", true, false, kMatMulId);
  b.SpanEnd(0, 5000);
  b.StepEnd(0, 9000);
  b.Kernel(0, 7, 3000, 12000, 10, "long_kernel");  // runs past the step's end
  partitioner.Advance(b.model, b.context.converter);
  // The host side is settled, the GPU side only up to before the step's end: the step waits.
  CHECK(partitioner.TakeSettled(b.base + 50000, b.base + 8999).empty());
  std::vector<tfprof::StepRecord> records = partitioner.TakeSettled(b.base + 50000, b.base + 9000);
  REQUIRE(records.size() == 1);
  REQUIRE(records[0].gpu.size() == 1);
  const tfprof::GpuWork &work = records[0].gpu[0];
  CHECK(work.activity == 0);
  CHECK(work.launch_ns == b.base + 2500);
  CHECK(work.has_op);
  CHECK(b.model.names.Get(work.op.name) == kMatMul);
  CHECK(work.thread_id == kMainTid);

  // The second launch's kernel arrives after step 1 was written: the last record, counted late.
  b.Kernel(0, 7, 12500, 13000, 11, "straggler");
  // Work whose launch call has not arrived waits for it while the GPU side is incomplete.
  b.Kernel(0, 7, 40000, 41000, 60, "early_record");
  partitioner.Advance(b.model, b.context.converter);
  CHECK(partitioner.TakeSettled(b.base + 50000, b.base + 30000).empty());
  CHECK(partitioner.late_gpu_records() == 1);
  b.StepBegin(0, 39000, 2);
  b.Call(kMainTid, 39500, 39600, 60, "cudaLaunchKernel");
  b.StepEnd(0, 45000);
  partitioner.Advance(b.model, b.context.converter);
  records = partitioner.TakeAll(b.base + 60000);
  REQUIRE(records.size() == 2);
  CHECK(records[0].step.step == 2);
  REQUIRE(records[0].gpu.size() == 1);
  CHECK(records[0].gpu[0].activity == 2);
  CHECK_FALSE(records[0].gpu[0].has_op);
  CHECK_FALSE(records[1].has_step);
  REQUIRE(records[1].gpu.size() == 1);
  CHECK(records[1].gpu[0].activity == 1);
  CHECK(partitioner.late_gpu_records() == 1);
}

TEST_CASE("gpu export: a stream over the memory limit lets go of the GPU records it wrote, none "
          "lost from its file") {
  TempDir dir;
  GpuTraceBuilder b;
  b.model.gpu.state = tfprof::GpuTracingState::kActive;
  // 40,000 steps of one span launching one kernel: some 6 MB of GPU and host records.
  constexpr int kSteps = 40000;
  for (int step = 0; step < kSteps; ++step) {
    const int64_t at = int64_t{step} * 1000;
    const uint32_t correlation = static_cast<uint32_t>(step + 1);
    const uint64_t external_id = SpanExternalId(1, static_cast<uint64_t>(step + 1));
    b.StepBegin(0, at, step);
    b.SpanBegin(0, at + 10, "train", external_id);
    b.Call(kMainTid, at + 20, at + 30, correlation, "cudaLaunchKernel", true, false, external_id);
    b.Kernel(0, 7, at + 40, at + 80, correlation, "step_kernel");
    b.SpanEnd(0, at + 90);
    b.StepEnd(0, at + 100);
  }
  b.context.end_ns = b.base + int64_t{kSteps} * 1000 + 1000;
  const std::string path = dir.File("stream.json");
  absl::StatusOr<std::unique_ptr<tfprof::TraceStream>> stream =
      tfprof::TraceStream::Open(tfprof::Format::kChromeJson, path, b.context, nullptr);
  REQUIRE(stream.ok());
  (*stream)->Append(b.model, b.context, b.context.end_ns, tfprof::kGpuCompleteAlways);

  // Every step is written: every record is in the file, or no longer needed by the stream.
  const tfprof::LogPositions written = (*stream)->Written();
  CHECK(written.gpu_activities == kSteps);
  CHECK(written.gpu_api_calls == kSteps);
  CHECK(written.gpu_external_correlations == kSteps);
  REQUIRE(written.host_events.size() == 2);
  CHECK(written.host_events[0] == 4 * kSteps);
  tfprof::ReleaseWrittenRecords(b.model, 1, written);
  CHECK(b.model.gpu.activities.first_kept() == kSteps);
  CHECK(b.model.gpu.api_calls.first_kept() == kSteps);
  CHECK(b.model.tracks[0].events.first_kept() == 4 * kSteps);
  CHECK(b.model.store.records_released == uint64_t{7} * kSteps);  // 4 host, call, link, kernel
  CHECK(b.model.store.resident_bytes < int64_t{1} << 20);

  REQUIRE((*stream)->Finish(b.model, b.context).ok());
  const json trace = json::parse(ReadFile(path));
  size_t kernels = 0;
  size_t launches_under_train = 0;
  for (const json &event : trace.at("traceEvents")) {
    if (event.value("cat", "") == "kernel" && event.value("name", "") == "step_kernel") ++kernels;
    if (event.value("cat", "") == "cuda_runtime" && event.contains("args") &&
        event["args"].contains("External id")) {
      ++launches_under_train;
    }
  }
  CHECK(kernels == kSteps);
  CHECK(launches_under_train == kSteps);
}

TEST_CASE("gpu export: CUPTI's allocation records read back as each GPU's memory in use") {
  TempDir dir;
  const GpuTraceBuilder b = BuildGpuTrace();
  const std::string path = dir.File("memory.json");
  REQUIRE(tfprof::ExportTrace(b.model, b.context, path).ok());
  const std::vector<tfprof::MemorySeries> series =
      tfprof::MemoryInUse(tfprof_test::MustLoad(path));
  REQUIRE(series.size() == 2);
  std::map<int32_t, const tfprof::MemorySeries *> by_device;
  for (const tfprof::MemorySeries &one : series) by_device[one.device] = &one;
  REQUIRE(by_device.count(0) == 1);
  REQUIRE(by_device.count(1) == 1);
  const tfprof::MemorySeries &gpu0 = *by_device[0];
  CHECK(gpu0.source == "CUPTI allocations");
  CHECK(gpu0.label == "GPU 0");
  // Allocations of 1 MB at 1.5 us and 2 MB at 2.5 us, the first released at 6 us.
  REQUIRE(gpu0.samples.size() == 3);
  CHECK(gpu0.samples[0].bytes == 1000000);
  CHECK(gpu0.samples[1].bytes == 3000000);
  CHECK(gpu0.samples[2].bytes == 2000000);
  CHECK(gpu0.samples[2].delta == -1000000);
  REQUIRE(by_device[1]->samples.size() == 1);
  CHECK(by_device[1]->samples[0].bytes == 4096);
}
