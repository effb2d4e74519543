// Summarize() and the diagnosis on traces built with known answers.
#include <nlohmann/json.hpp>

#include <string>

#include "doctest/doctest.h"
#include "tools/tfprof/analysis/diagnosis.h"
#include "tools/tfprof/analysis/intervals.h"
#include "tools/tfprof/analysis/median.h"
#include "tools/tfprof/analysis/summary_json.h"
#include "tools/tfprof/analysis/summary_text.h"
#include "tools/tfprof/analysis/summary_test_trace.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {
namespace {

using tfprof_test::ProcessOf;
using tfprof_test::StepOf;
using tfprof_test::TrackOf;

// Five 100 ms steps; in each the host waits 40 ms in IteratorGetNext while the GPU is idle, then
// train_step launches one 50 ms kernel and copies 100 MB in 5 ms.
Trace InputBoundTrace() {
  SummaryTestTrace builder;
  for (int64_t step = 0; step < 5; ++step) {
    const int64_t b = step * 100 * kMs;
    builder.StepAt(step + 1, b, b + 100 * kMs)
        .Host("IteratorGetNext", b, b + 40 * kMs)
        .Host("train_step", b + 40 * kMs, b + 100 * kMs)
        .Host("cudaLaunchKernel", b + 41 * kMs, b + 42 * kMs, ActivityKind::kRuntimeApi)
        .Kernel("gemm", b + 42 * kMs, b + 92 * kMs)
        .Copy(b + 92 * kMs, b + 97 * kMs, 100'000'000, CopyKind::kHostToDevice);
  }
  return std::move(builder.trace());
}

}  // namespace

TEST_CASE("tools/intervals: union, subtraction, gaps and lengths inside a window") {
  const std::vector<Interval> merged = Union({{5, 8}, {0, 3}, {2, 4}, {8, 9}, {7, 7}});
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].begin == 0);
  CHECK(merged[0].end == 4);
  CHECK(merged[1].begin == 5);
  CHECK(merged[1].end == 9);
  CHECK(TotalLength(merged) == 8);
  CHECK(LengthWithin(merged, 3, 6) == 2);
  const std::vector<Interval> rest = Subtract({{0, 10}}, {{2, 3}, {5, 7}});
  REQUIRE(rest.size() == 3);
  CHECK(rest[1].begin == 3);
  CHECK(rest[1].end == 5);
  CHECK(rest[2].begin == 7);
  const std::vector<Interval> gaps = Gaps(merged, -1, 12);
  REQUIRE(gaps.size() == 3);
  CHECK(gaps[0].begin == -1);
  CHECK(gaps[2].begin == 9);
  CHECK(gaps[2].end == 12);
}

TEST_CASE("tools/summary: a step with 40% GPU idle waiting for input is input-bound") {
  const TraceSummary summary = Summarize(InputBoundTrace(), {});
  REQUIRE(summary.steps.size() == 5);
  for (const StepBreakdown &step : summary.steps) {
    CHECK(step.duration_ns == 100 * kMs);
    CHECK(step.gpu_compute_ns == 50 * kMs);
    CHECK(step.memcpy_ns == 5 * kMs);
    CHECK(step.input_wait_ns == 40 * kMs);
    CHECK(step.host_compute_ns == 5 * kMs);  // 40-42 ms and 97-100 ms in train_step
    CHECK(step.idle_ns == 0);
    CHECK(step.gpu_idle_ns == 45 * kMs);
    CHECK(step.kernels == 1);
    CHECK(step.launches == 1);
    CHECK(step.longest_input_op == "IteratorGetNext");
  }
  CHECK(summary.step_total.duration_ns == 500 * kMs);
  CHECK(summary.step_total.input_wait_ns == 200 * kMs);

  REQUIRE(!summary.findings.empty());
  const Finding &first = summary.findings.front();
  CHECK(first.kind == "input_bound");
  CHECK(first.title == "Input-bound: the GPU waits for input 40% of step time");
  CHECK(first.evidence.find("In 5 of 5 steps") != std::string::npos);
  CHECK(first.evidence.find("IteratorGetNext") != std::string::npos);
  CHECK(first.steps.size() == 5);
  bool mentions_prefetch = false, mentions_tfrecord = false, mentions_parallel = false;
  for (const std::string &r : first.recommendations) {
    mentions_prefetch |= r.find("prefetch") != std::string::npos;
    mentions_tfrecord |= r.find("TFRecord") != std::string::npos;
    mentions_parallel |= r.find("num_parallel_calls") != std::string::npos;
  }
  CHECK(mentions_prefetch);
  CHECK(mentions_tfrecord);
  CHECK(mentions_parallel);
  CHECK(FindingOf(summary, "launch_bound") == nullptr);
  CHECK(FindingOf(summary, "copy_bound") == nullptr);
}

