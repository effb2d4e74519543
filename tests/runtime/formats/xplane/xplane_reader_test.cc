// The XPlane reader: XSpaces built with the generated tensorflow::profiler classes (the proto
// subset that is wire-compatible with TensorFlow's), written to a file, read back through
// LoadTrace (format detection included) and checked activity by activity.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/formats/trace_reader.h"
#include "runtime/formats/xplane/xplane_reader.h"
#include "runtime/model/trace.h"
#include "support/test_files.h"
#include "support/xplane_space_builder.h"

namespace {

namespace xp = tensorflow::profiler;
using tfprof::Activity;
using tfprof::ActivityKind;
using tfprof::Format;
using tfprof::LoadOptions;
using tfprof::LoadTrace;
using tfprof::Trace;
using tfprof::TrackKind;
using tfprof_test::PlaneBuilder;
using tfprof_test::TempDir;
using tfprof_test::WriteXSpace;

Trace Load(const std::string &path) {
  absl::StatusOr<Trace> trace = LoadTrace(path, LoadOptions{});
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  return std::move(*trace);
}

std::vector<const Activity *> OfKind(const Trace &trace, ActivityKind kind) {
  std::vector<const Activity *> found;
  for (const Activity &activity : trace.activities) {
    if (activity.kind == kind) found.push_back(&activity);
  }
  return found;
}

// A GPU host as TensorFlow 2.x saves it: a step, a launch and its kernel, a copy, derived lines.
xp::XSpace GpuHost(const std::string &hostname, uint64_t start_time_ns) {
  xp::XSpace space;
  {
    PlaneBuilder gpu(space, "/device:GPU:1", 1);
    xp::XLine &stream = gpu.Line(7, "Stream #7(Compute,MemcpyH2D)", 2000);
    xp::XEvent &kernel = gpu.Event(stream, "void gemm<float>(float*)", 500, 300);
    gpu.Uint(kernel.mutable_stats(), "correlation_id", 41);
    gpu.Str(kernel.mutable_stats(), "context_id", "$$3");
    gpu.Ref(kernel.mutable_stats(), "kernel_details",
            "regs:40 static_shared:128 dynamic_shared:256 grid:12,2,1 block:128,1,1 occ_pct:50");
    gpu.Ref(kernel.mutable_stats(), "tf_op", "dense/MatMul:MatMul");
    xp::XEvent &copy = gpu.Event(stream, "MemcpyH2D", 900, 50);
    gpu.Ref(copy.mutable_stats(), "memcpy_details",
            "kind_src:pageable kind_dst:device size:8192 dest:1 async:0");
    // Derived by TensorFlow from the stream: the same kernel again.
    xp::XLine &ops = gpu.Line(-559038734, "TensorFlow Ops", 2000);
    gpu.Event(ops, "dense/MatMul", 500, 300);
    gpu.Int(gpu.plane().mutable_stats(), "core_count", 132);
    gpu.Int(gpu.plane().mutable_stats(), "compute_cap_major", 9);
  }
  {
    PlaneBuilder host(space, "/host:CPU");
    xp::XLine &main = host.Line(100, "python3", 1000);
    xp::XEvent &step = host.Event(main, "train", 0, 2000);
    host.Int(step.mutable_stats(), "_r", 1);
    host.Int(step.mutable_stats(), "step_num", 5);
    host.Event(main, "IteratorGetNextOp::DoCompute", 10, 400);
    host.Event(main, "$train.py:12 train_step", 450, 1500);
    xp::XEvent &launch = host.Event(main, "void gemm<float>(float*)", 460, 20);
    host.Uint(launch.mutable_stats(), "correlation_id", 41);
    host.Event(main, "MemoryAllocation", 470, 0);
    // The GPU tracer's line for the same thread, merged into it.
    xp::XLine &cupti = host.Line(100, "Host Threads/100", 1000);
    xp::XEvent &copy_call = host.Event(cupti, "cuMemcpyHtoD_v2", 880, 40);
    host.Uint(copy_call.mutable_stats(), "correlation_id", 42);
    // An aggregated event (a count with no time) is not placed.
    xp::XEvent &count = *main.add_events();
    count.set_metadata_id(host.EventId("Aggregated"));
    count.set_num_occurrences(12);
  }
  if (start_time_ns != 0) {
    PlaneBuilder task(space, "Task Environment");
    task.Uint(task.plane().mutable_stats(), "profile_start_time", start_time_ns);
  }
  space.add_hostnames(hostname);
  return space;
}

}  // namespace

