// Writes a tfprof Chrome trace of GPU work without a GPU: CUPTI activity records built from the
// real CUpti_Activity* structs of the CUDA headers go through the tracer's buffer-completed path
// (the real libcupti's cuptiActivityGetNextRecord walks them) and the real Chrome trace writer,
// next to host steps and spans as the collector leaves them in the trace model.
// Usage: synthetic_gpu_trace OUTPUT.json   (prints nothing on success; errors go to stderr)
//
// The layout is fixed, so tests can check exact numbers. The monotonic clock converts ticks to
// nanoseconds one to one, so every timestamp is exact: `ts` = 1000000000 + the offset below, in
// microseconds. Process 4242 ("trainer"), thread 1001 ("main"); device 0 ("NVIDIA H100 80GB
// HBM3"), streams 7 and 13. Each step has one span "forward" whose launches carry its external id.
//
//   step 1 [0, 100)    forward [5, 60)
//     corr 1  cudaMemcpyAsync  [10, 12) -> Memcpy HtoD 1 MiB, pinned -> device, stream 13 [20, 30)
//     corr 2  cudaLaunchKernel [12, 14) -> gemm  stream 7  [30, 50)
//     corr 3  cudaLaunchKernel [14, 16) -> relu  stream 13 [40, 60)
//   step 2 [100, 200)  forward [105, 160)
//     corr 4  cudaMemsetAsync  [106, 108) -> Memset 512 B, device, stream 7 [110, 115)
//     corr 5  cudaLaunchKernel [108, 110) -> gemm  stream 7  [120, 160)
//     corr 6  cudaLaunchKernel [110, 112) -> relu  stream 13 [130, 140)
//   step 3 [200, 300)  forward [205, 260)
//     corr 7  cudaLaunchKernel [206, 208) -> gemm  stream 7  [210, 240)
//     corr 8  cudaMemcpyAsync  [208, 210) -> Memcpy DtoH 4096 B, device -> pageable, stream 13 [250, 270)
//   the session ends at 300.
//
// So: 5 kernels (gemm 20 + 40 + 30 us, relu 20 + 10 us), 2 copies, 1 memset, 8 launch calls.
// GPU work spans [20, 270) = 250 us; busy (all streams merged) [20, 60) [110, 115) [120, 160)
// [210, 240) [250, 270) = 135 us, so 115 us idle; kernels merged [30, 60) [120, 160) [210, 240)
// = 100 us of compute; copies and the memset 35 us.
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/collector/clock.h"
#include "runtime/gpu/cupti/cupti_library.h"
#include "runtime/gpu/cupti/gpu_collector.h"
#include "runtime/export/exporter.h"
#include "runtime/gpu/gpu_trace.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/session/session_log.h"
#include "support/cupti_record_builders.h"
#include "support/export_context_builder.h"

namespace {

using tfprof_test::AddApi;
using tfprof_test::AddCopy;
using tfprof_test::AddExternal;
using tfprof_test::AddKernel;
using tfprof_test::AddMemset;
using tfprof_test::RecordWriter;

constexpr int64_t kBaseNs = 1000000000000;  // 1000 s of CLOCK_MONOTONIC: ts 1000000000 us
constexpr int64_t kPid = tfprof_test::kTrainerPid;
constexpr int64_t kMainTid = 1001;
constexpr uint32_t kComputeStream = 7;
constexpr uint32_t kCopyStream = 13;
constexpr char kGemm[] = "_Z4gemmPKfS0_Pfi";  // gemm(float const*, float const*, float*, int)
constexpr char kRelu[] = "_Z4reluPfi";        // relu(float*, int)

uint64_t At(int64_t micros) { return static_cast<uint64_t>(kBaseNs + micros * 1000); }

class SyntheticTrace {
 public:
  SyntheticTrace(RecordWriter &records, tfprof::SessionLog &model)
      : records_(records), model_(model), main_(model.AddTrack(kMainTid)) {
    model_.tracks[main_].name = "main";
  }

  // Host events go into the thread's track in time order, as the collector drains them.
  void StepBegin(int64_t at, int64_t step) {
    Host(at, static_cast<uint64_t>(step), 0, tfprof::EventKind::kStepBegin);
  }
  void StepEnd(int64_t at) { Host(at, 0, 0, tfprof::EventKind::kStepEnd); }
  void SpanBegin(int64_t at, const char *name) {
    external_ = tfprof::SpanExternalId(1, ++spans_);
    Host(at, external_, model_.names.Intern(name), tfprof::EventKind::kSpanBegin);
  }
  void SpanEnd(int64_t at) { Host(at, 0, 0, tfprof::EventKind::kSpanEnd); }

  // A step of the main thread holding one span "forward" from 5 us into the step to `span_end`;
  // `body` records the calls and GPU work inside the span.
  template <typename Body>
  void ForwardStep(int64_t step, int64_t begin, int64_t span_end, int64_t end, Body body) {
    StepBegin(begin, step);
    SpanBegin(begin + 5, "forward");
    body();
    SpanEnd(span_end);
    StepEnd(end);
  }

