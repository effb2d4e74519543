// GPU time by op, by layer and by step on traces built with known answers.
#include <nlohmann/json.hpp>

#include <string>

#include "doctest/doctest.h"
#include "tools/tfprof/analysis/op_gpu_time.h"
#include "tools/tfprof/analysis/summary_json.h"
#include "tools/tfprof/analysis/summary_test_trace.h"
#include "tools/tfprof/analysis/summary_text.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {
namespace {

using tfprof_test::TrackOf;

// Gives the trace's last activity a GPU detail: a correlation id, and the host op its producer
// named (XPlane's tf_op) when `op` is not empty.
void Detail(Trace &trace, uint32_t correlation, const std::string &op = "") {
  GpuDetail detail;
  if (correlation != 0) {
    detail.correlation = correlation;
    detail.fields = kGpuHasCorrelation;
  }
  if (!op.empty()) detail.op = trace.names.Intern(op);
  trace.activities.back().detail = trace.gpu_details.Add(trace.activities.back().kind, detail);
}

const OpGpuTime *Row(const std::vector<OpGpuTime> &rows, const std::string &name) {
  for (const OpGpuTime &row : rows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

// Two steps. The main thread (track 0): "outer" [0, 100) us holds "inner" [10, 40) (launches
// k_a, 10 us, correlation 1), "inner" [45, 80) holding a recursive "inner" [50, 70) (launches k_b,
// 8 us), a launch of k_a (5 us) and an async copy (10 us) made directly in "outer". A worker thread
// (track 2): "inner" [0, 30) launches k_b (6 us). One kernel (k_orphan, 4 us) has no launch call.
Trace NestedOpsTrace() {
  SummaryTestTrace builder;
  builder.trace().tracks.push_back(TrackOf(0, 2, "worker", TrackKind::kHostThread, -1, -1));
  builder.StepAt(1, 0, 50 * kUs)
      .StepAt(2, 50 * kUs, 300 * kUs)
      .Host("outer", 0, 100 * kUs)
      .Host("inner", 10 * kUs, 40 * kUs)
      .Launch("cudaLaunchKernel", 12 * kUs, 14 * kUs, 1)
      .LaunchedKernel("k_a", 50 * kUs, 60 * kUs, 1)
      .Host("inner", 45 * kUs, 80 * kUs)
      .Host("inner", 50 * kUs, 70 * kUs)
      .Launch("cudaLaunchKernel", 52 * kUs, 53 * kUs, 2)
      .LaunchedKernel("k_b", 100 * kUs, 108 * kUs, 2)
      .Launch("cudaLaunchKernel", 85 * kUs, 86 * kUs, 3)
      .LaunchedKernel("k_a", 130 * kUs, 135 * kUs, 3)
      .Launch("cudaMemcpyAsync", 90 * kUs, 92 * kUs, 4)
      .Copy(140 * kUs, 150 * kUs, 1'000'000, CopyKind::kHostToDevice);
  Detail(builder.trace(), 4);
  builder.Kernel("k_orphan", 200 * kUs, 204 * kUs);
  builder.Host("inner", 0, 30 * kUs);
  builder.trace().activities.back().track = 2;
  builder.Launch("cudaLaunchKernel", 5 * kUs, 6 * kUs, 5);
  builder.trace().activities.back().track = 2;
  builder.LaunchedKernel("k_b", 160 * kUs, 166 * kUs, 5);
  return std::move(builder.linked());
}

}  // namespace

TEST_CASE("tools/op_gpu_time: nested ops, recursion, two threads, copies, no launcher") {
  const TraceSummary s = Summarize(NestedOpsTrace(), SummaryOptions{});
  CHECK(s.gpu_work_ns == 43 * kUs);
  REQUIRE(s.gpu_time_by_op.size() == 3);
  CHECK(s.gpu_time_by_op[0].name == "outer");
  CHECK(s.gpu_time_by_op[1].name == "inner");
  CHECK(s.gpu_time_by_op[2].name == kNoHostOpRow);

  const OpGpuTime &outer = s.gpu_time_by_op[0];
  CHECK(outer.calls == 1);
  CHECK(outer.host_ns == 100 * kUs);
  CHECK(outer.launches == 4);
  CHECK(outer.kernels == 3);
  CHECK(outer.copies == 1);
  CHECK(outer.copy_ns == 10 * kUs);
  CHECK(outer.gpu_total_ns == 33 * kUs);
  CHECK(outer.gpu_self_ns == 15 * kUs);  // k_a's 5 us and the copy, launched in it directly
  CHECK(outer.share == doctest::Approx(33.0 / 43.0));
  REQUIRE(outer.top_kernels.size() == 2);
  CHECK(outer.top_kernels[0].name == "k_a");
  CHECK(outer.top_kernels[0].count == 2);
  CHECK(outer.top_kernels[0].total_ns == 15 * kUs);
  CHECK(outer.top_kernels[1].name == "k_b");
  CHECK(outer.top_kernels[1].total_ns == 8 * kUs);

  // Four spans on two threads; k_b under the recursion counts once.
  const OpGpuTime &inner = s.gpu_time_by_op[1];
  CHECK(inner.calls == 4);
  CHECK(inner.host_ns == (30 + 35 + 30) * kUs);
  CHECK(inner.launches == 3);
  CHECK(inner.kernels == 3);
  CHECK(inner.copies == 0);
  CHECK(inner.gpu_total_ns == 24 * kUs);
  CHECK(inner.gpu_self_ns == 24 * kUs);
  REQUIRE(inner.top_kernels.size() == 2);
  CHECK(inner.top_kernels[0].name == "k_b");
  CHECK(inner.top_kernels[0].count == 2);
  CHECK(inner.top_kernels[0].total_ns == 14 * kUs);

  const OpGpuTime &none = s.gpu_time_by_op[2];
  CHECK(none.kernels == 1);
  CHECK(none.launches == 0);
  CHECK(none.gpu_self_ns == 4 * kUs);
  CHECK(none.gpu_total_ns == 4 * kUs);
  REQUIRE(none.top_kernels.size() == 1);
  CHECK(none.top_kernels[0].name == "k_orphan");

  // Self times add up to all GPU work.
  int64_t self = 0;
  for (const OpGpuTime &row : s.gpu_time_by_op) self += row.gpu_self_ns;
  CHECK(self == s.gpu_work_ns);
  CHECK(s.gpu_time_by_layer.empty());

  // Steps: the launch's step. Step 1: k_a (10, inner) and the worker's k_b (6, inner); step 2:
  // k_b (8, inner), k_a (5, outer), the copy (10, outer), k_orphan (4, from its start).
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].gpu_launched_ns == 16 * kUs);
  CHECK(s.steps[0].top_gpu_op == "inner");
  CHECK(s.steps[1].gpu_launched_ns == 27 * kUs);
  CHECK(s.steps[1].top_gpu_op == "outer");
  CHECK(s.step_total.gpu_launched_ns == 43 * kUs);
  CHECK(s.step_total.top_gpu_op == "inner");