TEST_CASE("tools/summary: top ops, kernels, copies, utilisation and idle gaps") {
  const TraceSummary summary = Summarize(InputBoundTrace(), {});
  REQUIRE(!summary.top_ops_by_self.empty());
  CHECK(summary.top_ops_by_self[0].name == "train_step");
  CHECK(summary.top_ops_by_self[0].count == 5);
  CHECK(summary.top_ops_by_self[0].self_ns == 5 * 59 * kMs);  // less the launch inside it
  CHECK(summary.top_ops_by_self[0].total_ns == 5 * 60 * kMs);
  CHECK(summary.top_ops_by_self[1].name == "IteratorGetNext");
  CHECK(summary.top_ops_by_self[1].self_ns == 200 * kMs);

  REQUIRE(summary.top_kernels.size() == 1);
  CHECK(summary.top_kernels[0].name == "gemm");
  CHECK(summary.top_kernels[0].count == 5);
  CHECK(summary.top_kernels[0].share == doctest::Approx(1.0));
  CHECK(summary.kernel_median_ns == 50 * kMs);

  REQUIRE(summary.copies.size() == 1);
  CHECK(summary.copies[0].label == "HtoD");
  CHECK(summary.copies[0].bytes == 500'000'000);
  CHECK(summary.copies[0].gigabytes_per_second == doctest::Approx(20.0));

  REQUIRE(summary.devices.size() == 1);
  CHECK(summary.devices[0].busy_ns == 5 * 55 * kMs);
  CHECK(summary.devices[0].window_ns == 500 * kMs);
  CHECK(summary.devices[0].utilization == doctest::Approx(0.55));
  REQUIRE(summary.devices[0].timeline.size() == 200);
  CHECK(summary.devices[0].timeline[0] == doctest::Approx(0.0));   // 0-2.5 ms: input
  CHECK(summary.devices[0].timeline[20] == doctest::Approx(1.0));  // 50-52.5 ms: gemm
  REQUIRE(summary.streams.size() == 1);
  CHECK(summary.streams[0].stream == 7);
  CHECK(summary.streams[0].kernels == 5);
  CHECK(summary.streams[0].copies == 5);

  // Gaps: 0-42 ms, then 97-142, 197-242, ... (45 ms each, across step boundaries), 497-500.
  CHECK(summary.idle_gap_count == 6);
  REQUIRE(summary.idle_gaps.size() == 6);
  CHECK(summary.idle_gaps[0].duration_ns == 45 * kMs);
  CHECK(summary.idle_gaps[0].begin_ns == 97 * kMs);
  CHECK(summary.idle_gaps[0].step == 1);
  CHECK(summary.idle_gaps[0].host_activity == "IteratorGetNext");
}

