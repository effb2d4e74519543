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

// The advice in order for the trace's framework: its own first, then what holds for any, then
// the other frameworks'. For a trace of no known framework the order is as written.
std::vector<std::string> Ordered(Producer framework, std::vector<Advice> advice) {
  const auto rank = [&](const Advice &a) {
    if (framework != Producer::kPytorch && framework != Producer::kTensorFlow) return 0;
    if (a.framework == framework) return 0;
    return a.framework == Producer::kOther ? 1 : 2;
  };
  std::stable_sort(advice.begin(), advice.end(),
                   [&](const Advice &a, const Advice &b) { return rank(a) < rank(b); });
  std::vector<std::string> texts;
  for (Advice &a : advice) texts.push_back(std::move(a.text));
  return texts;
}

std::vector<std::string> Ordered(const TraceSummary &summary, std::vector<Advice> advice) {
  return Ordered(summary.producer, std::move(advice));
}

// The framework whose input pipeline the steps waited in: the trace's, else the one the longest
// input op belongs to (a tfprof trace of a Keras or PyTorch program under tfprof run).
Producer InputFramework(const TraceSummary &summary) {
  if (summary.producer == Producer::kPytorch || summary.producer == Producer::kTensorFlow) {
    return summary.producer;
  }
  const std::string &op = summary.step_total.longest_input_op;
  if (absl::StrContains(op, "DataLoader")) return Producer::kPytorch;
  if (absl::StartsWith(op, "Iterator") || absl::StrContains(op, "IteratorGetNext")) {
    return Producer::kTensorFlow;
  }
  return summary.producer;
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
  finding.recommendations = Ordered(InputFramework(summary), {
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
  finding.recommendations = Ordered(summary, {
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
  if (total.launches > 0) {
    absl::StrAppend(&finding.evidence, "; the host spent ",
                    Percent(Fraction(total.launch_ns, total.duration_ns)),
                    " of step time in launch calls (", total.launches / static_cast<uint64_t>(steps),
                    " per step)");
  }
  finding.evidence += ".";
  finding.recommendations = Ordered(summary, {
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
  finding.recommendations = Ordered(summary, {
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
  finding.recommendations = Ordered(summary, {
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
  finding.recommendations = Ordered(summary, {
      {kAny, "Look at the idle-gap table: the host op running during each gap is what the GPU "
             "waits for; annotate the host code around it (tfprof.span, NVTX ranges) to see more."},
      {kAny, "Check the batch size and whether the model is too small to keep the GPU busy."}});
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
  // Idle time the input pipeline already explains is not launch overhead.
  const double idle_unexplained = gpu_idle - input;
  if (summary.has_gpu && idle_unexplained >= limits.launch_gpu_idle &&
      summary.kernel_median_ns <= limits.launch_small_kernel_ns &&
      total.kernels / steps >= limits.launch_kernels_per_step &&
      (Fraction(total.launch_ns, total.duration_ns) >= limits.launch_gpu_idle / 2 ||
       (summary.idle_gap_count > 0 && summary.idle_gap_median_ns <= limits.launch_small_kernel_ns))) {
    ranked.emplace_back(idle_unexplained, LaunchBound(summary, gpu_idle));
  }
  if (summary.has_gpu && sync >= limits.sync && gpu_idle >= limits.sync) {
    ranked.emplace_back(sync, SyncStall(summary, sync));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (auto &[share, finding] : ranked) findings.push_back(std::move(finding));
  if (ranked.empty() && summary.has_gpu && gpu_idle >= limits.low_utilization_gpu_idle) {
    findings.push_back(LowUtilization(summary, gpu_idle));
  }
  return findings;
}

}  // namespace tfprof::cli