  // Each kernel's op: the one that launched most of its time.
  for (const KernelStat &kernel : s.top_kernels) {
    CHECK(kernel.op == (kernel.name == "k_orphan" ? std::string(kNoHostOpRow) : "inner"));
  }

  SUBCASE("--top cuts the rows") {
    SummaryOptions options;
    options.top = 1;
    const TraceSummary one = Summarize(NestedOpsTrace(), options);
    REQUIRE(one.gpu_time_by_op.size() == 1);
    CHECK(one.gpu_time_by_op[0].name == "outer");
    CHECK(one.gpu_time_by_op[0].top_kernels.size() == 2);
  }

  SUBCASE("JSON and text") {
    const nlohmann::json json = nlohmann::json::parse(SummariesToJson({s}));
    const nlohmann::json &trace = json["traces"][0];
    REQUIRE(trace["gpu_time_by_op"].size() == 3);
    CHECK(trace["gpu_time_by_op"][1]["name"] == "inner");
    CHECK(trace["gpu_time_by_op"][1]["gpu_total_ns"] == 24 * kUs);
    CHECK(trace["gpu_time_by_op"][0]["gpu_self_ns"] == 15 * kUs);
    CHECK(trace["gpu_time_by_op"][0]["top_kernels"][0]["count"] == 2);
    CHECK(trace["gpu_time_by_layer"].empty());
    CHECK(trace["steps"][1]["gpu_launched_ns"] == 27 * kUs);
    CHECK(trace["steps"][1]["top_gpu_op"] == "outer");
    CHECK(trace["top_kernels"][0]["op"] == "inner");
    const std::string text = SummaryToText(s, TextOptions{});
    CHECK(text.find("GPU time by op") != std::string::npos);
    CHECK(text.find("GPU time by layer") == std::string::npos);
    CHECK(text.find("step 2: 0.027 ms launched, most by outer") != std::string::npos);
  }
}

