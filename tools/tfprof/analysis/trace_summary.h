// What `tfprof summary` (and `tfprof report`) says about one trace: per-step time and where it
// went, top ops and kernels, GPU utilisation, idle gaps, copies, losses, and a diagnosis.
// Times are nanoseconds; begin times are on the trace's clock (add wall_offset_ns for Unix time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/model/trace.h"
#include "tools/tfprof/analysis/counter_series.h"
#include "tools/tfprof/analysis/memory_usage.h"

namespace tfprof::cli {

// One step's wall time split into parts that sum to duration_ns. Each instant of the step counts
// once, for the first of: a kernel other than a collective runs (gpu_compute), a collective
// (NCCL/RCCL kernel, Gloo host collective) runs (communication), a copy or memset runs (memcpy),
// the thread that runs the steps is inside an input op such as IteratorGetNext, children
// included (input_wait), a host thread runs any other span (host_compute), nothing recorded runs
// (idle). Only the step's own recording counts (in a merged trace: its rank's host and GPUs).
struct StepBreakdown {
  int64_t number = 0;
  std::string process;  // the process's name (empty with one process; a merge's names the rank)
  std::optional<int64_t> rank;  // in merged traces, when the input knew it
  int64_t begin_ns = 0;
  int64_t duration_ns = 0;
  int64_t gpu_compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t memcpy_ns = 0;
  int64_t input_wait_ns = 0;
  int64_t host_compute_ns = 0;
  int64_t idle_ns = 0;
  int64_t gpu_idle_ns = 0;  // duration minus the time any kernel, copy or memset ran
  int64_t sync_ns = 0;      // time in host synchronisation calls (cudaStreamSynchronize, ...)
  int64_t launch_ns = 0;    // time in kernel launch calls (cudaLaunchKernel, ...)
  // Of launch_ns: one-time launches (OneTimeLaunch), which no per-launch saving would shorten.
  int64_t one_time_launch_ns = 0;
  uint64_t kernels = 0;     // kernels that started in the step
  uint64_t launches = 0;    // launch calls that started in the step
  uint64_t one_time_launches = 0;  // of those, one-time launches
  std::string longest_input_op;  // the input op with most time in the step, when any
  // GPU time by op (op_gpu_time.h): the GPU work (kernels, copies, memsets) launched in the step
  // (StepIndex's rule), and the host op whose launches took most of it ("" when none).
  int64_t gpu_launched_ns = 0;
  std::string top_gpu_op;
};

// Time of the recordings outside their steps, by where it falls: before the first step (start-up,
// model building, warm-up and initialisation runs), between steps (what the loop does besides
// its steps: logging, checkpoints, a validation pass) and after the last. Measured like a step.
struct OutsideSteps {
  std::string where;      // "before_first_step", "between_steps", "after_last_step"
  uint64_t stretches = 0;  // separate stretches of time (between steps: the gaps)
  StepBreakdown breakdown;  // number -1; duration_ns is the stretches' sum
  // The host ops with the most self time there, most first (at most three).
  std::vector<std::pair<std::string, int64_t>> top_ops;
};

// A kernel launch call far slower than the trace's others and the first launch of its kernel:
// the driver loads the kernel's module then (CUDA's lazy loading) or compiles its PTX. Paid
// once per process.
struct OneTimeLaunch {
  std::string call;    // "cudaLaunchKernel"
  std::string kernel;  // the kernel it launched ("" when the trace has no record of it)
  int64_t begin_ns = 0;
  int64_t duration_ns = 0;
};

struct OpStat {
  std::string name;
  ActivityKind kind = ActivityKind::kHostOp;
  uint64_t count = 0;
  int64_t total_ns = 0;  // time covered by its spans (on each thread, each instant once)
  int64_t self_ns = 0;   // total minus time in child spans on the same thread
  int64_t max_ns = 0;
};

struct KernelStat {
  std::string name;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double share = 0;  // of all kernel time
  bool communication = false;  // a collective's kernel (NCCL, RCCL)
  std::string op = {};  // the host op that launched most of its time ("" when none known)
};

// GPU time by op (op_gpu_time.h): one host op name, or one layer, and the GPU work it launched.
// GPU time is kernels, copies and memsets, each counted once per row even under recursion.
struct OpGpuTime {
  struct Kernel {
    std::string name;
    uint64_t count = 0;
    int64_t total_ns = 0;
  };
  std::string name;
  uint64_t calls = 0;      // its spans
  int64_t host_ns = 0;     // their time (each instant once per thread), as in the top-ops tables
  uint64_t launches = 0;   // launch calls inside it that launched GPU work
  uint64_t kernels = 0;    // kernels launched inside it
  uint64_t copies = 0;     // copies and memsets launched inside it
  int64_t copy_ns = 0;     // of gpu_total_ns: the copies' and memsets' time
  int64_t gpu_self_ns = 0;   // launched while it was the innermost op (layer) on the thread
  int64_t gpu_total_ns = 0;  // launched anywhere inside it
  double share = 0;          // gpu_total_ns / all GPU work time
  std::vector<Kernel> top_kernels;  // the kernels with most time in gpu_total_ns (at most 5)
};

struct StreamUtilization {
  std::string process;
  int32_t device = -1;
  int64_t stream = -1;
  uint64_t kernels = 0;
  uint64_t copies = 0;   // memcpy and memset
  int64_t busy_ns = 0;   // union of its activities
  double utilization = 0;  // busy / the trace's GPU window
};

struct DeviceUtilization {
  std::string process;
  int32_t device = -1;
  int64_t busy_ns = 0;         // union of all its streams' activities
  int64_t kernel_ns = 0;       // union of its kernels
  int64_t communication_ns = 0;  // union of its collectives' kernels
  // Its recording's steps (a merged trace's rank), else its first to last activity.
  int64_t window_ns = 0;
  double utilization = 0;      // busy / window
  // Busy fraction over time: timeline[i] covers [timeline_begin_ns + i*bucket_ns, +bucket_ns).
  int64_t timeline_begin_ns = 0;
  int64_t bucket_ns = 0;
  std::vector<double> timeline;
};

struct IdleGap {
  std::string process;
  int32_t device = -1;
  int64_t begin_ns = 0;
  int64_t duration_ns = 0;
  std::optional<int64_t> step;  // the step it falls in
  std::string host_activity;    // the host op with most overlap with the gap ("" when none)
  uint32_t process_index = 0;   // in Trace::processes
};

struct CopyStat {
  CopyKind kind = CopyKind::kOther;
  std::string label;  // "HtoD", "DtoH", "DtoD", "memset", "other"
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t total_ns = 0;
  double gigabytes_per_second = 0;  // bytes / total time, 1e9 bytes per GB
};

// One conclusion with its evidence and what to do about it.
struct Finding {
  std::string kind;      // "input_bound", "communication_bound", "launch_bound", "copy_bound",
                         // "sync_stall", "low_gpu_utilization", "far_apart", "data_loss"
  std::string title;     // one line: "Input-bound: the GPU waits for input 40% of step time"
  std::string evidence;  // the figures behind it
  std::vector<std::string> recommendations;
  std::vector<int64_t> steps;  // the steps it concerns (empty: the whole trace)
};

struct SummaryOptions {
  size_t top = 10;  // rows in the top-ops/top-kernels/idle-gap tables
  // Host ops that wait for input (glob patterns, case-sensitive). Empty: the defaults, which
  // cover tf.data (IteratorGetNext, ...), PyTorch's DataLoader and common names ("*input*").
  std::vector<std::string> input_ops;
  size_t timeline_buckets = 200;
};

// The default input-op patterns (what --input-ops replaces).
const std::vector<std::string> &DefaultInputOpPatterns();

struct TraceSummary {
  std::string path;
  std::string format;  // InputFormatName
  Producer producer = Producer::kOther;  // whose advice comes first
  // Set when the file was damaged and read with --salvage: what the damage was, and that only
  // what precedes it is summarised.
  std::string damage;
  // Set when the file ends early (a writer killed mid-write) and was recovered to its last whole
  // step: what was kept and dropped (Trace::cut), and CutWarning()'s line.
  std::optional<CutRecovery> cut;
  std::string cut_warning;
  std::optional<int64_t> wall_offset_ns;
  std::optional<int64_t> pid;
  std::optional<int64_t> rank;
  std::string hostname;
  uint64_t events = 0;      // events in the file
  uint64_t activities = 0;  // spans kept
  int64_t begin_ns = 0;     // first activity or step
  int64_t end_ns = 0;       // last
  bool has_gpu = false;     // any kernel, copy or memset
  bool has_steps = false;
  // Time of the recordings outside their steps: before the first (start-up: imports, model
  // building, tracing and compiling) and after the last. 0 without steps.
  int64_t before_first_step_ns = 0;
  int64_t after_last_step_ns = 0;
  std::string step_thread;  // the thread that marks the steps ("" when unknown): input wait's
  std::vector<OutsideSteps> outside_steps;  // those with any time, in the order of `where`
  // The framework the traced program ran on: the trace's producer, else told by its op names
  // (aten:: ops, ProfilerStep#, DataLoader: PyTorch; tf.data iterators, __inference_ functions,
  // Keras' train_function: TensorFlow). kOther when unknown (a C program, a plain Python loop).
  Producer framework = Producer::kOther;
  GpuTracingStatus gpu_tracing;  // as the file states it (tfprof traces)
  // Kernel launch calls, and those whose work is in no GPU record (with no GPU record at all:
  // every one; else those whose correlation id no kernel, copy or memset carries).
  uint64_t launch_calls = 0;
  uint64_t launches_without_gpu_work = 0;
  uint64_t gpu_annotations = 0;  // annotations and measured ranges on GPU rows
  std::vector<OneTimeLaunch> one_time_launches;  // the longest, longest first (at most five)
  // What the summary does not analyse, said rather than dropped silently (the memory events
  // are analysed: `memory` below).
  uint64_t memory_events = 0;    // PyTorch's "[memory]" allocation events
  uint64_t counter_samples = 0;  // counter values (memory in use, user counters)
  std::vector<std::pair<std::string, uint64_t>> unknown_categories;  // read as host ops

