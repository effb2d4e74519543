// The diagnosis checks its own evidence: GPU records missing, one-time launches, TensorFlow input
// ops by type, communication kernels by a maintained list, one window per table, advice for the
// framework found, and the time outside the steps with what ran there.
#include <nlohmann/json.hpp>

#include <string>

#include "doctest/doctest.h"
#include "tools/tfprof/analysis/diagnosis.h"
#include "tools/tfprof/analysis/op_classes.h"
#include "tools/tfprof/analysis/summary_json.h"
#include "tools/tfprof/analysis/summary_test_trace.h"
#include "tools/tfprof/analysis/summary_text.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {
namespace {

bool Contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

bool AnyContains(const std::vector<std::string> &texts, const std::string &part) {
  for (const std::string &text : texts) {
    if (Contains(text, part)) return true;
  }
  return false;
}

// Four 10 ms steps, each launching 50 short kernels (20 us each, 100 us apart).
SummaryTestTrace ShortKernelSteps(bool with_kernels, uint32_t *next_correlation) {
  SummaryTestTrace builder;
  uint32_t correlation = 1;
  for (int64_t step = 0; step < 4; ++step) {
    const int64_t b = step * 10 * kMs;
    builder.StepAt(step, b, b + 10 * kMs).Host("train_step", b, b + 10 * kMs);
    for (int64_t k = 0; k < 50; ++k) {
      const int64_t t = b + k * 190 * kUs;
      builder.Launch("cudaLaunchKernel", t, t + 10 * kUs, correlation);
      if (with_kernels) {
        builder.LaunchedKernel("elementwise", t + 15 * kUs, t + 35 * kUs, correlation);
      }
      ++correlation;
    }
  }
  *next_correlation = correlation;
  return builder;
}

}  // namespace

TEST_CASE("tools/diagnosis: launches without any GPU record say the GPU side is missing") {
  uint32_t next = 0;
  SummaryTestTrace builder = ShortKernelSteps(false, &next);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK_FALSE(summary.has_gpu);
  CHECK(summary.launch_calls == 200);
  CHECK(summary.launches_without_gpu_work == 200);
  REQUIRE_FALSE(summary.findings.empty());
  const Finding &finding = summary.findings.front();
  CHECK(finding.kind == "gpu_records_missing");
  CHECK(finding.title == "GPU activity missing: 200 kernel launches but no GPU record; every "
                         "figure is the host's");
  CHECK(Contains(finding.evidence, "200 times"));
  // A tfprof trace says why its GPU tracing did not run.
  builder.trace().gpu = {true, "unavailable", "libcupti.so not found", ""};
  const TraceSummary told = Summarize(builder.trace(), {});
  CHECK(Contains(told.findings.front().evidence,
                 "tfprof's GPU tracing was unavailable: libcupti.so not found."));
  const std::string text = SummaryToText(told, {});
  CHECK_FALSE(Contains(text, "No bottleneck stands out"));
  const nlohmann::json json = nlohmann::json::parse(SummariesToJson({told}));
  CHECK(json["traces"][0]["launches_without_gpu_work"] == 200);
  CHECK(json["traces"][0]["gpu_tracing"]["state"] == "unavailable");
}

TEST_CASE("tools/diagnosis: most launches without their kernel are an incomplete GPU record") {
  uint32_t next = 0;
  SummaryTestTrace builder = ShortKernelSteps(true, &next);
  // 150 more launches whose kernels were lost (their correlation ids match no kernel).
  for (int64_t k = 0; k < 150; ++k) {
    builder.Launch("cudaLaunchKernel", 41 * kMs + k * 20 * kUs, 41 * kMs + k * 20 * kUs + kUs,
                   next++);
  }
  TraceSummary summary = Summarize(builder.linked(), {});
  CHECK(summary.launch_calls == 350);
  CHECK(summary.launches_without_gpu_work == 150);
  CHECK(FindingOf(summary, "gpu_records_missing") == nullptr);  // 43%: below half

  for (int64_t k = 0; k < 100; ++k) {
    builder.Launch("cudaLaunchKernel", 45 * kMs + k * 20 * kUs, 45 * kMs + k * 20 * kUs + kUs,
                   next++);
  }
  summary = Summarize(builder.linked(), {});
  CHECK(summary.launches_without_gpu_work == 250);
  const Finding *finding = FindingOf(summary, "gpu_records_missing");
  REQUIRE(finding != nullptr);
  CHECK(finding->title == "Incomplete GPU record: 250 of 450 kernel launches have no GPU record, "
                          "so GPU figures undercount");
}