TEST_CASE("tools/op_gpu_time: module spans are layers, Python frames are neither") {
  SummaryTestTrace builder;
  builder.Host("train.py(10): main", 0, 100 * kUs, ActivityKind::kPythonFunction)
      .Host("nn.Module: Net_0", 0, 100 * kUs, ActivityKind::kPythonFunction)
      .Host("nn.Module: Linear_0", 0, 50 * kUs, ActivityKind::kPythonFunction)
      .Host("aten::linear", 0, 50 * kUs)
      .Host("aten::addmm", 10 * kUs, 40 * kUs)
      .Launch("cudaLaunchKernel", 20 * kUs, 21 * kUs, 1)
      .LaunchedKernel("gemm", 30 * kUs, 40 * kUs, 1)
      .Host("nn.Module: ReLU_0", 50 * kUs, 100 * kUs, ActivityKind::kPythonFunction)
      .Host("aten::relu", 55 * kUs, 70 * kUs)
      .Launch("cudaLaunchKernel", 60 * kUs, 61 * kUs, 2)
      .LaunchedKernel("relu", 70 * kUs, 75 * kUs, 2)
      .Launch("cudaLaunchKernel", 80 * kUs, 81 * kUs, 3)  // in the layer, in no op
      .LaunchedKernel("fill", 90 * kUs, 92 * kUs, 3);
  const TraceSummary s = Summarize(builder.linked(), SummaryOptions{});
  // Ops: the aten ops and the work in no op; the Python frame has no row.
  REQUIRE(s.gpu_time_by_op.size() == 4);
  CHECK(s.gpu_time_by_op[0].name == "aten::addmm");
  CHECK(s.gpu_time_by_op[1].name == "aten::linear");
  CHECK(s.gpu_time_by_op[1].gpu_self_ns == 0);
  CHECK(s.gpu_time_by_op[1].gpu_total_ns == 10 * kUs);
  CHECK(s.gpu_time_by_op[2].name == "aten::relu");
  CHECK(s.gpu_time_by_op[3].name == kNoHostOpRow);
  CHECK(s.gpu_time_by_op[3].gpu_self_ns == 2 * kUs);
  CHECK(s.gpu_time_by_op[3].launches == 1);

  REQUIRE(s.gpu_time_by_layer.size() == 3);
  const OpGpuTime *net = Row(s.gpu_time_by_layer, "nn.Module: Net_0");
  const OpGpuTime *linear = Row(s.gpu_time_by_layer, "nn.Module: Linear_0");
  const OpGpuTime *relu = Row(s.gpu_time_by_layer, "nn.Module: ReLU_0");
  REQUIRE((net && linear && relu));
  CHECK(s.gpu_time_by_layer[0].name == "nn.Module: Net_0");
  CHECK(net->gpu_total_ns == 17 * kUs);
  CHECK(net->gpu_self_ns == 0);
  CHECK(net->launches == 3);
  CHECK(net->host_ns == 100 * kUs);
  CHECK(linear->gpu_total_ns == 10 * kUs);
  CHECK(linear->gpu_self_ns == 10 * kUs);
  CHECK(relu->gpu_total_ns == 7 * kUs);
  CHECK(relu->gpu_self_ns == 7 * kUs);
  CHECK(relu->kernels == 2);
  CHECK(SummaryToText(s, TextOptions{}).find("GPU time by layer") != std::string::npos);
}

