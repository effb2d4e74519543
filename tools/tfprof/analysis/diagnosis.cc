#include "tools/tfprof/analysis/diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace tfprof::cli {
namespace {

std::string Ms(int64_t ns) { return absl::StrFormat("%.1f ms", static_cast<double>(ns) / 1e6); }
std::string Us(int64_t ns) { return absl::StrFormat("%.1f us", static_cast<double>(ns) / 1e3); }
std::string Percent(double fraction) { return absl::StrFormat("%.0f%%", 100 * fraction); }

double Fraction(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// Steps where `part` is at least `threshold` of the step.
std::vector<int64_t> StepsWhere(const TraceSummary &summary, int64_t StepBreakdown::*part,
                                double threshold) {
  std::vector<int64_t> steps;
  for (const StepBreakdown &step : summary.steps) {
    if (Fraction(step.*part, step.duration_ns) >= threshold) steps.push_back(step.number);
  }
  return steps;
}

// Advice for one framework, or for any.
struct Advice {
  Producer framework = Producer::kOther;  // kOther: any
  std::string text;
};

// The advice for the trace's framework: its own first, then what holds for any framework. A
// trace of no known framework (a C program, a plain Python loop) gets only the latter: tips for a
// DataLoader or tf.data would be about code it does not have.
std::vector<std::string> ForFramework(Producer framework, std::vector<Advice> advice) {
  const bool known = framework == Producer::kPytorch || framework == Producer::kTensorFlow;
  std::vector<std::string> texts;
  for (const Advice &a : advice) {
    if (known && a.framework == framework) texts.push_back(a.text);
  }
  for (const Advice &a : advice) {
    if (a.framework == Producer::kOther) texts.push_back(a.text);
  }
  return texts;
}

std::vector<std::string> ForFramework(const TraceSummary &summary, std::vector<Advice> advice) {
  return ForFramework(summary.framework, std::move(advice));
}

// The framework whose input pipeline the steps waited in: the trace's, else the one the longest
// input op belongs to.
Producer InputFramework(const TraceSummary &summary) {
  if (summary.framework == Producer::kPytorch || summary.framework == Producer::kTensorFlow) {
    return summary.framework;
  }
  const std::string &op = summary.step_total.longest_input_op;
  if (absl::StrContains(op, "DataLoader")) return Producer::kPytorch;
  if (absl::StartsWith(op, "Iterator") || absl::StrContains(op, "IteratorGetNext")) {
    return Producer::kTensorFlow;
  }
  return summary.framework;
}

constexpr Producer kTorch = Producer::kPytorch;
constexpr Producer kTf = Producer::kTensorFlow;
constexpr Producer kAny = Producer::kOther;

// A finding of `kind` about the steps where `part` is at least `threshold` of the step.
Finding StepFinding(const TraceSummary &summary, const char *kind,
                    int64_t StepBreakdown::*part, double threshold) {
  Finding finding;
  finding.kind = kind;
  finding.steps = StepsWhere(summary, part, threshold);
  return finding;
}

// "<what> 42% of step time".
std::string ShareOfStepTime(const char *what, double fraction) {
  return absl::StrCat(what, Percent(fraction), " of step time");
}

std::string StepsPhrase(const TraceSummary &summary, size_t affected) {
  if (!summary.has_steps) return "Over the trace";
  return absl::StrCat("In ", affected, " of ", summary.steps.size(), " steps");
}

Finding InputBound(const TraceSummary &summary, double fraction) {
  const StepBreakdown &total = summary.step_total;
  Finding finding = StepFinding(summary, "input_bound", &StepBreakdown::input_wait_ns, 0.10);
  finding.title = summary.has_gpu
                      ? ShareOfStepTime("Input-bound: the GPU waits for input ", fraction)
                      : absl::StrCat("Input-bound: ", Percent(fraction),
                                     " of step time is spent waiting for input");
  const size_t steps = std::max<size_t>(summary.steps.size(), 1);
  // "the step thread trainer (tid 42)"; Kineto's names say "thread 42 (python)" themselves.
  const std::string &thread = summary.step_thread;
  const std::string waiter = thread.empty()                  ? "the host"
                             : thread.rfind("thread ", 0) == 0 ? "the step " + thread
                                                               : "the step thread " + thread;
  finding.evidence = absl::StrCat(
      StepsPhrase(summary, finding.steps.size()),
      summary.has_gpu ? absl::StrCat(" the GPU was idle while ", waiter, " waited for input: ")
                      : absl::StrCat(" ", waiter, " was waiting in the input pipeline: "),
      Ms(total.input_wait_ns), " of ", Ms(total.duration_ns), " (", Percent(fraction), ")");
  if (!total.longest_input_op.empty()) {
    absl::StrAppend(&finding.evidence, ", mostly in ", total.longest_input_op, " (",
                    Ms(total.input_wait_ns / static_cast<int64_t>(steps)), " per step)");
  }
  if (summary.has_gpu) {
    absl::StrAppend(&finding.evidence, ". GPU compute was ",
                    Percent(Fraction(total.gpu_compute_ns, total.duration_ns)), " of step time");
  }
  finding.evidence += ".";
  finding.recommendations = ForFramework(InputFramework(summary), {
      {kTorch, "Load batches in worker processes: DataLoader(num_workers=N, "
               "persistent_workers=True), with N up to the CPU cores per GPU."},
      {kTorch, "Overlap input with training: DataLoader(prefetch_factor=..., pin_memory=True)."},
      {kTf, "Read input files in parallel: tf.data.TFRecordDataset(files, "
            "num_parallel_reads=tf.data.AUTOTUNE) or Dataset.interleave(..., "
            "num_parallel_calls=tf.data.AUTOTUNE)."},
      {kTf, "Run preprocessing in parallel: Dataset.map(fn, num_parallel_calls=tf.data.AUTOTUNE)."},
      {kTf, "Overlap input with training: end the pipeline with Dataset.prefetch(tf.data.AUTOTUNE)."},
      {kAny, "If the input is many small files, pack them into a few large ones (100 MB or more "
             "each: TFRecord, WebDataset shards): every small file costs a seek and an open."},
      {kAny, "If the dataset fits in memory, cache it after decoding (Dataset.cache(), or decoded "
             "tensors kept in memory) rather than reading and decoding it every epoch."}});
  return finding;
}

Finding CopyBound(const TraceSummary &summary, double fraction) {
  const StepBreakdown &total = summary.step_total;
  Finding finding = StepFinding(summary, "copy_bound", &StepBreakdown::memcpy_ns, 0.15);
  finding.title = ShareOfStepTime("Copy-bound: copies with no kernel alongside take ", fraction);
  uint64_t bytes = 0;
  std::string rates;
  bool slow_host_copies = false;
  for (const CopyStat &copy : summary.copies) {
    bytes += copy.bytes;
    if (copy.label == "memset" || copy.bytes == 0) continue;
    absl::StrAppend(&rates, rates.empty() ? "" : ", ", copy.label, " at ",
                    absl::StrFormat("%.1f GB/s", copy.gigabytes_per_second));
    if ((copy.label == "HtoD" || copy.label == "DtoH") && copy.gigabytes_per_second < 5) {
      slow_host_copies = true;
    }
  }
  finding.evidence = absl::StrCat(
      StepsPhrase(summary, finding.steps.size()), " the GPU only copied for ",
      Ms(total.memcpy_ns), " of ", Ms(total.duration_ns), " (", Percent(fraction), "); ",
      absl::StrFormat("%.2f GB", static_cast<double>(bytes) / 1e9), " moved",
      rates.empty() ? "" : absl::StrCat(" (", rates, ")"), ".");
  if (slow_host_copies) {
    absl::StrAppend(&finding.evidence,
                    " Host copies below 5 GB/s usually come from pageable memory.");
  }
  finding.recommendations = ForFramework(summary, {
      {kTorch, "Copy from pinned (page-locked) host memory: DataLoader(pin_memory=True) or "
               "tensor.pin_memory(); pageable copies are staged through a driver buffer."},
      {kTorch, "Overlap copies with compute: tensor.to(device, non_blocking=True) from pinned "
               "memory, on a side stream."},
      {kTf, "Overlap copies with compute: tf.data.experimental.prefetch_to_device('/gpu:0') at "
            "the end of the input pipeline."},
      {kAny, "Move less: keep tensors on the GPU across steps, copy whole batches rather than "
             "samples, and send compact types (uint8 images, bf16/fp16)."}});
  return finding;
}

Finding LaunchBound(const TraceSummary &summary, double gpu_idle) {
  const StepBreakdown &total = summary.step_total;
  const int64_t steps = static_cast<int64_t>(std::max<size_t>(summary.steps.size(), 1));
  Finding finding = StepFinding(summary, "launch_bound", &StepBreakdown::gpu_idle_ns, 0.25);
  finding.title = ShareOfStepTime("Launch-bound: many short kernels leave the GPU idle ", gpu_idle);
  finding.evidence = absl::StrCat(
      total.kernels / static_cast<uint64_t>(steps), " kernels per step with a median of ",
      Us(summary.kernel_median_ns), "; the GPU was idle ", Percent(gpu_idle),
      " of step time, in gaps with a median of ", Us(summary.idle_gap_median_ns));
  if (total.launches > total.one_time_launches) {
    absl::StrAppend(&finding.evidence, "; the host spent ",
                    Percent(Fraction(total.launch_ns - total.one_time_launch_ns,
                                     total.duration_ns)),
                    " of step time in launch calls (",
                    (total.launches - total.one_time_launches) / static_cast<uint64_t>(steps),
                    " per step)");
  }
  if (total.one_time_launches > 0) {
    absl::StrAppend(&finding.evidence, ", not counting ", total.one_time_launches,
                    " one-time first launches (", Ms(total.one_time_launch_ns), ")");
  }
  finding.evidence += ".";
  finding.recommendations = ForFramework(summary, {
      {kTorch, "Capture the step in a CUDA graph so that one launch replays all its kernels: "
               "torch.cuda.graphs or torch.compile(mode=\"reduce-overhead\")."},
      {kTorch, "Fuse small kernels: torch.compile, fused optimizers "
               "(torch.optim.AdamW(fused=True))."},
      {kTf, "Compile the step with XLA (tf.function(jit_compile=True)): fewer, fused kernels."},
      {kAny, "Give each kernel more work: a larger batch amortises the launch cost."}});
  return finding;
}

Finding SyncStall(const TraceSummary &summary, double fraction) {
  const StepBreakdown &total = summary.step_total;
  Finding finding = StepFinding(summary, "sync_stall", &StepBreakdown::sync_ns, 0.10);
  finding.title = ShareOfStepTime("Synchronisation stalls: the host blocks on the GPU ", fraction);
  finding.evidence = absl::StrCat(
      StepsPhrase(summary, finding.steps.size()),
      " the host waited in synchronising calls (cudaStreamSynchronize, synchronous cudaMemcpy, "
      ".item()) for ",
      Ms(total.sync_ns), " of ", Ms(total.duration_ns), ", and the GPU was idle ",
      Percent(Fraction(total.gpu_idle_ns, total.duration_ns)),
      " of step time: the host cannot queue work ahead while it waits.");
  finding.recommendations = ForFramework(summary, {
      {kTorch, "Do not read GPU values on the host every step (.item(), .cpu(), .numpy(), "
               "float(loss), print(tensor)): accumulate metrics on the GPU and read them every N "
               "steps."},
      {kTorch, "Copy from pinned memory: cudaMemcpyAsync from pageable memory waits for the copy "
               "(tensor.pin_memory(), DataLoader(pin_memory=True))."},
      {kTf, "Do not fetch tensors to the host every step (.numpy(), session.run of metrics): "
            "read metrics every N steps."},
      {kAny, "Replace synchronous copies with non_blocking ones and CUDA events, and remove "
             "device-wide synchronisation (torch.cuda.synchronize(), cudaDeviceSynchronize()) "
             "from the training loop."}});
  return finding;
}

Finding CommunicationBound(const TraceSummary &summary, double fraction) {
  const StepBreakdown &total = summary.step_total;
  Finding finding =
      StepFinding(summary, "communication_bound", &StepBreakdown::communication_ns, 0.15);
  finding.title =
      ShareOfStepTime("Communication-bound: collectives with no compute alongside take ", fraction);
  finding.evidence = absl::StrCat(
      StepsPhrase(summary, finding.steps.size()), " collectives ran with no compute kernel "
      "alongside for ", Ms(total.communication_ns), " of ", Ms(total.duration_ns), " (",
      Percent(fraction), "); compute kernels ran ",
      Percent(Fraction(total.gpu_compute_ns, total.duration_ns)), " of step time");
  if (summary.communication_kernel_ns > 0) {
    const int64_t hidden = summary.communication_kernel_ns - total.communication_ns;
    absl::StrAppend(&finding.evidence, ". Of ", Ms(summary.communication_kernel_ns),
                    " in collective kernels, ",
                    Percent(Fraction(std::max<int64_t>(hidden, 0), summary.communication_kernel_ns)),
                    " overlapped compute");
  }
  for (const KernelStat &kernel : summary.top_kernels) {
    if (!kernel.communication) continue;
    absl::StrAppend(&finding.evidence, "; the largest is ", kernel.name, " (", kernel.count,
                    " calls, ", Ms(kernel.total_ns), ")");
    break;
  }
  finding.evidence += ".";
  finding.recommendations = ForFramework(summary, {
      {kAny, "Compare the ranks: a collective waits for the slowest rank, so one late rank "
             "(uneven input, a slow GPU or host) shows as communication time on all the others "
             "(tfprof merge the ranks' traces and compare their step breakdowns)."},
      {kTorch, "Overlap gradient communication with the backward pass: DDP(bucket_cap_mb=...) "
               "tuned, gradient_as_bucket_view=True, no find_unused_parameters unless needed; "
               "with FSDP, backward_prefetch=BACKWARD_PRE and forward_prefetch=True."},
      {kTorch, "Communicate less: gradient accumulation (no_sync() for N-1 of N micro-steps), "
               "bf16 gradients or a compression hook (PowerSGD)."},
      {kTf, "Overlap and batch all-reduces: tf.distribute's CommunicationOptions("
            "bytes_per_pack=...) and implementation=NCCL for MirroredStrategy / "
            "MultiWorkerMirroredStrategy."},
      {kAny, "Check the interconnect: NCCL_DEBUG=INFO shows whether NVLink/InfiniBand are used "
             "or traffic falls back to sockets."}});
  return finding;
}

Finding LowUtilization(const TraceSummary &summary, double gpu_idle) {
  Finding finding;
  finding.kind = "low_gpu_utilization";
  finding.title = absl::StrCat("Low GPU utilisation: the GPU is idle ", Percent(gpu_idle),
                               " of step time with no single cause above the thresholds");
  finding.evidence = absl::StrCat(summary.idle_gap_count, " idle gaps of 1 us or more");
  if (!summary.idle_gaps.empty()) {
    const IdleGap &longest = summary.idle_gaps.front();
    absl::StrAppend(&finding.evidence, "; the longest, ", Ms(longest.duration_ns), ", was during ",
                    longest.host_activity.empty() ? "no recorded host op" : longest.host_activity);
  }
  finding.evidence += ".";
  finding.recommendations = ForFramework(summary, {
      {kAny, "Look at the idle-gap table: the host op running during each gap is what the GPU "
             "waits for; annotate the host code around it (tfprof.span, NVTX ranges) to see more."},
      {kAny, "Check the batch size and whether the model is too small to keep the GPU busy."}});
  return finding;
}

Finding GpuRecordsMissing(const TraceSummary &summary) {
  Finding finding;
  finding.kind = "gpu_records_missing";
  const uint64_t launches = summary.launch_calls;
  const uint64_t missing = summary.launches_without_gpu_work;
  finding.title = summary.has_gpu
                      ? absl::StrCat("Incomplete GPU record: ", missing, " of ", launches,
                                     " kernel launches have no GPU record, so GPU figures "
                                     "undercount")
                      : absl::StrCat("GPU activity missing: ", launches, " kernel launch",
                                     launches == 1 ? "" : "es",
                                     " but no GPU record; every figure is the host's");
  finding.evidence =
      summary.has_gpu
          ? absl::StrCat(missing, " launch calls carry a correlation id that no recorded kernel, "
                                  "copy or memset carries: their GPU work was not recorded.")
          : absl::StrCat("The host called launch functions (cudaLaunchKernel, ...) ", launches,
                         " times, and the trace holds no kernel, copy or memset: the GPU side of "
                         "the recording is missing. The breakdown counts no GPU time, so no "
                         "GPU-bound finding can be made.");
  if (!summary.has_gpu && summary.gpu_annotations > 0) {
    absl::StrAppend(&finding.evidence, " The GPU rows hold ", summary.gpu_annotations,
                    " annotations or measured ranges (such as CUPTI's range profiler's), which "
                    "say nothing of single kernels.");
  }
  const GpuTracingStatus &gpu = summary.gpu_tracing;
  if (gpu.reported && gpu.state != "active") {
    absl::StrAppend(&finding.evidence, " tfprof's GPU tracing was ", gpu.state,
                    gpu.reason.empty() ? "" : absl::StrCat(": ", gpu.reason), ".");
  }
  finding.recommendations = ForFramework(summary, {
      {kTorch, "Record the GPU: torch.profiler.profile(activities=[ProfilerActivity.CPU, "
               "ProfilerActivity.CUDA])."},
      {kAny, "CUPTI takes one subscriber per process: make sure no other profiler (Nsight "
             "Systems, another torch.profiler or TensorFlow profiler, DCGM profiling) held it, "
             "and that the tracer found libcupti (tfprof states its GPU tracing and why in the "
             "trace it writes)."},
      {kAny, "If only part is missing, GPU records were lost in full buffers: record fewer "
             "steps, or give the tracer more buffer (tfprof: cupti_buffers=N, "
             "cupti_buffer_kb=N)."}});
  return finding;
}

Finding OneTimeCosts(const TraceSummary &summary, double fraction) {
  const StepBreakdown &total = summary.step_total;
  Finding finding = StepFinding(summary, "one_time_costs", &StepBreakdown::one_time_launch_ns, 0.10);
  finding.title = ShareOfStepTime("One-time costs: first kernel launches that load GPU code take ",
                                  fraction);
  finding.evidence = absl::StrCat(
      total.one_time_launches, " launch call", total.one_time_launches == 1 ? "" : "s",
      " took ", Ms(total.one_time_launch_ns), " of ", Ms(total.duration_ns),
      total.one_time_launches == 1 ? ", the first launch of its kernel" :
                                     ", each the first launch of its kernel",
      " and at least 50 times the median launch: the driver loads a kernel's module at its first "
      "launch (lazy loading) or compiles its PTX");
  if (!summary.one_time_launches.empty()) {
    const OneTimeLaunch &longest = summary.one_time_launches.front();
    absl::StrAppend(&finding.evidence, ". The longest, ", Ms(longest.duration_ns), " in ",
                    longest.call, longest.kernel.empty() ? "" : absl::StrCat(", launched ",
                                                                              longest.kernel));
  }
  absl::StrAppend(&finding.evidence,
                  ". They are paid once per process, so later steps will not repeat them.");
  finding.recommendations = ForFramework(summary, {
      {kTorch, "Measure the steady state: leave the first steps out of the profile "
               "(torch.profiler.schedule(wait=1, warmup=2, active=3))."},
      {kAny, "Judge speed on the later steps of the step table, not on the first ones."},
      {kAny, "To load GPU code at start-up instead of in the first steps, on CUDA: "
             "CUDA_MODULE_LOADING=EAGER (start-up takes longer, the first steps less)."},
      {kAny, "If kernels are compiled from PTX at first launch (code built for an older GPU), "
             "build for the GPU's architecture or keep the compiled-kernel cache "
             "(CUDA_CACHE_MAXSIZE large enough, CUDA_CACHE_PATH on a disk that persists)."}});
  return finding;
}

Finding DataLoss(const TraceSummary &summary) {
  Finding finding;
  finding.kind = "data_loss";
  finding.title = "Incomplete trace: events were dropped while recording, so figures undercount";
  finding.evidence = absl::StrCat(summary.losses.dropped_events, " host events and ",
                                  summary.losses.gpu_records_dropped,
                                  " GPU records were dropped.");
  finding.recommendations = {
      "Record again with larger buffers: prof_start options buffer_events=N (host events per "
      "thread) and cupti_buffers=N / cupti_buffer_kb=N (GPU records), or profile fewer steps."};
  if (summary.losses.memory_dropped_events > 0) {
    absl::StrAppend(&finding.evidence, " ", summary.losses.memory_dropped_events,
                    " records were lost for memory after recording.");
    finding.recommendations.push_back(
        "Give the spill file room: set TMPDIR to a disk with space, raise max_memory_mb=N, or "
        "keep only recent steps with keep=last:N.");
  }
  return finding;
}

}  // namespace

std::vector<Finding> Diagnose(const TraceSummary &summary, const DiagnosisThresholds &limits) {
  std::vector<Finding> findings;
  if (summary.losses.dropped_events > 0 || summary.losses.gpu_records_dropped > 0 ||
      summary.losses.memory_dropped_events > 0) {
    findings.push_back(DataLoss(summary));
  }
  // Launches with no GPU work recorded: all of them, or most of enough of them.
  const uint64_t missing = summary.launches_without_gpu_work;
  if (missing > 0 && (!summary.has_gpu || (missing >= limits.missing_gpu_min_launches &&
                                           Fraction(static_cast<int64_t>(missing),
                                                    static_cast<int64_t>(summary.launch_calls)) >=
                                               limits.missing_gpu_launches))) {
    findings.push_back(GpuRecordsMissing(summary));
  }
  const StepBreakdown &total = summary.step_total;
  if (total.duration_ns <= 0) return findings;
  const double input = Fraction(total.input_wait_ns, total.duration_ns);
  const double copy = Fraction(total.memcpy_ns, total.duration_ns);
  const double gpu_idle = summary.has_gpu ? Fraction(total.gpu_idle_ns, total.duration_ns) : 0;
  const double sync = Fraction(total.sync_ns, total.duration_ns);
  const uint64_t steps = std::max<uint64_t>(summary.steps.size(), 1);

  std::vector<std::pair<double, Finding>> ranked;  // by the share of step time they explain
  if (input >= limits.input_wait) ranked.emplace_back(input, InputBound(summary, input));
  if (summary.has_gpu && copy >= limits.copy_only) ranked.emplace_back(copy, CopyBound(summary, copy));
  const double communication = Fraction(total.communication_ns, total.duration_ns);
  if (communication >= limits.communication) {
    ranked.emplace_back(communication, CommunicationBound(summary, communication));
  }
  const double one_time = Fraction(total.one_time_launch_ns, total.duration_ns);
  if (one_time >= limits.one_time_costs) ranked.emplace_back(one_time, OneTimeCosts(summary, one_time));
  // Idle time the input pipeline or one-time launches already explain is not launch overhead,
  // and no CUDA graph or fusion would shorten a one-time launch.
  const double idle_unexplained = gpu_idle - input - one_time;
  const int64_t per_step_launch_ns = total.launch_ns - total.one_time_launch_ns;
  if (summary.has_gpu && idle_unexplained >= limits.launch_gpu_idle &&
      summary.kernel_median_ns <= limits.launch_small_kernel_ns &&
      total.kernels / steps >= limits.launch_kernels_per_step &&
      (Fraction(per_step_launch_ns, total.duration_ns) >= limits.launch_gpu_idle / 2 ||
       (summary.idle_gap_count > 0 && summary.idle_gap_median_ns <= limits.launch_small_kernel_ns))) {
    ranked.emplace_back(idle_unexplained, LaunchBound(summary, gpu_idle));
  }
  if (summary.has_gpu && sync >= limits.sync && gpu_idle >= limits.sync) {
    ranked.emplace_back(sync, SyncStall(summary, sync));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  // One-time costs explain only their own share of the idle GPU: the rest may still be low use.
  const bool other_causes = std::any_of(ranked.begin(), ranked.end(), [](const auto &entry) {
    return entry.second.kind != "one_time_costs";
  });
  for (auto &[share, finding] : ranked) findings.push_back(std::move(finding));
  if (!other_causes && summary.has_gpu &&
      gpu_idle - one_time >= limits.low_utilization_gpu_idle) {
    findings.push_back(LowUtilization(summary, gpu_idle));
  }
  return findings;
}

}  // namespace tfprof::cli
