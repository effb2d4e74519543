// CUPTI records without a GPU: activity buffers built from the real CUpti_Activity* structs of the
// CUDA 13 headers go through the tracer's buffer-completed path, where the real libcupti's
// cuptiActivityGetNextRecord walks them, and on into the trace model and the Chrome trace.
#include <cupti.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/gpu/cupti/activity_parser.h"
#include "runtime/gpu/cupti/api_selection.h"
#include "runtime/gpu/cupti/cupti_library.h"
#include "runtime/gpu/cupti/gpu_collector.h"
#include "runtime/export/exporter.h"
#include "runtime/export/gpu_display_names.h"
#include "runtime/model/gpu_names.h"
#include "runtime/gpu/gpu_trace.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/session/session_log.h"
#include "support/cupti_record_builders.h"
#include "support/test_files.h"

namespace {

using nlohmann::json;
using tfprof::CuptiGpuTracer;
using tfprof::GpuActivity;
using tfprof::GpuActivityKind;
using tfprof::GpuCopyKind;
using tfprof::GpuMemoryKind;
using tfprof::GpuOptions;
using tfprof::GpuTrace;
using tfprof_test::AddApi;
using tfprof_test::AddCopy;
using tfprof_test::AddExternal;
using tfprof_test::AddKernel;
using tfprof_test::AddMemory;
using tfprof_test::AddMemset;
using tfprof_test::AddPeerCopy;
using tfprof_test::RecordWriter;

const tfprof::CuptiApi &RealCupti() {
  static const tfprof::CuptiApi *api = [] {
    absl::StatusOr<const tfprof::CuptiApi *> loaded = tfprof::LoadCupti("", {});
    INFO(std::string(tfprof::ToStd(loaded.status().message())));
    REQUIRE(loaded.ok());  // the CUDA toolkit this was built against ships libcupti
    return *loaded;
  }();
  return *api;
}

GpuOptions SmallPool(uint32_t buffers) {
  GpuOptions options;
  options.buffers = buffers;
  options.buffer_kb = 64;
  return options;
}

// Hands a written buffer back through the tracer's buffer-completed path and moves its records.
void Complete(CuptiGpuTracer &tracer, uint8_t *buffer, const RecordWriter &writer,
              uint64_t dropped, GpuTrace &trace) {
  tracer.OnBufferCompleted(buffer, writer.used(), dropped);
  tracer.MoveRecordsInto(trace);
}

TEST_CASE("every record kind is read by libcupti's iterator into tfprof's records") {
  CuptiGpuTracer tracer(RealCupti(), SmallPool(4));
  size_t size = 0;
  uint8_t *buffer = tracer.TakeBuffer(&size);
  REQUIRE(buffer != nullptr);
  REQUIRE(size == 64 * 1024);
  RecordWriter writer(buffer, size);

  AddKernel(writer, "_Z6vecAddPfS_S_i", 11, 5000, 6000, 13);
  AddCopy(writer, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
          CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1 << 20, 12, 7000, 8000, 14);
  AddPeerCopy(writer, 4096, 13, 8100, 8200, /*from_device=*/1, /*to_device=*/0, 20);
  AddMemset(writer, 512, 14, 9000, 9100, 13).value = 0xab;
  AddApi(writer, false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, 4000, 4500, 777);
  AddApi(writer, true, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 15, 4600, 4700, 777);
  AddApi(writer, false, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 16, 4800, 4810, 778);
  AddExternal(writer, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 11, 0x100000002);
  AddExternal(writer, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 11, 99);  // another tool's: ignored
  auto &sync = writer.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.start = 9500;
  sync.end = 9900;
  sync.streamId = 13;
  sync.correlationId = 17;
  auto &overhead = writer.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  overhead.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  overhead.objectId.pt.threadId = 777;
  overhead.start = 10000;
  overhead.end = 10100;
  AddMemory(writer, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
            CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1 << 24, 0x7f0000000000, 3000);
  AddMemory(writer, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
            1 << 24, 0x7f0000000000, 11000);
  // Host memory: not the device counter.
  AddMemory(writer, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
            CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 64, 0, 0);
  auto &marker = writer.Add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  marker.timestamp = 1;

  GpuTrace trace;
  Complete(tracer, buffer, writer, /*dropped=*/3, trace);

  REQUIRE(trace.activities.size() == 4);
  const GpuActivity &kernel = trace.activities[0];
  CHECK(kernel.kind == GpuActivityKind::kKernel);
  CHECK(trace.names.Get(kernel.name) == "_Z6vecAddPfS_S_i");
  CHECK(kernel.start_ticks == 5000);
  CHECK(kernel.end_ticks == 6000);
  CHECK(kernel.stream == 13);
  CHECK(kernel.context == 1);
  CHECK(kernel.correlation == 11);
  CHECK(kernel.grid[0] == 128);
  CHECK(kernel.grid[1] == 2);
  CHECK(kernel.block[0] == 256);
  CHECK(kernel.registers == 40);
  CHECK(kernel.static_shared == 1024);
  CHECK(kernel.dynamic_shared == 2048);

  const GpuActivity &htod = trace.activities[1];
  CHECK(htod.kind == GpuActivityKind::kMemcpy);
  CHECK(htod.copy_kind == GpuCopyKind::kHtoD);
  CHECK(htod.src_memory == GpuMemoryKind::kPinned);
  CHECK(htod.dst_memory == GpuMemoryKind::kDevice);
  CHECK(htod.bytes == (1u << 20));
  CHECK(htod.stream == 14);

  const GpuActivity &ptop = trace.activities[2];
  CHECK(ptop.copy_kind == GpuCopyKind::kPtoP);
  CHECK(ptop.device == 1);
  CHECK(ptop.peer_device == 0);
  CHECK(ptop.bytes == 4096);

  const GpuActivity &set = trace.activities[3];
  CHECK(set.kind == GpuActivityKind::kMemset);
  CHECK(set.memset_value == 0xab);
  CHECK(set.bytes == 512);
  CHECK(set.src_memory == GpuMemoryKind::kDevice);
  // The exported name reads the field the parser fills (they once disagreed: "Memset (Unknown)").
  CHECK(MemsetDisplayName(set) == "Memset (Device)");

  REQUIRE(trace.api_calls.size() == 3);
  // libcupti names the callback ids; the version suffix is dropped.
  CHECK(trace.names.Get(trace.api_calls[0].name) == "cudaLaunchKernel");
  CHECK_FALSE(trace.api_calls[0].driver);
  CHECK(trace.api_calls[0].launches_work);
  CHECK(trace.api_calls[0].os_tid == 777);
  CHECK(trace.api_calls[0].correlation == 11);
  CHECK(trace.names.Get(trace.api_calls[1].name) == "cuLaunchKernel");
  CHECK(trace.api_calls[1].driver);
  CHECK(trace.api_calls[1].launches_work);
  CHECK(trace.names.Get(trace.api_calls[2].name) == "cudaGetDevice");
  CHECK_FALSE(trace.api_calls[2].launches_work);

  REQUIRE(trace.external_correlations.size() == 1);
  CHECK(trace.external_correlations[0].correlation == 11);
  CHECK(trace.external_correlations[0].external_id == 0x100000002);

  REQUIRE(trace.syncs.size() == 1);
  CHECK(trace.syncs[0].kind == tfprof::GpuSyncKind::kStream);
  CHECK(trace.syncs[0].stream == 13);
  REQUIRE(trace.overheads.size() == 1);
  CHECK(trace.overheads[0].os_tid == 777);
  CHECK(trace.names.Get(trace.overheads[0].name) == "CUPTI overhead: buffer flush");
  REQUIRE(trace.memory_changes.size() == 2);
  CHECK(trace.memory_changes[0].bytes == (1 << 24));
  CHECK(trace.memory_changes[1].bytes == -(1 << 24));

  CHECK(trace.losses.records_unparsed == 1);  // the marker
  CHECK(trace.losses.records_dropped == 3);
  CHECK(trace.losses.buffers_refused == 0);
}

TEST_CASE("an exhausted buffer pool refuses CUPTI and counts it - returned buffers are lent again") {
  CuptiGpuTracer tracer(RealCupti(), SmallPool(2));
  size_t size = 0;
  uint8_t *first = tracer.TakeBuffer(&size);
  uint8_t *second = tracer.TakeBuffer(&size);
  REQUIRE(first != nullptr);
  REQUIRE(second != nullptr);
  CHECK(tracer.TakeBuffer(&size) == nullptr);
  CHECK(size == 0);
  CHECK(tracer.TakeBuffer(&size) == nullptr);

  RecordWriter writer(first, 64 * 1024);
  AddKernel(writer, "k", 1, 10, 20, 7);
  GpuTrace trace;
  Complete(tracer, first, writer, 0, trace);
  CHECK(trace.losses.buffers_refused == 2);
  CHECK(trace.activities.size() == 1);
  CHECK(tracer.TakeBuffer(&size) == first);  // back in the pool

  // Counts add up over buffers, and a refusal is counted once.
  RecordWriter empty(second, 64 * 1024);
  Complete(tracer, second, empty, 5, trace);
  CHECK(trace.losses.records_dropped == 5);
  CHECK(trace.losses.buffers_refused == 2);
  // Every buffer back: a tracer destroyed with one out keeps its pool alive on purpose (CUPTI may
  // still write it), which LeakSanitizer would report.
  RecordWriter last(first, 64 * 1024);
  Complete(tracer, first, last, 0, trace);
}

TEST_CASE("function names: version suffixes dropped, launches recognised") {
  CHECK(tfprof::ApiFunctionName("cudaLaunchKernel_v7000") == "cudaLaunchKernel");
  CHECK(tfprof::ApiFunctionName("cudaLaunchKernel_ptsz_v7000") == "cudaLaunchKernel_ptsz");
  CHECK(tfprof::ApiFunctionName("cuLaunchKernel") == "cuLaunchKernel");
  CHECK(tfprof::ApiFunctionName("cuMemcpyHtoD_v2") == "cuMemcpyHtoD");
  CHECK(tfprof::ApiFunctionName("weird_v") == "weird_v");
  CHECK(tfprof::LaunchesGpuWork("cudaGraphLaunch"));
  CHECK(tfprof::LaunchesGpuWork("cuLaunchKernelEx"));
  CHECK(tfprof::LaunchesGpuWork("cudaMemcpyAsync"));
  CHECK(tfprof::LaunchesGpuWork("cuMemsetD32Async"));
  CHECK_FALSE(tfprof::LaunchesGpuWork("cudaStreamSynchronize"));
  CHECK_FALSE(tfprof::LaunchesGpuWork("cudaMalloc"));
}

// Every runtime and driver function as the real libcupti names it: the state queries frameworks
// call around each launch are skipped, and nothing that launches, copies, sets, synchronises,
// allocates or orders work is. (Which functions CUPTI then records is checked on a GPU by
// tests/gpu: every launch call of the example is in its trace.)
TEST_CASE("state queries are skipped, every function that does work is kept") {
  const tfprof::CuptiApi &api = RealCupti();
  std::vector<std::string> skipped, kept;
  const auto classify = [&](CUpti_CallbackDomain domain, uint32_t end) {
    for (uint32_t id = 1; id < end; ++id) {
      const char *name = nullptr;
      if (api.GetCallbackName(domain, id, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      const std::string function(tfprof::ApiFunctionName(name));
      (tfprof::IsStateQuery(function) ? skipped : kept).push_back(function);
      if (tfprof::LaunchesGpuWork(function)) CHECK_MESSAGE(!tfprof::IsStateQuery(function), function);
    }
  };
  classify(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  classify(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  const auto has = [](const std::vector<std::string> &names, const char *name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  // What PyTorch calls around each kernel (seen on an H200: 11 of its 13 API records a kernel).
  for (const char *query : {"cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError",
                            "cudaGetErrorString", "cudaStreamIsCapturing", "cudaPointerGetAttributes",
                            "cudaDeviceGetAttribute", "cudaFuncGetAttributes", "cuCtxGetCurrent",
                            "cuDevicePrimaryCtxGetState", "cuKernelGetName", "cuKernelGetFunction",
                            "cuDeviceTotalMem", "cuDeviceGetCount", "cuDeviceGetAttribute",
                            "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"}) {
    CHECK_MESSAGE(has(skipped, query), query);
  }
  for (const char *work : {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaGraphLaunch",
                           "cuLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaMalloc",
                           "cudaFree", "cudaMallocAsync", "cudaStreamSynchronize",
                           "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaEventRecord",
                           "cudaStreamWaitEvent", "cudaEventQuery", "cudaFuncSetAttribute",
                           "cudaGraphInstantiate", "cuModuleLoadData", "cuMemAlloc"}) {
    CHECK_MESSAGE(has(kept, work), work);
  }
  CHECK(skipped.size() > 100);
  CHECK(kept.size() > skipped.size());
}

// The whole way from CUPTI's bytes to the Chrome trace: a span pushes its external id, its launch
// call and kernel arrive in a buffer, and the kernel (which runs after its step ended) shows up on
// its stream's row, under its op and in the step that launched it, linked from the launch call.
TEST_CASE("records from a buffer reach the Chrome trace on the host clock, in their launch step") {
  tfprof_test::TempDir dir;
  const tfprof::ClockSource clock =
      tfprof::TscIsReliable() ? tfprof::ClockSource::kTsc : tfprof::ClockSource::kMonotonic;
  tfprof::ExportContext context;
  context.pid = 4242;
  context.process_name = "trainer";
  context.clock = clock;
  context.converter = tfprof::TickConverter::Start(clock);
  const uint64_t t0 = tfprof::ReadTicksFrom(clock);
  // Ticks for host events and GPU records alike (CUPTI stamps through tfprof's clock).
  auto at = [&](uint64_t offset) { return t0 + offset * 1000; };
  context.end_ns = context.converter.ToNs(at(100));

  tfprof::SessionLog model;
  const uint32_t op = model.names.Intern("matmul:MatMul");
  const uint64_t external = tfprof::SpanExternalId(1, 1);
  const size_t track = model.AddTrack(777);
  tfprof::ThreadLog &host = model.tracks[track];
  host.events.Append({at(10), 7, 0, tfprof::EventKind::kStepBegin, 0});
  host.events.Append({at(11), external, op, tfprof::EventKind::kSpanBegin, 0});
  host.events.Append({at(15), 0, 0, tfprof::EventKind::kSpanEnd, 0});
  host.events.Append({at(20), 0, 0, tfprof::EventKind::kStepEnd, 0});
  host.events.Append({at(30), 8, 0, tfprof::EventKind::kStepBegin, 0});
  host.events.Append({at(40), 0, 0, tfprof::EventKind::kStepEnd, 0});

  CuptiGpuTracer tracer(RealCupti(), SmallPool(2));
  size_t size = 0;
  uint8_t *buffer = tracer.TakeBuffer(&size);
  RecordWriter writer(buffer, size);
  AddApi(writer, false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 42, at(12), at(13), 777);
  AddExternal(writer, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42, external);
  // Runs from step 8's time on: it still belongs to step 7, which launched it.
  AddKernel(writer, "_Z4gemmPKfS0_Pfi", 42, at(32), at(35), 13);
  Complete(tracer, buffer, writer, 2, model.gpu);
  model.gpu.state = tfprof::GpuTracingState::kActive;

  const std::string path = dir.File("gpu.json");
  REQUIRE(tfprof::ExportTrace(model, context, path).ok());
  const json trace = json::parse(tfprof_test::ReadFile(path));

  auto us = [&](uint64_t ticks) { return static_cast<double>(context.converter.ToNs(ticks)) / 1000.0; };
  const json *kernel = nullptr;
  const json *launch = nullptr;
  const json *flow_start = nullptr;
  const json *flow_end = nullptr;
  int step_spans_on_stream = 0;
  for (const json &event : trace["traceEvents"]) {
    const std::string cat = event.value("cat", "");
    if (cat == "kernel") kernel = &event;
    if (cat == "cuda_runtime") launch = &event;
    if (cat == "ac2g" && event["ph"] == "s") flow_start = &event;
    if (cat == "ac2g" && event["ph"] == "f") flow_end = &event;
    if (cat == "gpu_user_annotation" && event["tid"] == 13) {
      ++step_spans_on_stream;
      CHECK(event["name"] == "step 7");
    }
  }
  REQUIRE(kernel != nullptr);
  CHECK((*kernel)["name"] == "gemm(float const*, float const*, float*, int)");
  CHECK((*kernel)["pid"] == 0);
  CHECK((*kernel)["tid"] == 13);
  CHECK((*kernel)["args"]["op"] == "matmul:MatMul");
  CHECK((*kernel)["args"]["step"] == 7);
  CHECK((*kernel)["args"]["correlation"] == 42);
  CHECK((*kernel)["args"]["grid"] == json::array({128, 2, 1}));
  CHECK((*kernel)["args"]["registers per thread"] == 40);
  CHECK((*kernel)["args"]["shared memory"] == 3072);
  // The same converter as host events: GPU ticks land on the host's time line.
  CHECK((*kernel)["ts"].get<double>() == doctest::Approx(us(at(32))).epsilon(1e-12));
  // Within a nanosecond: begin and end are each rounded to whole nanoseconds.
  CHECK(std::abs((*kernel)["dur"].get<double>() - (us(at(35)) - us(at(32)))) <= 0.0011);

  REQUIRE(launch != nullptr);
  CHECK((*launch)["name"] == "cudaLaunchKernel");
  CHECK((*launch)["pid"] == 4242);
  CHECK((*launch)["tid"] == 777);
  CHECK((*launch)["args"]["correlation"] == 42);

  REQUIRE(flow_start != nullptr);
  REQUIRE(flow_end != nullptr);
  CHECK((*flow_start)["id"] == 42);
  CHECK((*flow_end)["id"] == 42);
  CHECK((*flow_start)["tid"] == 777);
  CHECK((*flow_end)["tid"] == 13);
  CHECK((*flow_end)["bp"] == "e");
  CHECK((*flow_start)["ts"].get<double>() <= (*flow_end)["ts"].get<double>());
  CHECK(step_spans_on_stream == 1);

  CHECK(trace["tfprof"]["gpu"]["state"] == "active");
  CHECK(trace["tfprof"]["gpu"]["records_dropped"] == 2);
  CHECK(trace["gpu_records_dropped"] == 2);
}

}  // namespace