TEST_CASE("xplane: a GPU host's threads, streams, launches, copies and step") {
  TempDir dir;
  // Named anything: the content says what it is.
  const Trace trace =
      Load(WriteXSpace(dir, "profile.bin", GpuHost("worker-0", 1'700'000'000'000'000'000)));
  CHECK(trace.format == Format::kXPlane);
  CHECK(std::string(tfprof::InputFormatName(trace)) == "XPlane profile (XSpace)");
  CHECK(trace.hostname == "worker-0");
  CHECK(trace.wall_offset_ns == 1'700'000'000'000'000'000);

  const auto kernels = OfKind(trace, ActivityKind::kKernel);
  REQUIRE(kernels.size() == 1);  // not again from the derived "TensorFlow Ops" line
  const Activity &kernel = *kernels[0];
  CHECK(kernel.begin_ns == 2500);
  CHECK(kernel.end_ns == 2800);
  CHECK(trace.tracks[kernel.track].kind == TrackKind::kGpuStream);
  CHECK(trace.tracks[kernel.track].device == 1);
  CHECK(trace.tracks[kernel.track].stream == 7);
  const tfprof::GpuDetail detail = trace.gpu_details.Get(kernel.detail);
  CHECK(detail.correlation == 41);
  CHECK(detail.context == 3);
  const tfprof::GpuWorkShape &shape = trace.work_shapes.Get(detail.shape);
  CHECK(shape.registers == 40);
  CHECK(shape.static_shared == 128);
  CHECK(shape.dynamic_shared == 256);
  CHECK(std::vector<int32_t>(shape.grid, shape.grid + 3) == std::vector<int32_t>{12, 2, 1});
  CHECK(std::vector<int32_t>(shape.block, shape.block + 3) == std::vector<int32_t>{128, 1, 1});
  CHECK(trace.names.Get(detail.op) == "dense/MatMul:MatMul");
  CHECK(detail.launch_ns == 1460);  // linked to its launch by correlation id
  CHECK(detail.thread_id == 100);

  const auto copies = OfKind(trace, ActivityKind::kMemcpy);
  REQUIRE(copies.size() == 1);
  CHECK(copies[0]->bytes == 8192);
  CHECK(copies[0]->copy == tfprof::CopyKind::kHostToDevice);

  const auto launches = OfKind(trace, ActivityKind::kRuntimeApi);
  REQUIRE(launches.size() == 2);
  CHECK(std::count_if(launches.begin(), launches.end(), [&](const Activity *a) {
          return (a->flags & tfprof::kActivityDriverApi) != 0;
        }) == 1);  // cuMemcpyHtoD_v2

  // Both lines of thread 100 are one row, named by the thread, not by the GPU tracer.
  const auto python = OfKind(trace, ActivityKind::kPythonFunction);
  REQUIRE(python.size() == 1);
  CHECK(python[0]->track == launches[0]->track);
  CHECK(python[0]->track == launches[1]->track);
  CHECK(trace.tracks[python[0]->track].name == "python3");
  CHECK(OfKind(trace, ActivityKind::kInstant).size() == 1);  // the allocation

  // The step marker is the step, not a span; the aggregated count is nowhere.
  REQUIRE(trace.steps.size() == 1);
  CHECK(trace.steps[0].number == 5);
  CHECK(trace.steps[0].begin_ns == 1000);
  CHECK(trace.steps[0].end_ns == 3000);
  for (const Activity &activity : trace.activities) {
    CHECK(trace.names.Get(activity.name) != "train");
    CHECK(trace.names.Get(activity.name) != "Aggregated");
    if (activity.kind != ActivityKind::kKernel && activity.kind != ActivityKind::kMemcpy) {
      CHECK(activity.step == 5);
    }
  }
  CHECK(kernel.step == 5);
  REQUIRE(trace.devices.size() == 1);
  CHECK(trace.devices[0].multiprocessors == 132);
}

TEST_CASE("xplane: the hosts of a profile run are recordings of their own on one clock") {
  TempDir dir;
  const std::string run = dir.File("logs/plugins/profile/2026_11_26_10_00_00");
  std::filesystem::create_directories(run);
  WriteXSpace(dir, "logs/plugins/profile/2026_11_26_10_00_00/a.xplane.pb",
              GpuHost("a", 5'000'000'000));
  WriteXSpace(dir, "logs/plugins/profile/2026_11_26_10_00_00/b.xplane.pb",
              GpuHost("b", 5'000'001'000));
  const Trace trace = Load(dir.File("logs"));
  CHECK(trace.wall_offset_ns == 5'000'000'000);
  const auto kernels = OfKind(trace, ActivityKind::kKernel);
  REQUIRE(kernels.size() == 2);
  // b started 1 us later: its times are 1000 ns later on the common clock.
  CHECK(kernels[0]->begin_ns == 2500);
  CHECK(kernels[1]->begin_ns == 3500);
  CHECK(trace.processes[trace.tracks[kernels[0]->track].process].group == 0);
  CHECK(trace.processes[trace.tracks[kernels[1]->track].process].group == 1);
  // Both hosts count correlation ids alike: each kernel has its own host's launch.
  CHECK(trace.gpu_details.Get(kernels[0]->detail).launch_ns == 1460);
  CHECK(trace.gpu_details.Get(kernels[1]->detail).launch_ns == 2460);
  REQUIRE(trace.steps.size() == 2);
  CHECK(trace.steps[0].process != trace.steps[1].process);
}

TEST_CASE("xplane: a file that is no XSpace, and sniffing") {
  CHECK(tfprof::LooksLikeXSpace(GpuHost("h", 0).SerializeAsString()));
  xp::XSpace other;
  PlaneBuilder(other, "my plane");
  CHECK_FALSE(tfprof::LooksLikeXSpace(other.SerializeAsString()));
  CHECK_FALSE(tfprof::LooksLikeXSpace(""));
  CHECK_FALSE(tfprof::LooksLikeXSpace("{\"traceEvents\": []}"));

  TempDir dir;
  const std::string path = dir.File("x.xplane.pb");
  std::ofstream(path, std::ios::binary) << other.SerializeAsString();
  absl::StatusOr<Trace> trace = LoadTrace(path, LoadOptions{});
  REQUIRE_FALSE(trace.ok());
  CHECK(absl::IsInvalidArgument(trace.status()));
  CHECK(trace.status().message().find("not an XPlane profile") != absl::string_view::npos);
}