TEST_CASE("tools/op_gpu_time: TensorFlow's tf_op without launch calls, name scopes as layers") {
  SummaryTestTrace builder;
  builder.Kernel("gemm", 0, 10 * kUs);
  Detail(builder.trace(), 0, "model/dense_1/MatMul:MatMul");
  builder.Kernel("bias", 10 * kUs, 12 * kUs);
  Detail(builder.trace(), 0, "model/dense_1/BiasAdd:BiasAdd");
  builder.Kernel("gemm", 20 * kUs, 25 * kUs);
  Detail(builder.trace(), 0, "model/dense_2/MatMul:MatMul");
  builder.Kernel("gemm", 30 * kUs, 31 * kUs);
  Detail(builder.trace(), 0, "model/MatMul:MatMul");
  const TraceSummary s = Summarize(builder.trace(), SummaryOptions{});
  REQUIRE(s.gpu_time_by_op.size() == 4);
  CHECK(s.gpu_time_by_op[0].name == "model/dense_1/MatMul:MatMul");
  CHECK(s.gpu_time_by_op[0].gpu_self_ns == 10 * kUs);
  CHECK(s.gpu_time_by_op[0].gpu_total_ns == 10 * kUs);
  REQUIRE(s.gpu_time_by_layer.size() == 3);
  CHECK(s.gpu_time_by_layer[0].name == "model");
  CHECK(s.gpu_time_by_layer[0].gpu_total_ns == 18 * kUs);
  CHECK(s.gpu_time_by_layer[0].gpu_self_ns == 1 * kUs);
  CHECK(s.gpu_time_by_layer[0].kernels == 4);
  REQUIRE(s.gpu_time_by_layer[0].top_kernels.size() == 2);
  CHECK(s.gpu_time_by_layer[0].top_kernels[0].name == "gemm");
  CHECK(s.gpu_time_by_layer[0].top_kernels[0].count == 3);
  CHECK(s.gpu_time_by_layer[0].top_kernels[0].total_ns == 16 * kUs);
  CHECK(s.gpu_time_by_layer[1].name == "model/dense_1");
  CHECK(s.gpu_time_by_layer[1].gpu_total_ns == 12 * kUs);
  CHECK(s.gpu_time_by_layer[1].gpu_self_ns == 12 * kUs);
  CHECK(s.gpu_time_by_layer[2].name == "model/dense_2");
  CHECK(s.gpu_time_by_layer[2].gpu_total_ns == 5 * kUs);
}

TEST_CASE("tools/op_gpu_time: which names are layers and name scopes") {
  CHECK(IsLayerSpanName("nn.Module: Linear_0"));
  CHECK(IsLayerSpanName("model.fc1: Linear"));
  CHECK(IsLayerSpanName("model.fc1: Linear (backward)"));
  CHECK_FALSE(IsLayerSpanName("model.py(28): forward"));
  CHECK_FALSE(IsLayerSpanName("aten::addmm"));
  CHECK_FALSE(IsLayerSpanName("nn.Module: "));
  CHECK_FALSE(IsLayerSpanName("epoch: train"));
  CHECK(IsLayerSpanName("Net.encoder.0: Linear"));
  CHECK(NameScopesOf("model/dense_1/MatMul") ==
        std::vector<std::string_view>{"model", "model/dense_1"});
  CHECK(NameScopesOf("model/dense_1/MatMul:MatMul") ==
        std::vector<std::string_view>{"model", "model/dense_1"});
  CHECK(NameScopesOf("MatMul").empty());
  CHECK(NameScopesOf("/usr/lib/python3/torch/nn/modules/module.py(1501): _call_impl").empty());
  CHECK(NameScopesOf("aten::add/x").empty());
  CHECK(NameScopesOf("a//b").empty());
}

