// The diagnosis at the end of `tfprof summary`: which bottleneck the figures show, the evidence,
// and what to change. A finding is made only when the evidence clears its threshold.
#pragma once

#include <vector>

#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

// Thresholds, as fractions of step time (the whole trace when it has no steps).
struct DiagnosisThresholds {
  double input_wait = 0.10;  // input-bound: GPU idle (or host waiting) while input ops run
  double copy_only = 0.15;   // copy-bound: copies with no kernel alongside
  double communication = 0.15;  // communication-bound: collectives with no compute alongside
  double launch_gpu_idle = 0.25;    // launch-bound: GPU idle at least this much, with
  int64_t launch_small_kernel_ns = 20'000;  // median kernel at most this long, and
  uint64_t launch_kernels_per_step = 20;    // at least this many kernels per step
  double sync = 0.10;        // sync stall: host blocked in sync calls, GPU idle at least as much
  double low_utilization_gpu_idle = 0.30;
  double one_time_costs = 0.10;  // one-time first launches (module loading, JIT)
  // GPU records missing: launches with no GPU record, this share of the launches and at least
  // this many (with no GPU record at all, any launch).
  double missing_gpu_launches = 0.5;
  uint64_t missing_gpu_min_launches = 10;
};

// Findings, most time first; losses (dropped events) come first because they qualify the rest.
std::vector<Finding> Diagnose(const TraceSummary &summary,
                              const DiagnosisThresholds &thresholds = {});

}  // namespace tfprof::cli