  // A runtime API call of 2 us on the main thread, inside the open span: CUPTI's record of the
  // call and the external correlation record that ties it to the span.
  void Launch(CUpti_runtime_api_trace_cbid cbid, uint32_t correlation, int64_t begin) {
    AddApi(records_, false, cbid, correlation, At(begin), At(begin + 2), kMainTid).processId =
        static_cast<uint32_t>(kPid);
    AddExternal(records_, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, correlation, external_);
  }

  // cudaLaunchKernel at `launch_at`, and the kernel it launched.
  void LaunchKernel(const char *name, uint32_t correlation, int64_t launch_at, uint32_t stream,
                    int64_t begin, int64_t end) {
    Launch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, correlation, launch_at);
    AddKernel(records_, name, correlation, At(begin), At(end), stream);
  }

  void Copy(CUpti_ActivityMemcpyKind kind, CUpti_ActivityMemoryKind from,
            CUpti_ActivityMemoryKind to, uint64_t bytes, uint32_t correlation, int64_t begin,
            int64_t end) {
    AddCopy(records_, kind, from, to, bytes, correlation, At(begin), At(end), kCopyStream);
  }

  void Memset(uint64_t bytes, uint32_t correlation, int64_t begin, int64_t end) {
    AddMemset(records_, bytes, correlation, At(begin), At(end), kComputeStream);
  }

 private:
  void Host(int64_t at, uint64_t arg, uint32_t name, tfprof::EventKind kind) {
    model_.tracks[main_].events.Append(tfprof::Event{At(at), arg, name, kind, 0});
    ++model_.events_recorded;
  }

  RecordWriter &records_;
  tfprof::SessionLog &model_;
  size_t main_;
  uint32_t spans_ = 0;
  uint64_t external_ = 0;
};

// The layout in the comment at the top of this file.
void BuildLayout(SyntheticTrace &trace) {
  constexpr auto kMemcpy = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
  constexpr auto kMemset = CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020;

  trace.ForwardStep(1, 0, 60, 100, [&] {
    trace.Launch(kMemcpy, 1, 10);
    trace.Copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1 << 20, 1, 20, 30);
    trace.LaunchKernel(kGemm, 2, 12, kComputeStream, 30, 50);
    trace.LaunchKernel(kRelu, 3, 14, kCopyStream, 40, 60);
  });
  trace.ForwardStep(2, 100, 160, 200, [&] {
    trace.Launch(kMemset, 4, 106);
    trace.Memset(512, 4, 110, 115);
    trace.LaunchKernel(kGemm, 5, 108, kComputeStream, 120, 160);
    trace.LaunchKernel(kRelu, 6, 110, kCopyStream, 130, 140);
  });
  trace.ForwardStep(3, 200, 260, 300, [&] {
    trace.LaunchKernel(kGemm, 7, 206, kComputeStream, 210, 240);
    trace.Launch(kMemcpy, 8, 208);
    trace.Copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
               CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 4096, 8, 250, 270);
  });
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: synthetic_gpu_trace OUTPUT.json\n");
    return 2;
  }
  absl::StatusOr<const tfprof::CuptiApi *> cupti = tfprof::LoadCupti("", {});
  if (!cupti.ok()) {
    std::fprintf(stderr, "synthetic_gpu_trace: %s\n",
                 std::string(tfprof::ToStd(cupti.status().message())).c_str());
    return 1;
  }

  tfprof::GpuOptions options;
  options.buffers = 1;
  options.buffer_kb = 64;
  tfprof::CuptiGpuTracer tracer(**cupti, options);
  size_t size = 0;
  uint8_t *buffer = tracer.TakeBuffer(&size);
  if (buffer == nullptr) {
    std::fprintf(stderr, "synthetic_gpu_trace: no activity buffer\n");
    return 1;
  }
  RecordWriter records(buffer, size);
  tfprof::SessionLog model;
  SyntheticTrace trace(records, model);
  BuildLayout(trace);
  tracer.OnBufferCompleted(buffer, records.used(), 0);
  tracer.MoveRecordsInto(model.gpu);
  // What starting GPU tracing records besides CUPTI's activity: the driver's device list.
  model.gpu.state = tfprof::GpuTracingState::kActive;
  model.gpu.library_path = (*cupti)->path;
  model.gpu.devices.push_back({0, "NVIDIA H100 80GB HBM3", 85045231616, 9, 0, 132});

  tfprof::ExportContext context = tfprof_test::TrainerContext();
  context.start_monotonic_ns = kBaseNs;
  context.start_wall_ns = 1700000000000000000;
  context.end_ns = kBaseNs + 300000;
  context.events_recorded = model.events_recorded;
  const absl::Status written = tfprof::ExportTrace(model, context, argv[1]);
  if (!written.ok()) {
    std::fprintf(stderr, "synthetic_gpu_trace: %s\n",
                 std::string(tfprof::ToStd(written.message())).c_str());
    return 1;
  }
  return 0;
}
