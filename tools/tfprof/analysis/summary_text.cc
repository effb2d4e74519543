#include "tools/tfprof/analysis/summary_text.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/formats/perfetto/perfetto_trace_stats.h"
#include "tools/tfprof/analysis/median.h"
#include "tools/tfprof/analysis/outside_steps.h"

namespace tfprof::cli {
namespace {

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f", static_cast<double>(ns) / 1e6); }
std::string Us(int64_t ns) { return absl::StrFormat("%.1f", static_cast<double>(ns) / 1e3); }

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string Bytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= 1'000'000'000) return absl::StrFormat("%.2f GB", b / 1e9);
  if (bytes >= 1'000'000) return absl::StrFormat("%.2f MB", b / 1e6);
  if (bytes >= 1'000) return absl::StrFormat("%.2f kB", b / 1e3);
  return absl::StrFormat("%d B", bytes);
}

std::string Cut(const std::string &name, size_t width) {
  if (name.size() <= width) return name;
  return name.substr(0, width - 3) + "...";
}

// A table: a header row and rows of cells; the first column is left-aligned, the rest right.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void AppendTo(std::string *out) const {
    std::vector<size_t> widths(rows_.front().size(), 0);
    for (const auto &row : rows_) {
      for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
        widths[i] = std::max(widths[i], row[i].size());
      }
    }
    for (const auto &row : rows_) {
      std::string line = " ";
      for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
        const std::string pad(widths[i] - row[i].size(), ' ');
        line += i == 0 ? " " + row[i] + pad : "  " + pad + row[i];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      absl::StrAppend(out, line, "\n");
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

void StepRow(Table &table, const std::string &label, const StepBreakdown &step, bool has_gpu) {
  const int64_t d = step.duration_ns;
  table.Add({label, Ms(d), Percent(step.gpu_compute_ns, d), Percent(step.communication_ns, d),
             Percent(step.memcpy_ns, d),
             Percent(step.input_wait_ns, d), Percent(step.host_compute_ns, d),
             Percent(step.idle_ns, d), has_gpu ? Percent(step.gpu_idle_ns, d) : "-",
             absl::StrCat(step.kernels)});
}

// The rows of time outside the steps (OutsideSteps) worth a row.
std::vector<const OutsideSteps *> OutsideRows(const TraceSummary &s) {
  std::vector<const OutsideSteps *> rows;
  for (const OutsideSteps &part : s.outside_steps) {
    if (part.breakdown.duration_ns >= kOutsideRowMinNs) rows.push_back(&part);
  }
  return rows;
}

// What the step figures leave out: the time before the first step, between steps and after the
// last, with what ran there, and a first step much longer than the others (first calls trace,
// compile and warm up).
void OutsideStepsLines(const TraceSummary &s, int64_t median_ns, std::string *out) {
  std::vector<std::string> outside;
  for (const OutsideSteps *part : OutsideRows(s)) {
    std::string text = Ms(part->breakdown.duration_ns);
    if (part->where == "before_first_step") {
      text += " ms before the first (start-up: imports, model building, tracing, compiling";
    } else if (part->where == "between_steps") {
      absl::StrAppend(&text, " ms between steps (", part->stretches,
                      part->stretches == 1 ? " gap" : " gaps");
    } else {
      text += " ms after the last (";
    }
    std::vector<std::string> ops;
    for (const auto &[name, ns] : part->top_ops) {
      ops.push_back(absl::StrCat(Cut(name, 48), " ", Ms(ns), " ms"));
    }
    if (!ops.empty()) {
      absl::StrAppend(&text, part->where == "after_last_step" ? "mostly " : "; mostly ",
                      absl::StrJoin(ops, ", "));
    }
    if (text.back() == '(') {
      text.resize(text.size() - 2);
    } else {
      text += ")";
    }
    outside.push_back(std::move(text));
  }
  if (!outside.empty()) {
    absl::StrAppend(out, "  Outside the steps: ", absl::StrJoin(outside, ", "),
                    "; in their own rows, not in the figures below.\n");
  }
  constexpr int64_t kFirstStepFactor = 3;
  if (s.steps.size() >= 3 && median_ns > 0 &&
      s.steps.front().duration_ns > kFirstStepFactor * median_ns) {
    absl::StrAppend(out, "  The first step (", s.steps.front().number, ") took ",
                    absl::StrFormat("%.1f", static_cast<double>(s.steps.front().duration_ns) /
                                                static_cast<double>(median_ns)),
                    "x the median: first calls (tracing, compiling, warm-up) are in it.\n");
  }
}

void Steps(const TraceSummary &s, const TextOptions &options, std::string *out) {
  const StepBreakdown &total = s.step_total;
  if (s.has_steps) {
    std::vector<int64_t> durations;
    for (const StepBreakdown &step : s.steps) durations.push_back(step.duration_ns);
    const auto [shortest, longest] = std::minmax_element(durations.begin(), durations.end());
    const int64_t min_ns = *shortest;
    const int64_t max_ns = *longest;
    absl::StrAppend(out, "\nSteps: ", s.steps.size(), ", mean ",
                    Ms(total.duration_ns / static_cast<int64_t>(s.steps.size())), " ms (min ",
                    Ms(min_ns), ", median ", Ms(MedianNs(durations)), ", max ", Ms(max_ns),
                    ")\n");
    OutsideStepsLines(s, MedianNs(durations), out);
  } else {
    absl::StrAppend(out, "\nNo steps in this trace: the breakdown covers the whole trace.\n");
  }
  Table table({"step", "time ms", "gpu compute", "communication", "memcpy", "input wait",
               "host compute", "idle", "GPU idle", "kernels"});
  const size_t rows = std::min(options.step_rows, s.steps.size());
  for (size_t i = 0; i < rows; ++i) {
    const StepBreakdown &step = s.steps[i];
    StepRow(table, step.process.empty() ? absl::StrCat(step.number)
                                        : absl::StrCat(step.number, " (", step.process, ")"),
            step, s.has_gpu);
  }
  StepRow(table, s.has_steps ? "all steps" : "trace", total, s.has_gpu);
  for (const OutsideSteps *part : OutsideRows(s)) {
    StepRow(table, OutsideRowLabel(part->where), part->breakdown, s.has_gpu);
  }
  table.AppendTo(out);
  if (s.steps.size() > rows) {
    absl::StrAppend(out, "  (", s.steps.size() - rows,
                    " more steps are in the totals; --steps N lists more, --json lists all)\n");
  }
  absl::StrAppend(out,
                  "  Each instant counts once, for the first of: a compute kernel runs, a "
                  "collective (NCCL, DeepEP, Gloo, ...) runs, a copy runs, the step thread waits "
                  "in an input op, a host op runs, nothing runs.\n");
  if (!s.step_thread.empty()) {
    absl::StrAppend(out, "  Input wait is judged on the thread that marks the steps: ",
                    s.step_thread, ".\n");
  }
}

// Whether the op and kernel tables (always over the whole trace) cover more than the steps do:
// then they say so, beside the step and GPU tables measured over the steps.
bool WholeTrace(const TraceSummary &s) { return s.has_steps && !s.outside_steps.empty(); }

void Ops(const char *title, const std::vector<OpStat> &ops, const TextOptions &options,
         std::string *out) {
  if (ops.empty()) return;
  absl::StrAppend(out, "\n", title, "\n");
  Table table({"op", "calls", "self ms", "total ms", "max ms"});
  for (const OpStat &op : ops) {
    table.Add({Cut(op.name, options.name_width), absl::StrCat(op.count), Ms(op.self_ns),
               Ms(op.total_ns), Ms(op.max_ns)});
  }
  table.AppendTo(out);
}

void Kernels(const TraceSummary &s, const TextOptions &options, std::string *out) {
  if (s.top_kernels.empty()) return;
  absl::StrAppend(out, "\nTop kernels (", s.kernel_count, " kernels",
                  WholeTrace(s) ? " in the whole trace" : "", ", ", Ms(s.kernel_total_ns),
                  " ms, median ", Us(s.kernel_median_ns), " us)\n");
  Table table({"kernel", "calls", "total ms", "share", "min us", "max us"});
  for (const KernelStat &k : s.top_kernels) {
    // Collectives are marked: their time is communication in the step breakdown.
    table.Add({Cut(k.communication ? "[comm] " + k.name : k.name, options.name_width),
               absl::StrCat(k.count), Ms(k.total_ns),
               absl::StrFormat("%.1f%%", 100 * k.share), Us(k.min_ns), Us(k.max_ns)});
  }
  table.AppendTo(out);
}

// GPU time by op or by layer: what each launched, its own launches apart (self) and all of it.
void GpuTimeTable(const char *title, const std::vector<OpGpuTime> &rows, const TraceSummary &s,
                  const TextOptions &options, std::string *out) {
  if (rows.empty()) return;
  absl::StrAppend(out, "\n", title, WholeTrace(s) ? " (whole trace, " : " (", Ms(s.gpu_work_ns),
                  " ms of kernels, copies and memsets)\n");
  Table table({"name", "calls", "host ms", "launches", "kernels", "copies", "GPU self ms",
               "GPU total ms", "share", "top kernel"});
  for (const OpGpuTime &row : rows) {
    table.Add({Cut(row.name, options.name_width), absl::StrCat(row.calls), Ms(row.host_ns),
               absl::StrCat(row.launches), absl::StrCat(row.kernels), absl::StrCat(row.copies),
               Ms(row.gpu_self_ns), Ms(row.gpu_total_ns),
               absl::StrFormat("%.1f%%", 100 * row.share),
               row.top_kernels.empty() ? "-" : Cut(row.top_kernels.front().name, 40)});
  }
  table.AppendTo(out);
}

void GpuTimeByOp(const TraceSummary &s, const TextOptions &options, std::string *out) {
  if (!s.has_gpu) return;
  GpuTimeTable("GPU time by op", s.gpu_time_by_op, s, options, out);
  if (s.gpu_time_by_op.empty()) return;
  absl::StrAppend(out,
                  "  GPU work is tied to its launch call by correlation id; self: launched while "
                  "the op was the innermost open on the thread, total: anywhere inside it.\n");
  const size_t rows = std::min(options.step_rows, s.steps.size());
  for (size_t index = 0; index < rows; ++index) {
    const StepBreakdown &step = s.steps[index];
    absl::StrAppend(out, "  step ", step.number, ": ", Ms(step.gpu_launched_ns), " ms launched",
                    step.top_gpu_op.empty() ? "" : ", most by " + step.top_gpu_op, "\n");
  }
  GpuTimeTable("GPU time by layer", s.gpu_time_by_layer, s, options, out);
}

std::string DeviceLabel(const std::string &process, int32_t device) {
  const std::string gpu = absl::StrCat("GPU ", device);
  if (process.empty()) return gpu;
  // A GPU's own process ("GPU 0", "rank 3 · GPU 0") names it already.
  const bool named = process.size() >= gpu.size() &&
                     process.compare(process.size() - gpu.size(), gpu.size(), gpu) == 0;
  return named ? process : absl::StrCat(process, " ", gpu);
}

void Gpu(const TraceSummary &s, const TextOptions &options, std::string *out) {
  if (!s.has_gpu) {
    absl::StrAppend(out, "\nGPU: no kernels, copies or memsets in this trace.\n");
    return;
  }
  absl::StrAppend(out, "\nGPU utilisation", s.has_steps ? " over the steps" : "", "\n");
  Table devices({"device", "busy ms", "kernels ms", "collectives ms", "window ms", "utilisation"});
  for (const DeviceUtilization &d : s.devices) {
    devices.Add({DeviceLabel(d.process, d.device), Ms(d.busy_ns), Ms(d.kernel_ns),
                 Ms(d.communication_ns), Ms(d.window_ns),
                 absl::StrFormat("%.1f%%", 100 * d.utilization)});
  }
  devices.AppendTo(out);
  Table streams({"stream", "kernels", "copies", "busy ms", "utilisation"});
  for (const StreamUtilization &st : s.streams) {
    streams.Add({absl::StrCat(DeviceLabel(st.process, st.device), " stream ", st.stream),
                 absl::StrCat(st.kernels), absl::StrCat(st.copies), Ms(st.busy_ns),
                 absl::StrFormat("%.1f%%", 100 * st.utilization)});
  }
  streams.AppendTo(out);

  absl::StrAppend(out, "\nIdle gaps: ", s.idle_gap_count, " of 1 us or more",
                  s.idle_gap_count > 0 ? absl::StrCat(", median ", Us(s.idle_gap_median_ns), " us")
                                       : "",
                  s.idle_gaps.empty() ? "\n" : "; the longest:\n");
  if (!s.idle_gaps.empty()) {
    Table gaps({"device", "at ms", "length ms", "step", "host op during the gap"});
    for (const IdleGap &g : s.idle_gaps) {
      gaps.Add({DeviceLabel(g.process, g.device), Ms(g.begin_ns - s.begin_ns), Ms(g.duration_ns),
                g.step ? absl::StrCat(*g.step) : "-",
                g.host_activity.empty() ? "-" : Cut(g.host_activity, options.name_width)});
    }
    gaps.AppendTo(out);
  }

  if (!s.copies.empty()) {
    absl::StrAppend(out, "\nCopies\n");
    Table copies({"kind", "count", "bytes", "time ms", "GB/s"});
    for (const CopyStat &c : s.copies) {
      copies.Add({c.label, absl::StrCat(c.count), Bytes(c.bytes), Ms(c.total_ns),
                  c.bytes > 0 ? absl::StrFormat("%.2f", c.gigabytes_per_second) : "-"});
    }
    copies.AppendTo(out);
  }
}

std::string SignedBytes(int64_t bytes) {
  return bytes < 0 ? "-" + Bytes(static_cast<uint64_t>(-bytes))
                   : Bytes(static_cast<uint64_t>(bytes));
}

// Bytes in use per device and source: the peak, each step's peak and the top-level ops that
// hold the most at the peak (memory_usage.h).
void Memory(const TraceSummary &s, const TextOptions &options, std::string *out) {
  if (s.memory.empty()) return;
  bool several_processes = false;
  for (const DeviceMemory &d : s.memory) {
    several_processes = several_processes || d.process != s.memory.front().process;
  }
  const auto label = [&](const DeviceMemory &d) {
    return several_processes && !d.process_name.empty() ? absl::StrCat(d.process_name, " ", d.label)
                                                        : d.label;
  };
  absl::StrAppend(out, "\nMemory (bytes in use)\n");
  Table devices({"device", "source", "events", "peak", "at ms", "step"});
  bool relative = false;
  for (const DeviceMemory &d : s.memory) {
    devices.Add({label(d), d.relative ? d.source + " *" : d.source, absl::StrCat(d.events),
                 SignedBytes(d.peak_bytes), Ms(d.peak_ns - s.begin_ns),
                 d.peak_step ? absl::StrCat(*d.peak_step) : "-"});
    relative = relative || d.relative;
  }
  devices.AppendTo(out);
  if (relative) {
    absl::StrAppend(out, "  * the file gives no totals: bytes allocated since its first memory "
                         "event, not all in use.\n");
  }
  // Each step's peak, one column per device, when the devices share their steps.
  const std::vector<MemoryStepPeak> &first_steps = s.memory.front().steps;
  bool same_steps = !first_steps.empty();
  for (const DeviceMemory &d : s.memory) {
    same_steps = same_steps && d.steps.size() == first_steps.size();
  }
  if (same_steps) {
    std::vector<std::string> header = {"step"};
    for (const DeviceMemory &d : s.memory) header.push_back(label(d) + " peak");
    Table steps(std::move(header));
    constexpr size_t kStepRows = 20;
    for (size_t index = 0; index < first_steps.size() && index < kStepRows; ++index) {
      std::vector<std::string> row = {absl::StrCat(first_steps[index].number)};
      for (const DeviceMemory &d : s.memory) row.push_back(SignedBytes(d.steps[index].peak_bytes));
      steps.Add(std::move(row));
    }
    steps.AppendTo(out);
    if (first_steps.size() > kStepRows) {
      absl::StrAppend(out, "  ... ", first_steps.size() - kStepRows,
                      " more steps (--json lists all).\n");
    }
  }
  for (const DeviceMemory &d : s.memory) {
    if (d.top_ops_at_peak.empty()) continue;
    absl::StrAppend(out, label(d), ": top-level ops ",
                    d.top_ops_basis == PeakOpsBasis::kLiveBlocks
                        ? "holding the most at the peak (blocks still allocated)"
                        : "allocating the most in the peak's step",
                    "\n");
    Table ops({"op", "bytes"});
    for (const MemoryOpBytes &op : d.top_ops_at_peak) {
      ops.Add({Cut(op.name, options.name_width), Bytes(static_cast<uint64_t>(op.bytes))});
    }
    ops.AppendTo(out);
  }
}

// The counters that are not about memory: each one's samples, range and last value (the report
// draws them over time).
void Counters(const TraceSummary &s, const TextOptions &options, std::string *out) {
  if (s.counters.empty()) return;
  bool several_processes = false;
  for (const CounterSeries &c : s.counters) {
    several_processes = several_processes || c.process_index != s.counters.front().process_index;
  }
  absl::StrAppend(out, "\nCounters (", s.counters.size(),
                  "; `tfprof report` draws them over time)\n");
  Table table({"counter", "samples", "min", "max", "last"});
  const auto number = [](double value) { return absl::StrFormat("%.6g", value); };
  constexpr size_t kCounterRows = 20;
  for (size_t index = 0; index < s.counters.size() && index < kCounterRows; ++index) {
    const CounterSeries &c = s.counters[index];
    std::string name = c.series == "value" ? c.name : absl::StrCat(c.name, " / ", c.series);
    if (several_processes && !c.process.empty()) name = absl::StrCat(c.process, ": ", name);
    table.Add({Cut(name, options.name_width), absl::StrCat(c.samples), number(c.min),
               number(c.max), number(c.last)});
  }
  table.AppendTo(out);
  if (s.counters.size() > kCounterRows) {
    absl::StrAppend(out, "  ... ", s.counters.size() - kCounterRows,
                    " more counters (--json lists all).\n");
  }
}

void Losses(const TraceSummary &s, std::string *out) {
  const TraceLosses &l = s.losses;
  // A merge whose inputs do not all record losses: the counts are those of the inputs that do.
  const std::string partly =
      l.unreported_inputs == 0
          ? std::string(".")
          : absl::StrCat(" in the inputs that record losses; ", l.unreported_inputs,
                         l.unreported_inputs == 1 ? " merged input does" : " merged inputs do",
                         " not record them.");
  if (!l.reported && l.perfetto.reported) {  // a Perfetto trace: what its tracing service said
    absl::StrAppend(out, "\nDropped events (Perfetto's TraceStats): ",
                    DescribePerfettoLosses(l.perfetto), ".\n");
  } else if (!l.reported) {
    absl::StrAppend(out, "\nDropped events: this format does not record losses.\n");
  } else if (l.dropped_events == 0 && l.gpu_records_dropped == 0 && l.memory_dropped_events == 0) {
    absl::StrAppend(out, "\nDropped events: none", partly, "\n");
  } else {
    absl::StrAppend(out, "\nDropped events: ", l.dropped_events, " host events, ",
                    l.gpu_records_dropped, " GPU records", partly, "\n");
  }
  if (l.unmatched_span_ends > 0 || l.unmatched_step_ends > 0) {
    absl::StrAppend(out, "  Unmatched ends: ", l.unmatched_span_ends, " span, ",
                    l.unmatched_step_ends, " step.\n");
  }
  if (l.memory_dropped_events > 0) {
    absl::StrAppend(out, "  Lost for memory: ", l.memory_dropped_events,
                    " records (no memory, or the spill file failed: see max_memory_mb).\n");
  }
  if (l.discarded_events > 0) {
    absl::StrAppend(out, "  Outside the kept window: ", l.discarded_events,
                    " records (keep=last:...; this trace is the recent window only).\n");
  }
}

// What the summary read but does not analyse, so that nothing is dropped without a word.
void NotAnalysed(const TraceSummary &s, std::string *out) {
  if (!s.unknown_categories.empty()) {
    absl::StrAppend(out, "Unknown categories, read as host ops:");
    for (const auto &[category, count] : s.unknown_categories) {
      absl::StrAppend(out, " \"", category, "\" (", count, ")");
    }
    absl::StrAppend(out, ".\n");
  }
}

void Findings(const TraceSummary &s, std::string *out) {
  absl::StrAppend(out, "\nDiagnosis\n");
  if (s.findings.empty()) {
    absl::StrAppend(out, s.step_total.duration_ns > 0
                             ? "  No bottleneck stands out: no input wait, copy, launch or "
                               "synchronisation share is above its threshold.\n"
                             : "  Nothing to diagnose: the trace has no timed activity.\n");
    return;
  }
  int index = 1;
  for (const Finding &f : s.findings) {
    absl::StrAppend(out, "  ", index++, ". ", f.title, "\n     ", f.evidence, "\n");
    if (!f.recommendations.empty()) absl::StrAppend(out, "     What to do:\n");
    for (const std::string &r : f.recommendations) absl::StrAppend(out, "       - ", r, "\n");
  }
}

}  // namespace

std::string SummaryToText(const TraceSummary &s, const TextOptions &options) {
  std::string out = absl::StrCat("== ", s.path, " ==\n", s.format);
  if (s.rank) absl::StrAppend(&out, ", rank ", *s.rank);
  if (!s.hostname.empty()) absl::StrAppend(&out, ", host ", s.hostname);
  if (s.pid) absl::StrAppend(&out, ", pid ", *s.pid);
  absl::StrAppend(&out, ", ", Ms(s.end_ns - s.begin_ns), " ms, ", s.events, " events (",
                  s.activities, " spans)\n");
  if (!s.damage.empty()) {
    absl::StrAppend(&out, "Salvaged: only what precedes the damage is summarised (", s.damage,
                    ")\n");
  }
  if (s.cut) absl::StrAppend(&out, "Recovered: ", s.cut_warning, "\n");
  Steps(s, options, &out);
  Ops(WholeTrace(s) ? "Top ops by self time (whole trace)" : "Top ops by self time",
      s.top_ops_by_self, options, &out);
  Ops(WholeTrace(s) ? "Top ops by total time (whole trace)" : "Top ops by total time",
      s.top_ops_by_total, options, &out);
  Kernels(s, options, &out);
  GpuTimeByOp(s, options, &out);
  Gpu(s, options, &out);
  Memory(s, options, &out);
  Counters(s, options, &out);
  Losses(s, &out);
  NotAnalysed(s, &out);
  Findings(s, &out);
  return out;
}

}  // namespace tfprof::cli
