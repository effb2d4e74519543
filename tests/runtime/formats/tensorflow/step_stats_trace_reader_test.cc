// TensorFlow's step statistics read into the trace model (runtime/formats/tensorflow/
// step_stats_trace_reader.h): RunMetadata, TFRecord and event files through the trace loader, and
// how TensorFlow's device names are classified.
#include <string>

#include "doctest/doctest.h"
#include "runtime/formats/tensorflow/step_stats_trace_reader.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/model/memory_series.h"
#include "support/loaded_trace_checks.h"
#include "support/step_stats_builder.h"
#include "support/test_files.h"

namespace tfprof {

using tfprof_test::CountKind;
using tfprof_test::MustLoad;
using tfprof_test::Named;
using tfprof_test::StepNumbers;
using tfprof_test::TempDir;

TEST_CASE("step stats trace reader: TensorFlow RunMetadata, TFRecord and event files") {
  TempDir dir;
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *host = run.mutable_step_stats()->add_dev_stats();
  host->set_device("/job:localhost/replica:0/task:0/device:CPU:0");
  (*host->mutable_thread_names())[11] = "worker_a";
  tfprof_test::AddOp(host, "MatMul_1", "MatMul_1 = MatMul(a, b)", 1000, 10, 11);
  tfprof_test::AddOp(host, "_SOURCE", "_SOURCE = NoOp()", 990, 1, 12);
  tensorflow::DeviceStepStats *all = run.mutable_step_stats()->add_dev_stats();
  all->set_device("/device:GPU:0/stream:all");
  tfprof_test::AddOp(all, "MatMul_1", "volta_sgemm regs:32 shm:0 grid:1,1,1 block:1,1,1@@MatMul_1:MatMul#",
                     1005, 3);
  tensorflow::DeviceStepStats *stream7 = run.mutable_step_stats()->add_dev_stats();
  stream7->set_device("/device:GPU:0/stream:7");
  tfprof_test::AddOp(stream7, "MatMul_1",
                     "volta_sgemm regs:32 shm:0 grid:1,1,1 block:1,1,1@@MatMul_1:MatMul#", 1005, 3);
  tensorflow::DeviceStepStats *copies = run.mutable_step_stats()->add_dev_stats();
  copies->set_device("/device:GPU:0/memcpy");
  tfprof_test::AddOp(copies, "a:MEMCPYHtoD", "MEMCPYHtoD 4096 bytes (Pinned to Device)", 1001, 2);
  tensorflow::DeviceStepStats *stream13 = run.mutable_step_stats()->add_dev_stats();
  stream13->set_device("/device:GPU:0/stream:13");
  tfprof_test::AddOp(stream13, "a:MEMCPYHtoD", "MEMCPYHtoD 4096 bytes (Pinned to Device)", 1001, 2);
  tfprof_test::AddOp(stream13, "Memset", "Memset bytes:64", 1003, 1);
  tensorflow::DeviceStepStats *gpu1 = run.mutable_step_stats()->add_dev_stats();
  gpu1->set_device("/gpu:1/stream:all");
  tfprof_test::AddOp(gpu1, "relu_kernel", "", 1004, 2);
  tensorflow::DeviceStepStats *sync = run.mutable_step_stats()->add_dev_stats();
  sync->set_device("/device:GPU:0/sync");
  tfprof_test::AddOp(sync, "sync", "", 1009, 1);

  // `other_host_ops`: those of SmallRun() in the same file.
  const auto check_run = [&](const Trace &trace, size_t other_host_ops = 0) {
    CHECK(trace.wall_offset_ns == 0);
    CHECK_FALSE(trace.losses.reported);
    CHECK(CountKind(trace, ActivityKind::kHostOp) == 2 + other_host_ops);
    CHECK(CountKind(trace, ActivityKind::kKernel) == 2);
    CHECK(CountKind(trace, ActivityKind::kMemcpy) == 1);
    CHECK(CountKind(trace, ActivityKind::kMemset) == 1);
    const Activity &matmul = Named(trace, "MatMul_1:MatMul");
    CHECK(matmul.begin_ns == 1000000);
    CHECK(matmul.end_ns == 1010000);
    const Track &worker = trace.tracks[matmul.track];
    CHECK(worker.name == "worker_a");
    CHECK(worker.tid == 11);
    CHECK(trace.processes[worker.process].name == "/job:localhost/replica:0/task:0/device:CPU:0");
    CHECK(trace.tracks[Named(trace, "_SOURCE:NoOp").track].tid == 12);
    const Activity &sgemm = Named(trace, "volta_sgemm");
    CHECK(sgemm.kind == ActivityKind::kKernel);
    CHECK(trace.tracks[sgemm.track].kind == TrackKind::kGpuStream);
    CHECK(trace.tracks[sgemm.track].device == 0);
    CHECK(trace.tracks[sgemm.track].stream == 7);
    CHECK(trace.tracks[sgemm.track].name == "stream 7");
    const Activity &copy = Named(trace, "MEMCPYHtoD");
    CHECK(copy.bytes == 4096);
    CHECK(copy.copy == CopyKind::kHostToDevice);
    CHECK(trace.tracks[copy.track].stream == 13);
    CHECK(Named(trace, "Memset").bytes == 64);
    // GPU 1 has no per-stream devices: its stream:all is all there is.
    const Track &gpu1_row = trace.tracks[Named(trace, "relu_kernel").track];
    CHECK(gpu1_row.device == 1);
    CHECK(gpu1_row.stream == -1);
    CHECK(trace.processes[gpu1_row.process].name == "GPU 1");
  };

  const std::string pb = dir.File("run.pb");
  tfprof_test::WriteFile(pb, run.SerializeAsString());
  Trace trace = MustLoad(pb);
  CHECK(trace.format == Format::kRunMetadata);
  CHECK(trace.events_in_file == 9);
  check_run(trace);
  REQUIRE(trace.steps.size() == 1);
  CHECK(trace.steps[0].number == 0);
  CHECK(trace.steps[0].begin_ns == 990000);
  CHECK(trace.steps[0].end_ns == 1010000);

  const std::string step_stats = dir.File("stats.pb");
  tfprof_test::WriteFile(step_stats, run.step_stats().SerializeAsString());
  trace = MustLoad(step_stats);
  CHECK(trace.format == Format::kStepStats);
  check_run(trace);

  const std::string records = dir.File("runs.tfrecord");
  tfprof_test::WriteFile(records, tfprof_test::Framed(tfprof_test::SmallRun(5000).SerializeAsString()) +
                                      tfprof_test::Framed(run.SerializeAsString()));
  trace = MustLoad(records);
  CHECK(trace.format == Format::kTfRecord);
  CHECK(StepNumbers(trace) == std::vector<int64_t>{1, 0});  // by time: the second run is earlier
  CHECK(Named(trace, "b:Square").begin_ns == 5020000);

  TempDir logs;
  tfprof_test::WriteFile(logs.File("events.out.tfevents.1.host"),
                         tfprof_test::FileVersionRecord() + tfprof_test::TaggedRecord(run, "run10", 10) +
                             tfprof_test::TaggedRecord(tfprof_test::SmallRun(5000), "run20", 20));
  trace = MustLoad(logs.path().string());
  CHECK(trace.format == Format::kTensorBoard);
  CHECK(StepNumbers(trace) == std::vector<int64_t>{10, 20});
  check_run(trace, 3);
}

TEST_CASE("step stats trace reader: TensorFlow device names") {
  const TfDevice cpu = ClassifyTfDevice("/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(cpu.kind == TfDevice::kHost);
  CHECK(ClassifyTfDevice("/job:localhost/replica:0/task:0/device:GPU:1").kind == TfDevice::kHost);
  CHECK(ClassifyTfDevice("/job:localhost/replica:0/task:0/cpu:0").kind == TfDevice::kHost);
  const TfDevice stream = ClassifyTfDevice("/device:GPU:2/stream:15");
  CHECK(stream.kind == TfDevice::kGpuStream);
  CHECK(stream.gpu == 2);
  CHECK(stream.stream == 15);
  CHECK_FALSE(stream.copies);
  CHECK(ClassifyTfDevice("/device:GPU:0/stream:all").kind == TfDevice::kGpuAll);
  CHECK(ClassifyTfDevice("/gpu:0/stream:all").kind == TfDevice::kGpuAll);
  CHECK(ClassifyTfDevice("/device:GPU:3/memcpy").kind == TfDevice::kGpuMemcpy);
  CHECK(ClassifyTfDevice("/device:GPU:3/memcpy").gpu == 3);
  CHECK(ClassifyTfDevice("/device:GPU:0/sync").kind == TfDevice::kGpuOther);
  CHECK(ClassifyTfDevice("/device:GPU:0/stream:").kind == TfDevice::kGpuOther);
  const TfDevice copies = ClassifyTfDevice("/device:GPU:0/stream:7<MemcpyH2D>");
  CHECK(copies.kind == TfDevice::kGpuStream);
  CHECK(copies.stream == 7);
  CHECK(copies.copies);
  const TfDevice old = ClassifyTfDevice("/gpu:1 (Tesla K80)/context#1/stream#12:MemcpyHtoD");
  CHECK(old.kind == TfDevice::kGpuStream);
  CHECK(old.gpu == 1);
  CHECK(old.stream == 12);
  CHECK(old.copies);
}

TEST_CASE("step stats trace reader: allocator statistics become memory series") {
  TempDir dir;
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *gpu = run.mutable_step_stats()->add_dev_stats();
  gpu->set_device("/job:localhost/replica:0/task:0/device:GPU:0");
  const auto in_use = [](tensorflow::NodeExecStats *op, const std::string &allocator,
                         int64_t bytes) {
    tensorflow::AllocatorMemoryUsed *used = op->add_memory();
    used->set_allocator_name(allocator);
    used->set_allocator_bytes_in_use(bytes);
  };
  in_use(tfprof_test::AddOp(gpu, "conv", "conv = Conv2D(a, b)", 1000, 10, 11), "GPU_0_bfc", 4096);
  in_use(tfprof_test::AddOp(gpu, "relu", "relu = Relu(conv)", 1020, 10, 11), "GPU_0_bfc", 6144);
  in_use(tfprof_test::AddOp(gpu, "add", "add = Add(relu, c)", 1040, 10, 11), "GPU_0_bfc", 2048);
  tfprof_test::AddOp(gpu, "noop", "noop = NoOp()", 1060, 1, 11)->add_memory()->set_allocator_name(
      "cpu");  // no bytes recorded: no sample
  const std::string path = dir.File("run.pb");
  tfprof_test::WriteFile(path, run.SerializeAsString());
  const Trace trace = MustLoad(path);
  const std::vector<MemorySeries> series = MemoryInUse(trace);
  REQUIRE(series.size() == 1);
  CHECK(series[0].source == "allocator statistics");
  CHECK(series[0].label == "GPU_0_bfc");
  CHECK(series[0].device == 0);
  REQUIRE(series[0].samples.size() == 3);
  CHECK(series[0].samples[0].ns == 1'010'000);  // as the node ended
  CHECK(series[0].samples[0].bytes == 4096);
  CHECK(series[0].samples[1].bytes == 6144);
  CHECK(series[0].samples[2].delta == -4096);
}

TEST_CASE("step stats trace reader: tfprof's instant nodes are instants again") {
  TempDir dir;
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *host = run.mutable_step_stats()->add_dev_stats();
  host->set_device("/job:localhost/replica:0/task:0/device:CPU:0");
  tfprof_test::AddOp(host, "work:MatMul", "work = MatMul()", 1000, 10, 11);
  // The writer's instant: whole name (':' not split), zero length, type tfprof/instant.
  tfprof_test::AddOp(host, "checkpoint:saved", "checkpoint:saved = tfprof/instant()", 1500, 0, 11);
  const std::string path = dir.File("run.pb");
  tfprof_test::WriteFile(path, run.SerializeAsString());
  const Trace trace = MustLoad(path);
  CHECK(CountKind(trace, ActivityKind::kInstant) == 1);
  CHECK(CountKind(trace, ActivityKind::kHostOp) == 1);
  const Activity &instant = Named(trace, "checkpoint:saved");
  CHECK(instant.kind == ActivityKind::kInstant);
  CHECK(instant.begin_ns == 1500000);
  CHECK(instant.end_ns == 1500000);
}

}  // namespace tfprof