  std::vector<StepBreakdown> steps;  // in time order
  StepBreakdown step_total;          // sums over the steps (number -1, begin of the first)
  std::vector<OpStat> top_ops_by_self;
  std::vector<OpStat> top_ops_by_total;
  std::vector<KernelStat> top_kernels;
  // GPU time by op and by layer (op_gpu_time.h), most GPU time first, options.top rows each.
  // Ops: host op names (layers aside), and "(no host op)" for work of unknown launcher. Layers:
  // module spans, or the name scopes of TensorFlow op names. Empty without GPU work.
  std::vector<OpGpuTime> gpu_time_by_op;
  std::vector<OpGpuTime> gpu_time_by_layer;
  int64_t gpu_work_ns = 0;  // all kernels', copies' and memsets' time: what the shares divide
  uint64_t kernel_count = 0;
  int64_t kernel_total_ns = 0;
  int64_t kernel_median_ns = 0;
  uint64_t communication_kernel_count = 0;
  int64_t communication_kernel_ns = 0;  // union of collectives' kernels in the windows
  std::vector<DeviceUtilization> devices;
  std::vector<StreamUtilization> streams;
  std::vector<IdleGap> idle_gaps;  // the longest, longest first
  uint64_t idle_gap_count = 0;     // gaps of at least 1 us between GPU activities in the window
  int64_t idle_gap_median_ns = 0;  // of those gaps
  std::vector<CopyStat> copies;
  // Memory (memory_usage.h): bytes in use per device and source ([memory] events, CUPTI
  // allocations, allocator statistics, memory counters), the peak and each step's, and the
  // top-level ops that hold the most at the peak. Empty when the trace says nothing of memory.
  std::vector<DeviceMemory> memory;
  // The other counters (counter_series.h): each one's range, last value and values over time.
  std::vector<CounterSeries> counters;
  TraceLosses losses;
  std::vector<Finding> findings;  // most important first; empty when nothing stands out
};

TraceSummary Summarize(const Trace &trace, const SummaryOptions &options);

}  // namespace tfprof::cli
