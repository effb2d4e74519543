#include "tools/tfprof/analysis/trace_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "tools/tfprof/analysis/median.h"

namespace tfprof::cli {
namespace {

// One figure of one summary, before it meets the other side's.
struct Figure {
  std::string name;
  DiffUnit unit = DiffUnit::kTime;
  double value = 0;
  std::optional<uint64_t> calls;
};

// How a figure is read from a summary, with the side's divisor (its step count, or 1 when the
// whole traces are compared).
struct Scale {
  double divisor = 1;
  bool whole_trace = false;
};

using FigureReader = std::vector<Figure> (*)(const TraceSummary &summary, const Scale &scale);

// One comparison: a row of kComparisons below. Adding a figure to the diff is adding a line there.
struct Comparison {
  const char *key;
  const char *title;
  bool per_step;
  bool keep_order;   // rows in the reader's order, else the most changed first
  bool has_calls;
  // How the headline names a row of it as what moved most ("op NAME self"); nullptr: never.
  const char *cause_prefix;
  const char *cause_suffix;
  FigureReader read;
};

// The breakdown of the whole recording: the steps' plus the time before, between and after them.
StepBreakdown WholeTraceBreakdown(const TraceSummary &s) {
  StepBreakdown whole = s.step_total;
  for (const OutsideSteps &part : s.outside_steps) {
    whole.duration_ns += part.breakdown.duration_ns;
    whole.gpu_compute_ns += part.breakdown.gpu_compute_ns;
    whole.communication_ns += part.breakdown.communication_ns;
    whole.memcpy_ns += part.breakdown.memcpy_ns;
    whole.input_wait_ns += part.breakdown.input_wait_ns;
    whole.host_compute_ns += part.breakdown.host_compute_ns;
    whole.idle_ns += part.breakdown.idle_ns;
  }
  return whole;
}

double AsDouble(int64_t ns) { return static_cast<double>(ns); }

std::vector<Figure> StepTimes(const TraceSummary &s, const Scale &scale) {
  const Figure steps{"steps", DiffUnit::kCount, static_cast<double>(s.steps.size()), {}};
  if (scale.whole_trace) {
    return {{"trace time", DiffUnit::kTime, AsDouble(WholeTraceBreakdown(s).duration_ns), {}},
            steps};
  }
  std::vector<int64_t> durations;
  for (const StepBreakdown &step : s.steps) durations.push_back(step.duration_ns);
  return {{"mean", DiffUnit::kTime, AsDouble(s.step_total.duration_ns) / scale.divisor, {}},
          {"median", DiffUnit::kTime, AsDouble(MedianNs(durations)), {}},
          steps};
}

// compute = GPU and host compute; the summary's categories otherwise, per step.
std::vector<Figure> Categories(const TraceSummary &s, const Scale &scale) {
  const StepBreakdown b = scale.whole_trace ? WholeTraceBreakdown(s) : s.step_total;
  const auto per_step = [&](int64_t ns) { return AsDouble(ns) / scale.divisor; };
  return {{"compute", DiffUnit::kTime, per_step(b.gpu_compute_ns + b.host_compute_ns), {}},
          {"communication", DiffUnit::kTime, per_step(b.communication_ns), {}},
          {"copy", DiffUnit::kTime, per_step(b.memcpy_ns), {}},
          {"input", DiffUnit::kTime, per_step(b.input_wait_ns), {}},
          {"idle", DiffUnit::kTime, per_step(b.idle_ns), {}}};
}

// Every op (DiffSummaryOptions keeps them all in top_ops_by_total).
template <int64_t OpStat::*kTime>
std::vector<Figure> Ops(const TraceSummary &s, const Scale &scale) {
  std::vector<Figure> figures;
  for (const OpStat &op : s.top_ops_by_total) {
    figures.push_back({op.name, DiffUnit::kTime, AsDouble(op.*kTime) / scale.divisor, op.count});
  }
  return figures;
}

std::vector<Figure> Kernels(const TraceSummary &s, const Scale &scale) {
  std::vector<Figure> figures;
  for (const KernelStat &kernel : s.top_kernels) {
    figures.push_back(
        {kernel.name, DiffUnit::kTime, AsDouble(kernel.total_ns) / scale.divisor, kernel.count});
  }
  return figures;
}

// GPU time (kernels, copies, memsets) launched inside each op or layer, anywhere below it.
template <std::vector<OpGpuTime> TraceSummary::*kRows>
std::vector<Figure> GpuTimeBy(const TraceSummary &s, const Scale &scale) {
  std::vector<Figure> figures;
  for (const OpGpuTime &op : s.*kRows) {
    figures.push_back({op.name, DiffUnit::kTime, AsDouble(op.gpu_total_ns) / scale.divisor,
                       op.calls});
  }
  return figures;
}

// Each memory's peak, named by its label ("GPU 0"), with its process and then its source where
// the label alone repeats.
std::vector<Figure> MemoryPeaks(const TraceSummary &s, const Scale &) {
  const auto count_of = [&](auto name_of, const DeviceMemory &memory) {
    return std::count_if(s.memory.begin(), s.memory.end(),
                         [&](const DeviceMemory &other) { return name_of(other) == name_of(memory); });
  };
  const auto labelled = [](const DeviceMemory &m) { return m.label; };
  const auto with_process = [](const DeviceMemory &m) {
    return m.process_name.empty() ? m.label : m.process_name + " " + m.label;
  };
  std::vector<Figure> figures;
  for (const DeviceMemory &memory : s.memory) {
    std::string name = memory.label;
    if (count_of(labelled, memory) > 1) name = with_process(memory);
    if (count_of(with_process, memory) > 1) name += " (" + memory.source + ")";
    figures.push_back({name, DiffUnit::kBytes, static_cast<double>(memory.peak_bytes), {}});
  }
  return figures;
}

constexpr Comparison kComparisons[] = {
    // key          title                          per_step order  calls  headline's name
    {"step_time", "Step time", false, true, false, nullptr, nullptr, StepTimes},
    {"categories", "Where the step time went", true, true, false, nullptr, nullptr, Categories},
    {"op_self", "Ops by self time", true, false, true, "op ", " self", Ops<&OpStat::self_ns>},
    {"op_total", "Ops by total time", true, false, true, nullptr, nullptr,
     Ops<&OpStat::total_ns>},
    {"kernels", "Kernels by time", true, false, true, "kernel ", "", Kernels},
    {"op_gpu", "GPU time by op", true, false, true, "op ", " GPU",
     GpuTimeBy<&TraceSummary::gpu_time_by_op>},
    {"layer_gpu", "GPU time by layer", true, false, true, nullptr, nullptr,
     GpuTimeBy<&TraceSummary::gpu_time_by_layer>},
    {"memory_peak", "Memory peak", false, false, false, nullptr, nullptr, MemoryPeaks},
};

DiffRow MakeRow(const Figure *a, const Figure *b) {
  DiffRow row;
  row.name = a ? a->name : b->name;
  row.unit = a ? a->unit : b->unit;
  if (a) {
    row.a = a->value;
    row.a_calls = a->calls;
  }
  if (b) {
    row.b = b->value;
    row.b_calls = b->calls;
  }
  row.change = row.b.value_or(0) - row.a.value_or(0);
  if (row.a && *row.a != 0) row.relative = row.change / *row.a;
  row.status = !a ? "new" : !b ? "gone" : row.change == 0 ? "same" : "changed";
  return row;
}

// The rows of one comparison: names in both, then A's alone (gone), then B's alone (new); by
// most changed first unless the comparison keeps its order.
std::vector<DiffRow> CompareFigures(const std::vector<Figure> &a, const std::vector<Figure> &b,
                                    bool keep_order) {
  std::map<std::string, const Figure *> in_b;
  for (const Figure &figure : b) in_b.emplace(figure.name, &figure);
  std::vector<DiffRow> rows;
  for (const Figure &figure : a) {
    const auto match = in_b.find(figure.name);
    rows.push_back(MakeRow(&figure, match == in_b.end() ? nullptr : match->second));
  }
  std::map<std::string, const Figure *> in_a;
  for (const Figure &figure : a) in_a.emplace(figure.name, &figure);
  for (const Figure &figure : b) {
    if (!in_a.contains(figure.name)) rows.push_back(MakeRow(nullptr, &figure));
  }
  if (!keep_order) {
    std::stable_sort(rows.begin(), rows.end(), [](const DiffRow &x, const DiffRow &y) {
      const double moved_x = std::abs(x.change);
      const double moved_y = std::abs(y.change);
      if (moved_x != moved_y) return moved_x > moved_y;
      const double size_x = std::max(x.a.value_or(0), x.b.value_or(0));
      const double size_y = std::max(y.a.value_or(0), y.b.value_or(0));
      if (size_x != size_y) return size_x > size_y;
      return x.name < y.name;
    });
  }
  return rows;
}

// "12.1 ms", "850 ns", "1.23 s": three significant digits.
std::string ReadableDuration(double ns) {
  const double size = std::abs(ns);
  const char *unit = "ns";
  double value = ns;
  if (size >= 1e9) {
    value = ns / 1e9, unit = "s";
  } else if (size >= 1e6) {
    value = ns / 1e6, unit = "ms";
  } else if (size >= 1e3) {
    value = ns / 1e3, unit = "us";
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.3g %s", value, unit);
  return text;
}

std::string SignedDuration(double ns) { return (ns > 0 ? "+" : "") + ReadableDuration(ns); }

// "+38%", "-4.5%": whole percents from 10% up.
std::string SignedPercent(double fraction) {
  char text[48];
  const double percent = fraction * 100;
  std::snprintf(text, sizeof text, std::abs(percent) >= 10 ? "%+.0f%%" : "%+.1f%%", percent);
  return text;
}

std::string Headline(const TraceDiff &diff) {
  const DiffRow &time = diff.sections.front().rows.front();  // mean step time, or trace time
  std::string line = diff.whole_trace ? "Trace time" : "Step time";
  const double a = time.a.value_or(0);
  const double b = time.b.value_or(0);
  if (time.change == 0) {
    line += " unchanged (" + ReadableDuration(a) + ")";
  } else {
    line += " " + (time.relative ? SignedPercent(*time.relative) : SignedDuration(time.change)) +
            " (" + ReadableDuration(a) + " -> " + ReadableDuration(b) + ")";
  }
  // What moved most: the largest change among the figures a headline may name, in the step
  // time's direction when it moved; the first comparison's on a tie.
  const DiffRow *cause = nullptr;
  const Comparison *cause_comparison = nullptr;
  bool any_change = false;
  for (size_t index = 0; index < diff.sections.size(); ++index) {
    const Comparison &comparison = kComparisons[index];
    for (const DiffRow &row : diff.sections[index].rows) {
      any_change = any_change || row.change != 0;
      if (comparison.cause_prefix == nullptr || row.change == 0) continue;
      if (time.change * row.change < 0) continue;
      if (cause == nullptr || std::abs(row.change) > std::abs(cause->change)) {
        cause = &row;
        cause_comparison = &comparison;
      }
    }
  }
  if (cause == nullptr) {
    return line + (any_change ? "; no op or kernel time moved with it" : "; no figure changed");
  }
  const bool most = time.change != 0 && 2 * std::abs(cause->change) >= std::abs(time.change);
  return line + (most ? "; most of it: " : "; the biggest change: ") +
         cause_comparison->cause_prefix + cause->name + cause_comparison->cause_suffix + " " +
         SignedDuration(cause->change) + (diff.whole_trace ? " over the trace" : " per step");
}

DiffSide Side(const TraceSummary &s, bool whole_trace) {
  DiffSide side;
  side.path = s.path;
  side.format = s.format;
  side.steps = s.steps.size();
  side.divisor = whole_trace ? 1 : static_cast<double>(s.steps.size());
  return side;
}

}  // namespace

const char *DiffUnitName(DiffUnit unit) {
  switch (unit) {
    case DiffUnit::kTime: return "ns";
    case DiffUnit::kCount: return "count";
    case DiffUnit::kBytes: return "bytes";
  }
  return "ns";
}

SummaryOptions DiffSummaryOptions(SummaryOptions options) {
  options.top = std::numeric_limits<size_t>::max();
  return options;
}

TraceDiff DiffSummaries(const TraceSummary &a, const TraceSummary &b) {
  TraceDiff diff;
  diff.whole_trace = a.steps.empty() || b.steps.empty();
  diff.a = Side(a, diff.whole_trace);
  diff.b = Side(b, diff.whole_trace);
  const Scale scale_a{diff.a.divisor, diff.whole_trace};
  const Scale scale_b{diff.b.divisor, diff.whole_trace};
  for (const Comparison &comparison : kComparisons) {
    DiffSection section;
    section.key = comparison.key;
    section.title = comparison.title;
    section.per_step = comparison.per_step;
    section.has_calls = comparison.has_calls;
    section.rows = CompareFigures(comparison.read(a, scale_a), comparison.read(b, scale_b),
                                  comparison.keep_order);
    diff.sections.push_back(std::move(section));
  }
  diff.headline = Headline(diff);
  return diff;
}

}  // namespace tfprof::cli