TEST_CASE("tools/summary: only the `top` longest idle gaps are kept, ties earliest first") {
  // InputBoundTrace's gaps: 42 ms at 0, four of 45 ms (at 97, 197, 297, 397 ms), 3 ms at 497.
  SummaryOptions options;
  options.top = 2;
  const TraceSummary two = Summarize(InputBoundTrace(), options);
  CHECK(two.idle_gap_count == 6);  // all of them are counted
  CHECK(two.idle_gap_median_ns == 45 * kMs);
  REQUIRE(two.idle_gaps.size() == 2);
  CHECK(two.idle_gaps[0].begin_ns == 97 * kMs);
  CHECK(two.idle_gaps[1].begin_ns == 197 * kMs);
  CHECK(two.idle_gaps[1].duration_ns == 45 * kMs);
  CHECK(two.idle_gaps[1].step == 2);
  CHECK(two.idle_gaps[1].process == two.devices[0].process);
  options.top = 6;
  const TraceSummary all = Summarize(InputBoundTrace(), options);
  REQUIRE(all.idle_gaps.size() == 6);
  CHECK(all.idle_gaps[4].begin_ns == 0);  // 42 ms
  CHECK(all.idle_gaps[5].duration_ns == 3 * kMs);
  options.top = 0;
  const TraceSummary none = Summarize(InputBoundTrace(), options);
  CHECK(none.idle_gaps.empty());
  CHECK(none.idle_gap_count == 6);
}

TEST_CASE("tools/summary: medians of an even count average the two middle values") {
  std::vector<int64_t> none;
  CHECK(MedianNs(none) == 0);
  std::vector<int64_t> odd = {9, 1, 5};
  CHECK(MedianNs(odd) == 5);
  std::vector<int64_t> even = {40, 10, 30, 20};
  CHECK(MedianNs(even) == 25);  // not 30, the upper middle value
  std::vector<int64_t> two = {3, 4};
  CHECK(MedianNs(two) == 3);  // rounded down
  // The summary's kernel median: two kernels of 10 and 30 us.
  SummaryTestTrace builder;
  builder.StepAt(0, 0, 10 * kMs);
  builder.Kernel("short", 1 * kMs, 1 * kMs + 10 * kUs).Kernel("long", 2 * kMs, 2 * kMs + 30 * kUs);
  CHECK(Summarize(builder.trace(), {}).kernel_median_ns == 20 * kUs);
}

TEST_CASE("tools/summary: many tiny kernels with launch gaps are launch-bound") {
  SummaryTestTrace builder;
  builder.StepAt(0, 0, 10 * kMs);
  for (int64_t i = 0; i < 200; ++i) {
    const int64_t b = i * 50 * kUs;
    builder.Host("cudaLaunchKernel", b, b + 40 * kUs, ActivityKind::kRuntimeApi)
        .Kernel("elementwise", b + 40 * kUs, b + 45 * kUs);
  }
  const TraceSummary summary = Summarize(builder.trace(), {});
  REQUIRE(!summary.findings.empty());
  CHECK(summary.findings[0].kind == "launch_bound");
  CHECK(summary.findings[0].evidence.find("200 kernels per step") != std::string::npos);
  CHECK(summary.step_total.launches == 200);
  CHECK(summary.kernel_median_ns == 5 * kUs);
  CHECK(FindingOf(summary, "input_bound") == nullptr);
}