TEST_CASE("tools/op_gpu_time: a merge's recordings each count their correlation ids") {
  SummaryTestTrace builder;
  Trace &trace = builder.trace();
  trace.processes.push_back(tfprof_test::ProcessOf(4343, "rank 1"));
  trace.processes.back().group = 1;
  trace.tracks.push_back(TrackOf(1, 1, "main", TrackKind::kHostThread, -1, -1));  // 2
  trace.tracks.push_back(TrackOf(1, 7, "stream 7", TrackKind::kGpuStream, 0, 7));  // 3
  builder.Host("a", 0, 10 * kUs)
      .Launch("cudaLaunchKernel", 1 * kUs, 2 * kUs, 1)
      .LaunchedKernel("k", 20 * kUs, 23 * kUs, 1)
      .Host("b", 0, 10 * kUs);
  trace.activities.back().track = 2;
  builder.Launch("cudaLaunchKernel", 1 * kUs, 2 * kUs, 1);
  trace.activities.back().track = 2;
  builder.LaunchedKernel("k", 20 * kUs, 27 * kUs, 1);
  trace.activities.back().track = 3;
  const TraceSummary s = Summarize(builder.linked(), SummaryOptions{});
  const OpGpuTime *a = Row(s.gpu_time_by_op, "a");
  const OpGpuTime *b = Row(s.gpu_time_by_op, "b");
  REQUIRE((a && b));
  CHECK(a->gpu_self_ns == 3 * kUs);
  CHECK(b->gpu_self_ns == 7 * kUs);
  CHECK(s.gpu_time_by_op.size() == 2);
}

// Correlation id 0 is no id (Kineto writes it on records without one): a launch call and a copy
// both marked 0 are not linked, so the copy belongs to the step holding its start and to no op.
TEST_CASE("tools/op_gpu_time: correlation id 0 links nothing") {
  SummaryTestTrace builder;
  builder.StepAt(0, 0, 100 * kUs)
      .StepAt(1, 100 * kUs, 200 * kUs)
      .Host("forward", 10 * kUs, 50 * kUs)
      .Launch("cudaLaunchKernel", 12 * kUs, 13 * kUs, 0)
      .LaunchedKernel("k", 20 * kUs, 30 * kUs, 1)
      .Copy(150 * kUs, 159 * kUs, 4096, CopyKind::kHostToDevice);
  Detail(builder.trace(), 0);
  Trace &built = builder.trace();  // "correlation": 0 as read
  built.gpu_details.Work(built.activities.back().detail)->fields = kGpuHasCorrelation;
  Trace &trace = builder.linked();
  CHECK(trace.gpu_details.Get(trace.activities.back().detail).launch_ns == kNoStep);
  const TraceSummary s = Summarize(trace, SummaryOptions{});
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].gpu_launched_ns == 10 * kUs);  // the kernel, by its start: no launch known
  CHECK(s.steps[1].gpu_launched_ns == 9 * kUs);   // the copy, in the step holding its start
  const OpGpuTime *forward = Row(s.gpu_time_by_op, "forward");
  const OpGpuTime *none = Row(s.gpu_time_by_op, std::string(kNoHostOpRow));
  CHECK(forward == nullptr);  // its launch call linked nothing: no GPU time of its own
  REQUIRE(none != nullptr);
  CHECK(none->gpu_total_ns == 19 * kUs);
}

}  // namespace tfprof::cli