TEST_CASE("tools/diagnosis: one-time first launches are one-time costs, not launch-bound") {
  // Four 500 ms steps. Step 0 begins with 18 first launches of distinct kernels that load their
  // modules (one of 347 ms, 17 of 8 ms); every step then launches 200 short kernels, 2 ms apart.
  SummaryTestTrace builder;
  uint32_t correlation = 1;
  int64_t t = 0;
  builder.Launch("cudaLaunchKernel", t, t + 347 * kMs, correlation);
  builder.LaunchedKernel("first_kernel_0", t + 347 * kMs, t + 347 * kMs + 20 * kUs, correlation++);
  t += 348 * kMs;
  for (int k = 1; k < 18; ++k) {
    builder.Launch("cudaLaunchKernel", t, t + 8 * kMs, correlation);
    builder.LaunchedKernel("first_kernel_" + std::to_string(k), t + 8 * kMs,
                           t + 8 * kMs + 20 * kUs, correlation++);
    t += 8 * kMs + 100 * kUs;
  }
  for (int64_t step = 0; step < 4; ++step) {
    const int64_t b = step * 500 * kMs;
    builder.StepAt(step, b, b + 500 * kMs);
    const int64_t from = step == 0 ? t : b;
    for (int64_t k = 0; k < 200 && from + k * 2 * kMs + 30 * kUs < b + 500 * kMs; ++k) {
      const int64_t at = from + k * 2 * kMs;
      builder.Launch("cudaLaunchKernel", at, at + 5 * kUs, correlation);
      builder.LaunchedKernel("elementwise", at + 10 * kUs, at + 30 * kUs, correlation++);
    }
  }
  const TraceSummary summary = Summarize(builder.linked(), {});
  CHECK(summary.step_total.one_time_launches == 18);
  CHECK(summary.step_total.one_time_launch_ns == 347 * kMs + 17 * 8 * kMs);
  CHECK(summary.steps[0].one_time_launches == 18);
  CHECK(summary.steps[1].one_time_launches == 0);
  REQUIRE(summary.one_time_launches.size() == 5);
  CHECK(summary.one_time_launches[0].duration_ns == 347 * kMs);
  CHECK(summary.one_time_launches[0].kernel == "first_kernel_0");
  const Finding *one_time = FindingOf(summary, "one_time_costs");
  REQUIRE(one_time != nullptr);
  CHECK(one_time->steps == std::vector<int64_t>{0});
  CHECK(Contains(one_time->evidence, "18 launch calls took 483.0 ms"));
  CHECK(Contains(one_time->evidence, "The longest, 347.0 ms in cudaLaunchKernel, launched "
                                     "first_kernel_0"));
  CHECK(AnyContains(one_time->recommendations, "CUDA_MODULE_LOADING=EAGER"));
  // The launch calls that remain are a sliver of step time (counted with them, the one-time
  // launches made this trace launch-bound): no launch-bound verdict.
  CHECK(FindingOf(summary, "launch_bound") == nullptr);
  CHECK(summary.findings.front().kind == "one_time_costs");

  // The same slow launch of a kernel launched before is no one-time cost (a full launch queue).
  SummaryTestTrace repeated;
  for (uint32_t k = 0; k < 40; ++k) {
    repeated.Launch("cudaLaunchKernel", k * 10 * kMs, k * 10 * kMs + 5 * kUs, k + 1);
    repeated.LaunchedKernel("gemm", k * 10 * kMs + 10 * kUs, k * 10 * kMs + 20 * kUs, k + 1);
  }
  repeated.Launch("cudaLaunchKernel", 400 * kMs, 405 * kMs, 41);
  repeated.LaunchedKernel("gemm", 405 * kMs, 406 * kMs, 41);
  CHECK(Summarize(repeated.linked(), {}).step_total.one_time_launches == 0);
}

