// Traces with known answers for the summary's and the diagnosis' tests: one host thread (track
// 0) and one GPU stream (track 1, device 0, stream 7) unless more are added.
#pragma once

#include <string>
#include <utility>

#include "runtime/model/launch_links.h"
#include "runtime/model/trace.h"
#include "support/model_builders.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

class SummaryTestTrace {
 public:
  SummaryTestTrace() {
    trace_.processes.push_back(tfprof_test::ProcessOf(4242, "python"));
    trace_.tracks.push_back(
        tfprof_test::TrackOf(0, 1, "main", TrackKind::kHostThread, -1, -1));
    trace_.tracks.push_back(
        tfprof_test::TrackOf(0, 7, "stream 7", TrackKind::kGpuStream, 0, 7));
  }
  SummaryTestTrace &Host(const std::string &name, int64_t begin, int64_t end,
                         ActivityKind kind = ActivityKind::kHostOp) {
    return Add(name, begin, end, kind, 0);
  }
  SummaryTestTrace &Kernel(const std::string &name, int64_t begin, int64_t end) {
    return Add(name, begin, end, ActivityKind::kKernel, 1);
  }
  // A launch call and the kernel it launched, linked by CUPTI's correlation id.
  SummaryTestTrace &Launch(const std::string &call, int64_t begin, int64_t end,
                           uint32_t correlation) {
    Add(call, begin, end, ActivityKind::kRuntimeApi, 0);
    return Correlate(correlation);
  }
  SummaryTestTrace &LaunchedKernel(const std::string &name, int64_t begin, int64_t end,
                                   uint32_t correlation) {
    Add(name, begin, end, ActivityKind::kKernel, 1);
    return Correlate(correlation);
  }
  SummaryTestTrace &Copy(int64_t begin, int64_t end, uint64_t bytes, CopyKind kind) {
    Add(kind == CopyKind::kHostToDevice ? "Memcpy HtoD" : "Memcpy DtoH", begin, end,
        ActivityKind::kMemcpy, 1);
    trace_.activities.back().bytes = bytes;
    trace_.activities.back().copy = kind;
    return *this;
  }
  SummaryTestTrace &StepAt(int64_t number, int64_t begin, int64_t end) {
    trace_.steps.push_back(tfprof_test::StepOf(number, begin, end, 0));
    return *this;
  }
  Trace &trace() { return trace_; }
  // The trace with its launches linked to their work, as every reader's builder leaves it.
  Trace &linked() {
    LinkLaunches(trace_);
    return trace_;
  }

 private:
  SummaryTestTrace &Add(const std::string &name, int64_t begin, int64_t end, ActivityKind kind,
                        uint32_t track) {
    Activity activity;
    activity.begin_ns = begin;
    activity.end_ns = end;
    activity.name = trace_.names.Intern(name);
    activity.track = track;
    activity.kind = kind;
    trace_.activities.push_back(activity);
    ++trace_.events_in_file;
    return *this;
  }
  SummaryTestTrace &Correlate(uint32_t correlation) {
    GpuDetail detail;
    detail.correlation = correlation;
    detail.fields = kGpuHasCorrelation;
    trace_.activities.back().detail = trace_.gpu_details.Add(trace_.activities.back().kind, detail);
    return *this;
  }
  Trace trace_;
};

inline const Finding *FindingOf(const TraceSummary &summary, const std::string &kind) {
  for (const Finding &finding : summary.findings) {
    if (finding.kind == kind) return &finding;
  }
  return nullptr;
}


}  // namespace tfprof::cli