TEST_CASE("tools/summary: copies with no kernel alongside are copy-bound") {
  SummaryTestTrace builder;
  builder.StepAt(0, 0, 10 * kMs)
      .Copy(0, 6 * kMs, 6'000'000, CopyKind::kHostToDevice)  // 1 GB/s: pageable
      .Kernel("conv", 6 * kMs, 10 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  REQUIRE(!summary.findings.empty());
  CHECK(summary.findings[0].kind == "copy_bound");
  CHECK(summary.findings[0].title.find("60%") != std::string::npos);
  CHECK(summary.findings[0].evidence.find("pageable") != std::string::npos);
}

TEST_CASE("tools/summary: a host blocked in cudaStreamSynchronize with the GPU idle stalls") {
  SummaryTestTrace builder;
  builder.StepAt(0, 0, 10 * kMs)
      .Kernel("conv", 0, 5 * kMs)
      .Host("cudaStreamSynchronize", 1 * kMs, 5 * kMs, ActivityKind::kRuntimeApi)
      .Host("optimizer", 5 * kMs, 10 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(summary.step_total.sync_ns == 4 * kMs);
  REQUIRE(FindingOf(summary, "sync_stall") != nullptr);
  CHECK(FindingOf(summary, "sync_stall")->title.find("40%") != std::string::npos);
}

TEST_CASE("tools/summary: without steps or GPU the whole trace is the breakdown") {
  SummaryTestTrace builder;
  builder.Host("load_batch", 0, 30 * kMs).Host("forward", 30 * kMs, 100 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(!summary.has_steps);
  CHECK(!summary.has_gpu);
  CHECK(summary.step_total.duration_ns == 100 * kMs);
  CHECK(summary.step_total.input_wait_ns == 30 * kMs);
  CHECK(summary.step_total.host_compute_ns == 70 * kMs);
  REQUIRE(!summary.findings.empty());
  CHECK(summary.findings[0].title == "Input-bound: 30% of step time is spent waiting for input");
}

TEST_CASE("tools/summary: --input-ops patterns replace the defaults") {
  SummaryOptions options;
  options.input_ops = {"decode_*"};
  SummaryTestTrace builder;
  builder.Host("IteratorGetNext", 0, 30 * kMs).Host("decode_jpeg", 30 * kMs, 50 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), options);
  CHECK(summary.step_total.input_wait_ns == 20 * kMs);
  CHECK(summary.step_total.longest_input_op == "decode_jpeg");
}

TEST_CASE("tools/summary: a recursive op's total time counts the outer call once") {
  SummaryTestTrace builder;
  builder.Host("fib", 0, 10 * kMs).Host("fib", 1 * kMs, 9 * kMs).Host("fib", 2 * kMs, 3 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  REQUIRE(summary.top_ops_by_total.size() == 1);
  CHECK(summary.top_ops_by_total[0].count == 3);
  CHECK(summary.top_ops_by_total[0].total_ns == 10 * kMs);
  CHECK(summary.top_ops_by_total[0].self_ns == 10 * kMs);
}

TEST_CASE("tools/summary: same-named spans that overlap without nesting count their union") {
  // Spans of one name that overlap on a thread without one holding the other: the total is the
  // time covered (15 ms), and self time never exceeds it.
  SummaryTestTrace builder;
  builder.Host("load", 0, 10 * kMs).Host("load", 5 * kMs, 15 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  REQUIRE(summary.top_ops_by_total.size() == 1);
  CHECK(summary.top_ops_by_total[0].total_ns == 15 * kMs);
  CHECK(summary.top_ops_by_total[0].self_ns <= summary.top_ops_by_total[0].total_ns);
}

TEST_CASE("tools/summary: collectives are communication, not compute") {
  // One 100 ms step: a 30 ms compute kernel, a 50 ms NCCL kernel of which 10 ms overlap it, and
  // PyTorch's host op that only queues the collective.
  SummaryTestTrace builder;
  builder.StepAt(1, 0, 100 * kMs)
      .Host("nccl:all_reduce", 0, 1 * kMs)
      .Kernel("gemm", 0, 30 * kMs)
      .Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
              20 * kMs, 70 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  const StepBreakdown &step = summary.steps.at(0);
  CHECK(step.gpu_compute_ns == 30 * kMs);
  CHECK(step.communication_ns == 40 * kMs);  // the 10 ms under gemm are compute
  CHECK(step.host_compute_ns == 0);           // the host op ran while gemm did
  CHECK(step.gpu_idle_ns == 30 * kMs);
  CHECK(summary.communication_kernel_count == 1);
  CHECK(summary.communication_kernel_ns == 50 * kMs);
  REQUIRE(summary.devices.size() == 1);
  CHECK(summary.devices[0].communication_ns == 50 * kMs);
  REQUIRE(!summary.findings.empty());
  CHECK(summary.findings[0].kind == "communication_bound");
  CHECK(summary.findings[0].evidence.find("20% overlapped compute") != std::string::npos);
}

TEST_CASE("tools/summary: a Gloo collective blocks its host thread: communication") {
  SummaryTestTrace builder;
  builder.StepAt(1, 0, 10 * kMs).Host("gloo:all_reduce", 2 * kMs, 8 * kMs).Host("step", 0, 2 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(summary.steps.at(0).communication_ns == 6 * kMs);
  CHECK(summary.steps.at(0).host_compute_ns == 2 * kMs);
}

TEST_CASE("tools/summary: input wait is the step thread's; other threads' spans are not it") {
  // The trainer (track 0, which marks the steps) waits 80 ms in IteratorGetNext while a loader
  // thread (track 2) has read_file open the whole step.
  SummaryTestTrace builder;
  Trace &trace = builder.trace();
  trace.tracks.push_back(TrackOf(0, 2, "loader", TrackKind::kHostThread, -1, -1));
  builder.StepAt(1, 0, 100 * kMs)
      .Host("IteratorGetNext", 0, 80 * kMs)
      .Host("train_step", 80 * kMs, 100 * kMs);
  trace.steps[0].track = 0;
  Activity read = trace.activities.back();
  read.name = trace.names.Intern("read_file");
  read.begin_ns = 0;
  read.end_ns = 100 * kMs;
  read.track = 2;
  trace.activities.push_back(read);
  const TraceSummary summary = Summarize(trace, {});
  CHECK(summary.steps.at(0).input_wait_ns == 80 * kMs);
  CHECK(summary.steps.at(0).host_compute_ns == 20 * kMs);
  CHECK(summary.step_thread == "main (tid 1)");
  REQUIRE(!summary.findings.empty());
  CHECK(summary.findings[0].kind == "input_bound");
  CHECK(summary.findings[0].evidence.find("step thread main (tid 1)") != std::string::npos);

  // Without the step's thread, the loader's span computing wins over the wait, as before.
  trace.steps[0].track = kNoTrack;
  CHECK(Summarize(trace, {}).steps.at(0).input_wait_ns == 0);
}

TEST_CASE("tools/summary: advice comes in the order of the trace's framework") {
  Trace trace = InputBoundTrace();
  const auto first_advice = [&](Producer producer) {
    trace.producer = producer;
    const TraceSummary summary = Summarize(trace, {});
    REQUIRE(!summary.findings.empty());
    REQUIRE(summary.findings[0].kind == "input_bound");
    return summary.findings[0].recommendations.at(0);
  };
  CHECK(first_advice(Producer::kPytorch).find("DataLoader") != std::string::npos);
  CHECK(first_advice(Producer::kTensorFlow).find("tf.data") != std::string::npos);
  // Pytorch's advice never comes after TensorFlow's for a PyTorch trace, and the reverse.
  trace.producer = Producer::kPytorch;
  const std::vector<std::string> advice = Summarize(trace, {}).findings[0].recommendations;
  size_t last_torch = 0, first_tf = advice.size();
  for (size_t i = 0; i < advice.size(); ++i) {
    if (advice[i].find("DataLoader") != std::string::npos) last_torch = i;
    if (advice[i].find("tf.data") != std::string::npos) first_tf = std::min(first_tf, i);
  }
  CHECK(last_torch < first_tf);

  // A tfprof trace (tfprof run on a Keras or PyTorch program) orders by the input op waited in.
  const auto first_tfprof_advice = [](const std::string &input_op) {
    SummaryTestTrace builder;
    for (int64_t step = 0; step < 3; ++step) {
      const int64_t b = step * 100 * kMs;
      builder.StepAt(step, b, b + 100 * kMs).Host(input_op, b, b + 60 * kMs);
    }
    builder.trace().producer = Producer::kTfprof;
    const TraceSummary summary = Summarize(builder.trace(), {});
    REQUIRE(!summary.findings.empty());
    REQUIRE(summary.findings[0].kind == "input_bound");
    return summary.findings[0].recommendations.at(0);
  };
  CHECK(first_tfprof_advice("IteratorGetNextOp::DoCompute").find("tf.data") != std::string::npos);
  CHECK(first_tfprof_advice("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")
            .find("DataLoader") != std::string::npos);
}

TEST_CASE("tools/summary: dropped events come first in the diagnosis") {
  Trace trace = InputBoundTrace();
  trace.losses.reported = true;
  trace.losses.dropped_events = 12;
  const TraceSummary summary = Summarize(trace, {});
  REQUIRE(summary.findings.size() >= 2);
  CHECK(summary.findings[0].kind == "data_loss");
  CHECK(summary.findings[0].evidence.find("12 host events") != std::string::npos);
  CHECK(summary.findings[1].kind == "input_bound");
}

TEST_CASE("tools/summary: time outside the steps and a long first step are said") {
  SummaryTestTrace builder;
  builder.Host("import_and_build", 0, 900 * kMs);
  builder.StepAt(0, 1000 * kMs, 1400 * kMs).Host("train_function", 1000 * kMs, 1400 * kMs);
  for (int64_t step = 1; step < 5; ++step) {
    const int64_t b = 1400 * kMs + (step - 1) * 100 * kMs;
    builder.StepAt(step, b, b + 100 * kMs).Host("train_function", b, b + 100 * kMs);
  }
  builder.Host("save_model", 1850 * kMs, 1900 * kMs);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(summary.before_first_step_ns == 1000 * kMs);
  CHECK(summary.after_last_step_ns == 100 * kMs);
  CHECK(summary.step_total.duration_ns == 800 * kMs);
  const std::string text = SummaryToText(summary, {});
  CHECK(text.find("Outside the steps: 1000.000 ms before the first") != std::string::npos);
  CHECK(text.find("100.000 ms after the last") != std::string::npos);
  CHECK(text.find("The first step (0) took 4.0x the median") != std::string::npos);
  const nlohmann::json json = nlohmann::json::parse(SummariesToJson({summary}));
  CHECK(json["traces"][0]["before_first_step_ns"] == 1000 * kMs);
  CHECK(json["traces"][0]["after_last_step_ns"] == 100 * kMs);

  // Steps that fill the trace: nothing to say.
  const std::string input_bound = SummaryToText(Summarize(InputBoundTrace(), {}), {});
  CHECK(input_bound.find("Outside the steps") == std::string::npos);
  CHECK(input_bound.find("The first step") == std::string::npos);
}

TEST_CASE("tools/summary: --json carries the same figures and the text names the diagnosis") {
  const TraceSummary summary = Summarize(InputBoundTrace(), {});
  const nlohmann::json json = nlohmann::json::parse(SummariesToJson({summary}));
  CHECK(json["tfprof_summary_version"] == 1);
  const nlohmann::json &trace = json["traces"][0];
  CHECK(trace["steps"].size() == 5);
  CHECK(trace["steps"][2]["input_wait_ns"] == 40 * kMs);
  CHECK(trace["step_total"]["gpu_idle_ns"] == 225 * kMs);
  CHECK(trace["findings"][0]["kind"] == "input_bound");
  CHECK(trace["top_kernels"][0]["name"] == "gemm");
  CHECK(trace["devices"][0]["timeline"].size() == 200);
  CHECK(trace["idle_gaps"][0]["step"] == 1);

  const std::string text = SummaryToText(summary, {});
  CHECK(text.find("Input-bound: the GPU waits for input 40% of step time") != std::string::npos);
  CHECK(text.find("40.0%") != std::string::npos);
  CHECK(text.find("IteratorGetNext") != std::string::npos);
}

}  // namespace tfprof::cli