TEST_CASE("tools/diagnosis: TensorFlow ops are input ops by their type") {
  NameInterner names;
  const uint32_t dequeue = names.Intern("batch/fifo_queue_Dequeue:QueueDequeueManyV2");
  const uint32_t get_next = names.Intern("IteratorGetNext:IteratorGetNext");
  const uint32_t backprop = names.Intern("gradients/conv1/Conv2D_grad/Conv2DBackpropInput:"
                                         "Conv2DBackpropInput");
  const uint32_t pack = names.Intern("model/input/0:Pack");
  const uint32_t bare_backprop = names.Intern("Conv2DBackpropInput");
  const uint32_t bare_dequeue = names.Intern("QueueDequeueV2");
  const uint32_t user_span = names.Intern("load_input");
  const uint32_t kernel = names.Intern("void at::native::vectorized_input_kernel<4>(int)");
  const std::vector<std::string> &defaults = DefaultInputOpPatterns();
  const std::vector<uint8_t> tf = ClassifyNames(names, defaults, false, Producer::kTensorFlow);
  CHECK((tf[dequeue] & kOpInput) != 0);
  CHECK((tf[get_next] & kOpInput) != 0);
  CHECK((tf[backprop] & kOpInput) == 0);
  CHECK((tf[pack] & kOpInput) == 0);
  CHECK((tf[bare_backprop] & kOpInput) == 0);
  CHECK((tf[bare_dequeue] & kOpInput) != 0);
  CHECK((tf[user_span] & kOpInput) != 0);  // not an op type: the patterns decide
  // In a trace of no TensorFlow producer, a bare name is a name: the patterns decide.
  const std::vector<uint8_t> other = ClassifyNames(names, defaults, false, Producer::kOther);
  CHECK((other[bare_backprop] & kOpInput) != 0);
  CHECK((other[backprop] & kOpInput) == 0);  // "scope/name:Type" is TensorFlow's, whoever wrote it
  CHECK((other[kernel] & kOpInput) != 0);    // C++ names are no op names
  // --input-ops: the user's patterns hold for every name.
  const std::vector<uint8_t> custom =
      ClassifyNames(names, {"*Conv2DBackpropInput"}, true, Producer::kTensorFlow);
  CHECK((custom[backprop] & kOpInput) != 0);
  CHECK((custom[dequeue] & kOpInput) == 0);
  CHECK(TensorFlowOpType("a/b:MatMul", false) == "MatMul");
  CHECK(TensorFlowOpType("_SOURCE:NoOp", false) == "NoOp");
  CHECK(TensorFlowOpType("MatMul", false).empty());
  CHECK(TensorFlowOpType("MatMul", true) == "MatMul");
  CHECK(TensorFlowOpType("nccl:all_reduce", false).empty());
  CHECK(TensorFlowOpType("Iterator::Prefetch", true).empty());
}

