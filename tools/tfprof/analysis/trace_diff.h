// `tfprof diff A B`: two traces' summaries (TraceSummary, whatever format each was read from)
// compared figure by figure: step time, where it went, ops, kernels, GPU time by op and
// layer, memory peaks. Every figure is taken from
// the summaries, never re-derived from the traces, so a diff says what `tfprof summary` says of
// each side.
//
// Time figures are per step: a whole-trace total (an op's time, a kernel's) divided by the trace's
// step count, a category's time over the steps divided by it, so that runs of different lengths
// compare fairly. When either side has no steps, both sides are compared over the whole trace
// (divided by 1) and TraceDiff::whole_trace says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

enum class DiffUnit { kTime, kCount, kBytes };

// "ns", "count", "bytes": how --json names a unit.
const char *DiffUnitName(DiffUnit unit);

// One figure in both traces.
struct DiffRow {
  std::string name;  // "mean", an op's or kernel's name, a category ("input")
  DiffUnit unit = DiffUnit::kTime;
  std::optional<double> a;  // unset: the figure is not in A (an op that A never ran)
  std::optional<double> b;
  double change = 0;  // b - a, a missing side counting as 0
  std::optional<double> relative;  // change / a; unset when A is missing or 0
  // "same", "changed", "new" (only in B), "gone" (only in A).
  std::string status;
  // Ops and kernels: their calls over the whole trace (unset on a side without the figure, and
  // for figures without calls).
  std::optional<uint64_t> a_calls;
  std::optional<uint64_t> b_calls;
};

// The rows of one comparison (kComparisons in trace_diff.cc), most changed first unless the
// comparison keeps its own order.
struct DiffSection {
  // "step_time", "categories", "op_self", "op_total", "kernels", "op_gpu", "layer_gpu",
  // "memory_peak"
  std::string key;
  std::string title;  // "Ops by self time"
  bool per_step = false;  // its time rows are per step (or per trace with whole_trace)
  bool has_calls = false;  // its rows carry a_calls/b_calls
  std::vector<DiffRow> rows;
};

struct DiffSide {
  std::string path;
  std::string format;
  uint64_t steps = 0;
  double divisor = 1;  // what whole-trace totals are divided by: steps, or 1 (whole_trace)
};

struct TraceDiff {
  DiffSide a;
  DiffSide b;
  bool whole_trace = false;  // a side has no steps: whole-trace figures are compared
  // One line: the step time's change and the figure that moved most with it, e.g.
  // "Step time +38% (12.1 ms -> 16.7 ms); most of it: op aten::conv2d self +4.20 ms per step".
  std::string headline;
  std::vector<DiffSection> sections;
};

TraceDiff DiffSummaries(const TraceSummary &a, const TraceSummary &b);

// The summary options `tfprof diff` summarises with: `options` keeping every op and kernel (the
// summary's top lists cut at options.top; a diff needs them all to match names).
SummaryOptions DiffSummaryOptions(SummaryOptions options);

}  // namespace tfprof::cli