TEST_CASE("tools/diagnosis: a Python frame named like input is code, not input wait") {
  SummaryTestTrace builder;
  builder.StepAt(0, 0, 10 * kMs)
      .Host("model.py(28): run_on_input", 0, 8 * kMs, ActivityKind::kPythonFunction)
      .Host("load_input", 8 * kMs, 10 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(summary.steps[0].input_wait_ns == 2 * kMs);
  CHECK(summary.steps[0].longest_input_op == "load_input");
}

TEST_CASE("tools/diagnosis: communication kernels by the maintained list, DeepEP's included") {
  NameInterner names;
  const std::vector<std::string> kernels = {
      "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
      "ncclKernel_AllReduce_RING_LL_Sum_float",
      "rcclGenericKernel<1, false>",
      "void deep_ep::internode::dispatch<true, 8, 3, 0>(int4*, float*)",
      "void deep_ep::intranode::combine<nv_bfloat16, 8, 768>(...)",
      "nvshmemi_transfer_rma_kernel",
      "mscclKernel_Sum_half_Simple_false",
      "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)"};
  for (const std::string &kernel : kernels) names.Intern(kernel);
  const uint32_t gemm = names.Intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  const std::vector<uint8_t> classes = ClassifyNames(names, DefaultInputOpPatterns());
  for (uint32_t id = 0; id < kernels.size(); ++id) {
    INFO(kernels[id]);
    CHECK((classes[id] & kOpCollectiveKernel) != 0);
  }
  CHECK((classes[gemm] & kOpCollectiveKernel) == 0);

  // In a step, a DeepEP kernel with no compute alongside is communication.
  SummaryTestTrace builder;
  builder.StepAt(0, 0, 10 * kMs)
      .Kernel("void deep_ep::internode::dispatch<true, 8, 3, 0>(int4*, float*)", 0, 6 * kMs)
      .Kernel("gemm", 6 * kMs, 10 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(summary.steps[0].communication_ns == 6 * kMs);
  CHECK(summary.steps[0].gpu_compute_ns == 4 * kMs);
  CHECK(FindingOf(summary, "communication_bound") != nullptr);
}

TEST_CASE("tools/diagnosis: the stream table counts what its busy time measures") {
  // Kernels before the first step and after the last are in the trace, not in the window.
  SummaryTestTrace builder;
  builder.Kernel("warmup", 0, kMs).Kernel("warmup", 2 * kMs, 3 * kMs);
  builder.StepAt(0, 10 * kMs, 20 * kMs).Kernel("gemm", 11 * kMs, 15 * kMs);
  builder.StepAt(1, 20 * kMs, 30 * kMs).Kernel("gemm", 21 * kMs, 25 * kMs);
  builder.Kernel("eval", 40 * kMs, 41 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  REQUIRE(summary.streams.size() == 1);
  CHECK(summary.streams[0].kernels == 2);
  CHECK(summary.streams[0].busy_ns == 8 * kMs);
  CHECK(summary.step_total.kernels == 2);
  CHECK(summary.kernel_count == 5);  // the kernel table covers the whole trace, and says so
  const std::string text = SummaryToText(summary, {});
  CHECK(Contains(text, "Top kernels (5 kernels in the whole trace"));
  CHECK(Contains(text, "GPU utilisation over the steps"));
}

TEST_CASE("tools/diagnosis: advice only for the framework the trace shows") {
  // A C program's steps waiting in its own input function: no DataLoader, no tf.data.
  SummaryTestTrace c_program;
  for (int64_t step = 0; step < 3; ++step) {
    const int64_t b = step * 100 * kMs;
    c_program.StepAt(step, b, b + 100 * kMs)
        .Host("read_batch", b, b + 60 * kMs)
        .Host("compute", b + 60 * kMs, b + 100 * kMs);
  }
  TraceSummary summary = Summarize(c_program.trace(), {});
  CHECK(summary.framework == Producer::kOther);
  const Finding *input = FindingOf(summary, "input_bound");
  REQUIRE(input != nullptr);
  CHECK_FALSE(AnyContains(input->recommendations, "DataLoader"));
  CHECK_FALSE(AnyContains(input->recommendations, "tf.data"));
  CHECK(AnyContains(input->recommendations, "small files"));

  // The same loop with aten:: ops is PyTorch's: DataLoader advice, no tf.data.
  c_program.Host("aten::mm", 61 * kMs, 62 * kMs);
  summary = Summarize(c_program.trace(), {});
  CHECK(summary.framework == Producer::kPytorch);
  input = FindingOf(summary, "input_bound");
  REQUIRE(input != nullptr);
  CHECK(Contains(input->recommendations.front(), "DataLoader"));
  CHECK_FALSE(AnyContains(input->recommendations, "tf.data"));

  // A TensorFlow trace: tf.data advice, no DataLoader.
  c_program.trace().producer = Producer::kTensorFlow;
  summary = Summarize(c_program.trace(), {});
  input = FindingOf(summary, "input_bound");
  REQUIRE(input != nullptr);
  CHECK(Contains(input->recommendations.front(), "tf.data"));
  CHECK_FALSE(AnyContains(input->recommendations, "DataLoader"));
  const nlohmann::json json = nlohmann::json::parse(SummariesToJson({summary}));
  CHECK(json["traces"][0]["framework"] == "tensorflow");
}

TEST_CASE("tools/diagnosis: time before, between and after the steps has rows and its ops") {
  SummaryTestTrace builder;
  builder.Host("build_model", 0, 300 * kMs).Host("initialize_variables", 300 * kMs, 400 * kMs);
  builder.Host("train_function", 350 * kMs, 380 * kMs);  // the init run, nested: not a step
  for (int64_t step = 0; step < 3; ++step) {
    const int64_t b = 400 * kMs + step * 150 * kMs;
    builder.StepAt(step, b, b + 100 * kMs).Host("train_function", b, b + 100 * kMs);
    builder.Host("log_metrics", b + 100 * kMs, b + 140 * kMs);  // the loop's own work
  }
  builder.Host("save", 850 * kMs, 860 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(summary.before_first_step_ns == 400 * kMs);
  REQUIRE(summary.outside_steps.size() == 3);
  const OutsideSteps &before = summary.outside_steps[0];
  CHECK(before.where == "before_first_step");
  CHECK(before.stretches == 1);
  CHECK(before.breakdown.duration_ns == 400 * kMs);
  CHECK(before.breakdown.host_compute_ns == 400 * kMs);
  REQUIRE(before.top_ops.size() == 3);
  CHECK(before.top_ops[0] == std::pair<std::string, int64_t>{"build_model", 300 * kMs});
  CHECK(before.top_ops[1] == std::pair<std::string, int64_t>{"initialize_variables", 70 * kMs});
  CHECK(before.top_ops[2] == std::pair<std::string, int64_t>{"train_function", 30 * kMs});
  const OutsideSteps &between = summary.outside_steps[1];
  CHECK(between.where == "between_steps");
  CHECK(between.stretches == 2);
  CHECK(between.breakdown.duration_ns == 100 * kMs);
  CHECK(between.breakdown.host_compute_ns == 80 * kMs);
  CHECK(between.breakdown.idle_ns == 20 * kMs);
  REQUIRE(between.top_ops.size() == 1);
  CHECK(between.top_ops[0] == std::pair<std::string, int64_t>{"log_metrics", 80 * kMs});
  const OutsideSteps &after = summary.outside_steps[2];
  CHECK(after.where == "after_last_step");
  CHECK(after.breakdown.duration_ns == 60 * kMs);  // 800 ms to save's end at 860 ms
  CHECK(after.top_ops.front().first == "log_metrics");  // 40 ms of it, then save's 10 ms
  CHECK(summary.step_total.duration_ns == 300 * kMs);  // the steps' figures leave them out

  const std::string text = SummaryToText(summary, {});
  CHECK(Contains(text, "  before steps   400.000"));
  CHECK(Contains(text, "  between steps  100.000"));
  CHECK(Contains(text, "400.000 ms before the first (start-up: imports, model building, tracing, "
                       "compiling; mostly build_model 300.000 ms, initialize_variables 70.000 ms, "
                       "train_function 30.000 ms)"));
  CHECK(Contains(text, "100.000 ms between steps (2 gaps; mostly log_metrics 80.000 ms)"));
  const nlohmann::json json = nlohmann::json::parse(SummariesToJson({summary}));
  const nlohmann::json &outside = json["traces"][0]["outside_steps"];
  REQUIRE(outside.size() == 3);
  CHECK(outside[1]["where"] == "between_steps");
  CHECK(outside[1]["breakdown"]["duration_ns"] == 100 * kMs);
  CHECK(outside[1]["top_ops"][0]["name"] == "log_metrics");
}

}  // namespace tfprof::cli
