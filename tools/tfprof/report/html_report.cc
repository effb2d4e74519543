#include "tools/tfprof/report/html_report.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "tools/tfprof/analysis/outside_steps.h"
#include "tools/tfprof/report/html_report_assets.h"  // generated
#include "tools/tfprof/report/html_text.h"
#include "tools/tfprof/report/counter_html.h"
#include "tools/tfprof/report/memory_html.h"
#include "tools/tfprof/report/step_timeline_svg.h"
#include "tools/tfprof/report/svg_charts.h"

namespace tfprof::cli {
namespace {

// ---- the step-time categories, bottom of the stacked bar first ----------------------------------

struct Category {
  const char *key;
  const char *label;
  const char *color;
  int64_t StepBreakdown::*field;
};

constexpr std::array<Category, 6> kCategories = {{
    {"gpu_compute", "GPU compute", "#2f9e44", &StepBreakdown::gpu_compute_ns},
    {"communication", "Communication", "#c2255c", &StepBreakdown::communication_ns},
    {"memcpy", "Memcpy / memset", "#1c7ed6", &StepBreakdown::memcpy_ns},
    {"input_wait", "Input wait", "#f08c00", &StepBreakdown::input_wait_ns},
    {"host_compute", "Host compute", "#9c36b5", &StepBreakdown::host_compute_ns},
    {"idle", "Idle", "#ced4da", &StepBreakdown::idle_ns},
}};

double Ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

std::string Escaped(std::string_view text) { return HtmlEscape(text); }

std::string Integer(int64_t value) { return std::to_string(value); }

// ---- table cells ------------------------------------------------------------------------------

std::string NumberCell(const std::string &shown, double sort_value) {
  return "<td class=\"num\" data-v=\"" + SvgNumber(sort_value) + "\">" + shown + "</td>";
}
std::string DurationCell(double ns) { return NumberCell(FormatDuration(ns), ns); }
std::string CountCell(uint64_t count) {
  return NumberCell(FormatCount(count), static_cast<double>(count));
}
std::string TextCell(std::string_view text, const char *cls = nullptr) {
  return std::string("<td") + (cls ? std::string(" class=\"") + cls + "\"" : "") + ">" +
         Escaped(text) + "</td>";
}
// A name that may be long (kernel signatures): clipped on screen, whole in the tooltip and text.
std::string NameCell(std::string_view name) {
  const std::string escaped = Escaped(name);
  return "<td class=\"name\" title=\"" + escaped + "\">" + escaped + "</td>";
}
// A horizontal bar: `fraction` of the cell's width.
std::string BarCell(double fraction, const char *color = nullptr) {
  const double percent = std::clamp(fraction, 0.0, 1.0) * 100;
  return "<td class=\"barcell\" data-v=\"" + SvgNumber(fraction) +
         "\"><span class=\"bar\" style=\"width:" + SvgNumber(std::max(percent, 0.5)) + "%" +
         (color ? std::string(";background:") + color : "") + "\"></span></td>";
}

struct Column {
  std::string_view title;
  bool numeric = false;
};

std::string TableOpen(std::string_view id, const std::vector<Column> &columns,
                      bool sortable = true) {
  std::string out = "<div class=\"table-wrap\"><table id=\"" + std::string(id) + "\"" +
                    (sortable ? " class=\"sortable\"" : "") + "><thead><tr>";
  for (const Column &column : columns) {
    out += column.numeric ? "<th class=\"num\">" : "<th>";
    out += Escaped(column.title);
    out += "</th>";
  }
  return out + "</tr></thead><tbody>";
}
constexpr std::string_view kTableClose = "</tbody></table></div>";

// True when the steps come from more than one process (then their names say which).
bool StepsFromSeveralProcesses(const TraceSummary &summary) {
  for (const StepBreakdown &step : summary.steps) {
    if (step.process != summary.steps.front().process) return true;
  }
  return false;
}

std::string DeviceName(int32_t device, std::string_view process) {
  std::string name = device >= 0 ? "GPU " + std::to_string(device) : "GPU ?";
  if (!process.empty()) name += " (" + std::string(process) + ")";
  return name;
}

// ---- the sections -----------------------------------------------------------------------------

class ReportWriter {
 public:
  ReportWriter(const TraceSummary &summary, const HtmlReportOptions &options)
      : s_(summary),
        options_(options),
        several_step_processes_(StepsFromSeveralProcesses(summary)) {}

  std::string Render() {
    Head();
    out_ += "<body><main>";
    Overview();
    Section("diagnosis", "Diagnosis", &ReportWriter::Diagnosis);
    Section("step-time", "Step time", &ReportWriter::StepTime);
    if (options_.trace != nullptr && !s_.steps.empty()) {
      Section("step-timelines", "Step timelines", &ReportWriter::StepTimelines);
    }
    Section("gpu-utilization", "GPU utilisation over time", &ReportWriter::GpuUtilization);
    Section("top-ops", "Top ops", &ReportWriter::TopOps);
    Section("top-kernels", "Top kernels", &ReportWriter::TopKernels);
    if (s_.has_gpu) Section("gpu-time-by-op", "GPU time by op", &ReportWriter::GpuTimeByOp);
    Section("streams", "Streams", &ReportWriter::Streams);
    Section("idle-gaps", "GPU idle gaps", &ReportWriter::IdleGaps);
    Section("copies", "Copies", &ReportWriter::Copies);
    Section("memory", "Memory", &ReportWriter::Memory);
    Section("counters", "Counters", &ReportWriter::Counters);
    Section("losses", "Losses", &ReportWriter::Losses);
    out_ += "<footer>Made by " + Escaped(options_.generator) + " from <span class=\"mono\">" +
            Escaped(s_.path) +
            "</span>. This page is self-contained: it loads nothing from anywhere. Times are "
            "wall-clock; offsets (+s) count from the trace&#39;s first activity. Click a "
            "column&#39;s heading to sort its table.</footer>";
    out_ += "</main><script>";
    out_ += kReportScript;
    out_ += "</script></body></html>\n";
    return std::move(out_);
  }

 private:
  // A <section> with its heading; `body` writes the rest.
  void Section(std::string_view id, std::string_view title, void (ReportWriter::*body)()) {
    out_ += "<section id=\"" + std::string(id) + "\"><h2>" + std::string(title) + "</h2>";
    (this->*body)();
    out_ += "</section>\n";
  }

  void Head() {
    out_ +=
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        // Nothing may be fetched: inline style and script only, images only as data: URLs.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        "<meta name=\"generator\" content=\"" +
        Escaped(options_.generator) +
        "\"><link rel=\"icon\" href=\"data:,\"><title>tfprof report: " + Escaped(FileName()) +
        "</title><style>";
    out_ += kReportStyle;
    out_ += "</style></head>\n";
  }

  std::string StepName(const StepBreakdown &step) const {
    std::string name = "step " + Integer(step.number);
    if (several_step_processes_ && !step.process.empty()) name += " (" + step.process + ")";
    return name;
  }

  std::string FileName() const {
    const size_t slash = s_.path.find_last_of('/');
    return slash == std::string::npos || slash + 1 == s_.path.size() ? s_.path
                                                                     : s_.path.substr(slash + 1);
  }

  void Fact(std::string_view name, const std::string &escaped_value) {
    out_ += "<div><dt>" + Escaped(name) + "</dt><dd>" + escaped_value + "</dd></div>";
  }

  void Tile(std::string_view key, const std::string &value, const std::string &sub,
            bool warn = false, std::string_view id = "") {
    out_ += "<div class=\"tile" + std::string(warn ? " warn" : "") + "\"" +
            (id.empty() ? "" : " id=\"" + std::string(id) + "\"") + "><div class=\"k\">" +
            Escaped(key) + "</div><div class=\"v\">" + Escaped(value) + "</div><div class=\"s\">" +
            Escaped(sub) + "</div></div>";
  }

  bool InputBound() const {
    return std::any_of(s_.findings.begin(), s_.findings.end(),
                       [](const Finding &finding) { return finding.kind == "input_bound"; });
  }

  void Overview() {
    out_ += "<section id=\"overview\"><h1>tfprof report<small>" + Escaped(FileName()) +
            "</small></h1><p class=\"file mono\">" + Escaped(s_.path) + "</p><dl class=\"facts\">";
    Fact("Format", Escaped(s_.format));
    if (s_.wall_offset_ns) Fact("Recorded", Escaped(FormatUtc(s_.begin_ns + *s_.wall_offset_ns)));
    Fact("Duration", Escaped(FormatDuration(static_cast<double>(s_.end_ns - s_.begin_ns))));
    if (s_.pid) Fact("Process", Escaped(Integer(*s_.pid)));
    if (s_.rank) Fact("Rank", Escaped(Integer(*s_.rank)));
    if (!s_.hostname.empty()) Fact("Host", Escaped(s_.hostname));
    Fact("Events", Escaped(FormatCount(s_.events)));
    Fact("Spans kept", Escaped(FormatCount(s_.activities)));
    out_ += "</dl>";

    out_ += "<div class=\"tiles\" id=\"key-figures\">";
    const double duration = static_cast<double>(s_.end_ns - s_.begin_ns);
    Tile("Duration", FormatDuration(duration), "first to last activity");
    if (s_.has_steps && !s_.steps.empty()) {
      const double mean = static_cast<double>(s_.step_total.duration_ns) /
                          static_cast<double>(s_.steps.size());
      Tile("Steps", FormatCount(s_.steps.size()), "mean " + FormatDuration(mean) + " each");
      const double input = Ratio(static_cast<double>(s_.step_total.input_wait_ns),
                                 static_cast<double>(s_.step_total.duration_ns));
      Tile("Input wait", FormatPercent(input), "of step time", InputBound(), "tile-input-wait");
      const double gpu_idle = Ratio(static_cast<double>(s_.step_total.gpu_idle_ns),
                                    static_cast<double>(s_.step_total.duration_ns));
      if (s_.has_gpu) Tile("GPU idle", FormatPercent(gpu_idle), "of step time", gpu_idle >= 0.3);
    } else {
      Tile("Steps", "none", "no step markers in this trace");
    }
    if (s_.has_gpu && !s_.devices.empty()) {
      // The GPU table's figures: busy time over window time, summed over its rows (each GPU in
      // its own recording's window, so a merged trace's ranks are not measured in each other's).
      double busy = 0, window = 0;
      for (const DeviceUtilization &device : s_.devices) {
        busy += static_cast<double>(device.busy_ns);
        window += static_cast<double>(device.window_ns);
      }
      Tile("GPU utilisation", FormatPercent(Ratio(busy, window)),
           s_.devices.size() == 1 ? "busy, of the GPU window"
                                  : "busy, over " + std::to_string(s_.devices.size()) +
                                        " GPUs' windows");
      Tile("Kernels", FormatCount(s_.kernel_count),
           FormatDuration(static_cast<double>(s_.kernel_total_ns)) + " in all");
    } else {
      Tile("GPU", "none", "no GPU activity");
    }
    out_ += "</div>";
    if (!s_.damage.empty()) {
      out_ += "<p class=\"banner\" id=\"damage\"><b>Salvaged:</b> the file is damaged; this "
              "report covers what was read before the damage. " +
              Escaped(s_.damage) + "</p>";
    }
    if (!s_.cut_warning.empty()) {
      out_ += "<p class=\"banner\" id=\"cut\"><b>Recovered:</b> the file ends early; this "
              "report covers its whole steps. " +
              Escaped(s_.cut_warning) + "</p>";
    }
    out_ += "<nav><a href=\"#diagnosis\">Diagnosis</a><a href=\"#step-time\">Step time</a>"
            "<a href=\"#step-timelines\">Timelines</a>"
            "<a href=\"#gpu-utilization\">GPU utilisation</a><a href=\"#top-ops\">Top ops</a>"
            "<a href=\"#top-kernels\">Top kernels</a>" +
            std::string(s_.has_gpu ? "<a href=\"#gpu-time-by-op\">GPU time by op</a>" : "") +
            "<a href=\"#streams\">Streams</a>"
            "<a href=\"#idle-gaps\">Idle gaps</a><a href=\"#copies\">Copies</a>"
            "<a href=\"#memory\">Memory</a><a href=\"#counters\">Counters</a>"
            "<a href=\"#losses\">Losses</a></nav></section>\n";
  }

  void Diagnosis() {
    if (s_.findings.empty()) {
      out_ += "<article class=\"finding ok\" data-kind=\"none\"><h3>Nothing stands out</h3>"
              "<p class=\"evidence\">No input, launch, copy or synchronisation bottleneck and no "
              "data loss was found in this trace.</p></article>";
    }
    for (const Finding &finding : s_.findings) {
      const bool bad = finding.kind == "data_loss";
      std::string badge = finding.kind;
      std::replace(badge.begin(), badge.end(), '_', ' ');
      out_ += "<article class=\"finding" + std::string(bad ? " bad" : "") + "\" data-kind=\"" +
              Escaped(finding.kind) + "\"><span class=\"badge\">" + Escaped(badge) +
              "</span><h3>" + Escaped(finding.title) + "</h3>";
      if (!finding.evidence.empty()) {
        out_ += "<p class=\"evidence\">" + Escaped(finding.evidence) + "</p>";
      }
      if (!finding.recommendations.empty()) {
        out_ += "<ul class=\"recommendations\">";
        for (const std::string &recommendation : finding.recommendations) {
          out_ += "<li>" + Escaped(recommendation) + "</li>";
        }
        out_ += "</ul>";
      }
      if (!finding.steps.empty()) {
        constexpr size_t kListed = 20;
        std::string steps;
        for (size_t i = 0; i < finding.steps.size() && i < kListed; ++i) {
          steps += (i > 0 ? ", " : "") + Integer(finding.steps[i]);
        }
        if (finding.steps.size() > kListed) {
          steps += ", \xE2\x80\xA6 (" + FormatCount(finding.steps.size()) + " steps in all)";
        }
        out_ += "<p class=\"steps\">" +
                std::string(finding.steps.size() == 1 ? "Step " : "Steps ") + Escaped(steps) +
                "</p>";
      }
      out_ += "</article>";
    }
  }

  void Legend(const StepBreakdown &total) {
    out_ += "<ul class=\"legend\" id=\"step-legend\">";
    const double duration = static_cast<double>(total.duration_ns);
    for (const Category &category : kCategories) {
      out_ += std::string("<li data-key=\"") + category.key +
              "\"><span class=\"swatch\" style=\"background:" + category.color + "\"></span>" +
              category.label + " <b>" +
              FormatPercent(Ratio(static_cast<double>(total.*category.field), duration)) +
              "</b></li>";
    }
    out_ += "</ul><div class=\"share\" id=\"step-share\" aria-label=\"share of step time\">";
    for (const Category &category : kCategories) {
      const double share = Ratio(static_cast<double>(total.*category.field), duration);
      if (share <= 0) continue;
      out_ += std::string("<span class=\"seg-") + category.key + "\" style=\"width:" +
              SvgNumber(share * 100) + "%;background:" + category.color + "\" title=\"" +
              category.label + ": " + FormatPercent(share) + " (" +
              Escaped(FormatDuration(static_cast<double>(total.*category.field))) +
              ")\"></span>";
    }
    out_ += "</div>";
  }

  std::string StepTooltip(const std::string &heading, const StepBreakdown &step, double divisor) {
    std::string text =
        heading + ": " + FormatDuration(static_cast<double>(step.duration_ns) / divisor);
    for (const Category &category : kCategories) {
      const double value = static_cast<double>(step.*category.field) / divisor;
      text += std::string("\n") + category.label + " " + FormatDuration(value) + " (" +
              FormatPercent(Ratio(static_cast<double>(step.*category.field),
                                  static_cast<double>(step.duration_ns))) +
              ")";
    }
    if (!step.longest_input_op.empty()) text += "\nlongest input op: " + step.longest_input_op;
    return text;
  }

  void StepTime() {
    if (!s_.has_steps || s_.steps.empty()) {
      out_ += "<p class=\"empty\" id=\"no-steps\">No steps in this trace. Steps come from "
              "tfprof&#39;s step markers (prof_step, NVTX ranges matched by --step-marker), the "
              "PyTorch profiler&#39;s ProfilerStep#N or TensorFlow runs.</p>";
      return;
    }
    const size_t count = s_.steps.size();
    out_ += "<p>Each instant of a step counts once, for the first of: a kernel runs (GPU "
            "compute), a copy or memset runs, a host thread runs an op outside the input "
            "pipeline (host compute), a host thread is inside an input op such as "
            "IteratorGetNext (input wait), nothing recorded runs (idle). Over " +
            FormatCount(count) + (count == 1 ? " step" : " steps") + " (" +
            Escaped(FormatDuration(static_cast<double>(s_.step_total.duration_ns))) + "):</p>";
    Legend(s_.step_total);

    StackedBarChart chart;
    chart.id = "step-chart";
    chart.description = "step time by category, one bar per step";
    chart.bar_class = "step-bar";
    chart.x_title = "step";
    for (const Category &category : kCategories) {
      chart.series.push_back({category.key, category.label, category.color});
    }
    const size_t per_bar =
        count <= options_.max_step_bars ? 1 : (count + options_.max_step_bars - 1) /
                                                  std::max<size_t>(options_.max_step_bars, 1);
    for (size_t first = 0; first < count; first += per_bar) {
      const size_t last = std::min(first + per_bar, count) - 1;
      StepBreakdown sum;
      for (size_t i = first; i <= last; ++i) {
        const StepBreakdown &step = s_.steps[i];
        sum.duration_ns += step.duration_ns;
        for (const Category &category : kCategories) sum.*category.field += step.*category.field;
      }
      const double n = static_cast<double>(last - first + 1);
      StackedBar bar;
      bar.label = Integer(s_.steps[first].number);
      for (const Category &category : kCategories) {
        bar.values.push_back(static_cast<double>(sum.*category.field) / n);
      }
      if (per_bar == 1) {
        bar.attributes = " data-step=\"" + Integer(s_.steps[first].number) + "\"";
        if (!s_.steps[first].process.empty()) {
          bar.attributes += " data-process=\"" + Escaped(s_.steps[first].process) + "\"";
        }
        sum.longest_input_op = s_.steps[first].longest_input_op;
        bar.tooltip = StepTooltip(StepName(s_.steps[first]), sum, 1);
      } else {
        bar.attributes = " data-first-step=\"" + Integer(s_.steps[first].number) +
                         "\" data-last-step=\"" + Integer(s_.steps[last].number) +
                         "\" data-steps=\"" + std::to_string(last - first + 1) + "\"";
        bar.tooltip = StepTooltip("steps " + Integer(s_.steps[first].number) + "\xE2\x80\x93" +
                                      Integer(s_.steps[last].number) + ", mean",
                                  sum, n);
      }
      chart.bars.push_back(std::move(bar));
    }
    if (per_bar > 1) chart.bar_class = "step-bar step-group";
    out_ += RenderStackedBarChart(chart);
    if (per_bar > 1) {
      out_ += "<p class=\"note\" id=\"step-chart-note\">" + FormatCount(count) +
              " steps: each bar is the mean of " + FormatCount(per_bar) +
              " consecutive steps (at most " + FormatCount(options_.max_step_bars) +
              " bars are drawn).</p>";
    } else {
      out_ += "<p class=\"note\">Hover over a bar for its figures.</p>";
    }
    StepTable();
  }

  void StepTable() {
    const size_t count = s_.steps.size();
    std::vector<size_t> rows(count);
    for (size_t i = 0; i < count; ++i) rows[i] = i;
    if (count > options_.max_step_rows) {
      std::nth_element(rows.begin(),
                       rows.begin() + static_cast<std::ptrdiff_t>(options_.max_step_rows),
                       rows.end(), [&](size_t a, size_t b) {
                         return s_.steps[a].duration_ns > s_.steps[b].duration_ns;
                       });
      rows.resize(options_.max_step_rows);
      std::sort(rows.begin(), rows.end());
      out_ += "<p class=\"note\" id=\"step-table-note\">The table lists the " +
              FormatCount(options_.max_step_rows) + " longest of the " + FormatCount(count) +
              " steps, in step order.</p>";
    }
    // Duration columns; without GPU activity, those about the GPU are left out.
    struct StepColumn {
      std::string_view title;
      int64_t StepBreakdown::*field;
      bool about_gpu;
    };
    std::vector<StepColumn> columns = {{"Duration", &StepBreakdown::duration_ns, false}};
    for (const Category &category : kCategories) {
      const std::string_view key = category.key;
      columns.push_back({key == "memcpy" ? "Memcpy" : category.label, category.field,
                         key == "gpu_compute" || key == "memcpy"});
    }
    columns.push_back({"GPU idle", &StepBreakdown::gpu_idle_ns, true});
    columns.push_back({"Sync", &StepBreakdown::sync_ns, true});
    std::erase_if(columns,
                  [&](const StepColumn &column) { return column.about_gpu && !s_.has_gpu; });

    std::vector<Column> headings = {{"Step"}, {"Start", true}};
    for (const StepColumn &column : columns) headings.push_back({column.title, true});
    if (s_.has_gpu) headings.push_back({"Kernels", true});
    headings.push_back({"Longest input op"});
    out_ += "<h3>Per step</h3>";
    out_ += TableOpen("step-table", headings);
    for (size_t index : rows) {
      const StepBreakdown &step = s_.steps[index];
      const double start = static_cast<double>(step.begin_ns - s_.begin_ns);
      out_ += "<tr data-step=\"" + Integer(step.number) + "\"><td data-v=\"" +
              Integer(step.number) + "\">" + Escaped(StepName(step)) + "</td>" +
              NumberCell(FormatOffset(start), start);
      for (const StepColumn &column : columns) {
        out_ += DurationCell(static_cast<double>(step.*column.field));
      }
      if (s_.has_gpu) out_ += CountCell(step.kernels);
      out_ += NameCell(step.longest_input_op) + "</tr>";
    }
    const StepBreakdown &total = s_.step_total;
    const double duration = static_cast<double>(total.duration_ns);
    std::string totals = "<tr class=\"total\"><td>all steps</td><td></td>";
    std::string shares = "<tr class=\"shares\"><td>share</td><td></td>";
    for (const StepColumn &column : columns) {
      totals += DurationCell(static_cast<double>(total.*column.field));
      shares += "<td class=\"num\">" +
                FormatPercent(Ratio(static_cast<double>(total.*column.field), duration)) +
                "</td>";
    }
    if (s_.has_gpu) {
      totals += CountCell(total.kernels);
      shares += "<td></td>";
    }
    // Time outside the steps, measured the same way, below the totals it is not part of.
    std::string outside;
    for (const OutsideSteps &part : s_.outside_steps) {
      if (part.breakdown.duration_ns < kOutsideRowMinNs) continue;
      const std::string label = OutsideRowLabel(part.where);
      outside += "<tr class=\"outside\" data-outside=\"" + Escaped(part.where) + "\"><td>" +
                 label + "</td><td></td>";
      for (const StepColumn &column : columns) {
        outside += DurationCell(static_cast<double>(part.breakdown.*column.field));
      }
      if (s_.has_gpu) outside += CountCell(part.breakdown.kernels);
      std::string ops;
      for (const auto &[name, ns] : part.top_ops) {
        ops += (ops.empty() ? "mostly " : ", ") + name;
      }
      outside += NameCell(ops) + "</tr>";
    }
    out_ += "</tbody><tfoot>" + totals + "<td></td></tr>" + shares + "<td></td></tr>" + outside +
            "</tfoot></table></div>";
  }

  void GpuUtilization() {
    if (!s_.has_gpu || s_.devices.empty()) {
      out_ += "<p class=\"empty\" id=\"no-gpu\">No GPU activity in this trace: no kernel, copy or "
              "memset was recorded.</p>";
      return;
    }
    out_ += "<p>The share of time each GPU ran a kernel, copy or memset, in " +
            std::to_string(s_.devices.front().timeline.size()) + " slices of the trace" +
            (s_.has_steps && s_.steps.size() <= options_.max_step_bars
                 ? "; thin vertical lines are step starts."
                 : ".") +
            " Hover for a slice&#39;s figures.</p>";
    for (const DeviceUtilization &device : s_.devices) {
      TimelineChart chart;
      chart.id = "util-gpu-" + std::to_string(&device - s_.devices.data());
      chart.description = "utilisation of " + DeviceName(device.device, device.process);
      chart.values = device.timeline;
      chart.begin_ns = static_cast<double>(device.timeline_begin_ns - s_.begin_ns);
      chart.bucket_ns = static_cast<double>(device.bucket_ns);
      chart.mean = device.utilization;
      if (s_.steps.size() <= options_.max_step_bars) {
        // The steps of the device's process; with one process of steps, those (a GPU's records
        // often sit in a process of their own).
        for (const StepBreakdown &step : s_.steps) {
          if (!several_step_processes_ || step.process == device.process) {
            chart.marks_ns.push_back(static_cast<double>(step.begin_ns - s_.begin_ns));
          }
        }
      }
      out_ += "<figure class=\"util-chart\" data-device=\"" + std::to_string(device.device) +
              "\"" +
              (device.process.empty() ? ""
                                      : " data-process=\"" + Escaped(device.process) + "\"") +
              "><figcaption><b>" + Escaped(DeviceName(device.device, device.process)) +
              "</b>: busy " + FormatPercent(device.utilization) + " of " +
              Escaped(FormatDuration(static_cast<double>(device.window_ns))) + " (kernels " +
              FormatPercent(Ratio(static_cast<double>(device.kernel_ns),
                                  static_cast<double>(device.window_ns))) +
              ")</figcaption>" + RenderTimelineChart(chart) + "</figure>";
    }
    out_ += TableOpen("devices", {{"GPU"}, {"Busy", true}, {"Kernel time", true},
                                  {"Window", true}, {"Utilisation", true}, {""}});
    for (const DeviceUtilization &device : s_.devices) {
      out_ += "<tr>" + TextCell(DeviceName(device.device, device.process)) +
              DurationCell(static_cast<double>(device.busy_ns)) +
              DurationCell(static_cast<double>(device.kernel_ns)) +
              DurationCell(static_cast<double>(device.window_ns)) +
              NumberCell(FormatPercent(device.utilization), device.utilization) +
              BarCell(device.utilization, "#1c7ed6") + "</tr>";
    }
    out_ += kTableClose;
  }

  void OpTable(std::string_view id, const std::vector<OpStat> &ops, bool by_self) {
    int64_t top = 1;
    for (const OpStat &op : ops) top = std::max(top, by_self ? op.self_ns : op.total_ns);
    out_ += TableOpen(id, {{"Op"}, {"Kind"}, {"Calls", true}, {"Self", true}, {"Total", true},
                           {"Mean", true}, {"Max", true}, {""}});
    for (const OpStat &op : ops) {
      out_ += "<tr>" + NameCell(op.name) + TextCell(ActivityKindName(op.kind), "kind") +
              CountCell(op.count) + DurationCell(static_cast<double>(op.self_ns)) +
              DurationCell(static_cast<double>(op.total_ns)) +
              DurationCell(op.count > 0 ? static_cast<double>(op.total_ns) /
                                              static_cast<double>(op.count)
                                        : 0) +
              DurationCell(static_cast<double>(op.max_ns)) +
              BarCell(Ratio(static_cast<double>(by_self ? op.self_ns : op.total_ns),
                            static_cast<double>(top)),
                      by_self ? "#9c36b5" : "#8250df") +
              "</tr>";
    }
    out_ += kTableClose;
  }

  // A section with nothing to show says so in `note`; true when `nothing`.
  bool NothingToShow(bool nothing, const std::string &note) {
    if (nothing) out_ += "<p class=\"empty\">" + note + "</p>";
    return nothing;
  }

  void TopOps() {
    if (NothingToShow(s_.top_ops_by_self.empty() && s_.top_ops_by_total.empty(),
                      "No host ops in this trace.")) {
      return;
    }
    out_ += "<h3>By self time</h3><p class=\"note\">Self: time in the op itself, not in ops it "
            "called on the same thread.</p>";
    OpTable("top-ops-self", s_.top_ops_by_self, true);
    out_ += "<h3>By total time</h3>";
    OpTable("top-ops-total", s_.top_ops_by_total, false);
  }

  void TopKernels() {
    if (NothingToShow(s_.top_kernels.empty(), "No kernels in this trace.")) return;
    out_ += "<p>" + FormatCount(s_.kernel_count) + " kernel launches ran for " +
            Escaped(FormatDuration(static_cast<double>(s_.kernel_total_ns))) + " in all";
    if (s_.top_kernels.size() < s_.kernel_count) {
      out_ += "; the " + std::to_string(s_.top_kernels.size()) + " that took longest";
    }
    out_ += ":</p>";
    out_ += TableOpen("top-kernels", {{"Kernel"}, {"Calls", true}, {"Total", true},
                                      {"Share", true}, {""}, {"Mean", true}, {"Min", true},
                                      {"Max", true}});
    for (const KernelStat &kernel : s_.top_kernels) {
      out_ += "<tr>" + NameCell(kernel.name) + CountCell(kernel.count) +
              DurationCell(static_cast<double>(kernel.total_ns)) +
              NumberCell(FormatPercent(kernel.share), kernel.share) +
              BarCell(kernel.share, "#2f9e44") +
              DurationCell(kernel.count > 0 ? static_cast<double>(kernel.total_ns) /
                                                  static_cast<double>(kernel.count)
                                            : 0) +
              DurationCell(static_cast<double>(kernel.min_ns)) +
              DurationCell(static_cast<double>(kernel.max_ns)) + "</tr>";
    }
    out_ += kTableClose;
  }

  // GPU time by op and by layer (op_gpu_time.h): the GPU work each launched, by correlation.
  void GpuTimeTable(std::string_view id, const std::vector<OpGpuTime> &rows) {
    out_ += TableOpen(id, {{"Name"}, {"Calls", true}, {"Host", true}, {"Launches", true},
                           {"Kernels", true}, {"Copies", true}, {"GPU self", true},
                           {"GPU total", true}, {"Share", true}, {""}, {"Top kernels"}});
    for (const OpGpuTime &row : rows) {
      std::string kernels;
      for (const OpGpuTime::Kernel &kernel : row.top_kernels) {
        if (!kernels.empty()) kernels += "; ";
        kernels += kernel.name + " (" + FormatCount(kernel.count) + ", " +
                   FormatDuration(static_cast<double>(kernel.total_ns)) + ")";
      }
      out_ += "<tr>" + NameCell(row.name) + CountCell(row.calls) +
              DurationCell(static_cast<double>(row.host_ns)) + CountCell(row.launches) +
              CountCell(row.kernels) + CountCell(row.copies) +
              DurationCell(static_cast<double>(row.gpu_self_ns)) +
              DurationCell(static_cast<double>(row.gpu_total_ns)) +
              NumberCell(FormatPercent(row.share), row.share) + BarCell(row.share, "#1971c2") +
              NameCell(kernels) + "</tr>";
    }
    out_ += kTableClose;
  }

  void GpuTimeByOp() {
    if (NothingToShow(s_.gpu_time_by_op.empty(), "No GPU work in this trace.")) return;
    out_ += "<p class=\"note\">" +
            Escaped(FormatDuration(static_cast<double>(s_.gpu_work_ns))) +
            " of kernels, copies and memsets, each tied to its launch call by correlation id. "
            "Self: launched while the op was the innermost open on its thread; total: launched "
            "anywhere inside it, once per name.</p>";
    GpuTimeTable("gpu-time-by-op-table", s_.gpu_time_by_op);
    if (s_.gpu_time_by_layer.empty()) return;
    out_ += "<h3>By layer</h3>";
    GpuTimeTable("gpu-time-by-layer", s_.gpu_time_by_layer);
  }

  void Streams() {
    if (NothingToShow(s_.streams.empty(), "No GPU streams in this trace.")) return;
    out_ += TableOpen("streams", {{"GPU"}, {"Stream", true}, {"Kernels", true},
                                  {"Copies", true}, {"Busy", true}, {"Utilisation", true},
                                  {""}});
    for (const StreamUtilization &stream : s_.streams) {
      out_ += "<tr>" + TextCell(DeviceName(stream.device, stream.process)) +
              NumberCell(Integer(stream.stream), static_cast<double>(stream.stream)) +
              CountCell(stream.kernels) + CountCell(stream.copies) +
              DurationCell(static_cast<double>(stream.busy_ns)) +
              NumberCell(FormatPercent(stream.utilization), stream.utilization) +
              BarCell(stream.utilization, "#1c7ed6") + "</tr>";
    }
    out_ += kTableClose;
  }

  void IdleGaps() {
    if (NothingToShow(s_.idle_gaps.empty(),
                      s_.has_gpu ? "No idle gaps of 1 \xC2\xB5s or more between GPU activities."
                                 : "No GPU activity in this trace.")) {
      return;
    }
    out_ += "<p>" + FormatCount(s_.idle_gap_count) +
            " gaps of at least 1 \xC2\xB5s between GPU activities; the longest " +
            std::to_string(s_.idle_gaps.size()) +
            ", with the host op that overlapped each most:</p>";
    out_ += TableOpen("idle-gap-table", {{"Start", true}, {"Duration", true}, {"GPU"},
                                         {"Step", true}, {"Host activity meanwhile"}});
    for (const IdleGap &gap : s_.idle_gaps) {
      const double offset = static_cast<double>(gap.begin_ns - s_.begin_ns);
      out_ += "<tr>" + NumberCell(FormatOffset(offset), offset) +
              DurationCell(static_cast<double>(gap.duration_ns)) +
              TextCell(DeviceName(gap.device, gap.process)) +
              (gap.step ? NumberCell(Integer(*gap.step), static_cast<double>(*gap.step))
                        : std::string("<td class=\"num\" data-v=\"-1\">\xE2\x80\x93</td>")) +
              (gap.host_activity.empty() ? std::string("<td class=\"kind\">nothing</td>")
                                         : NameCell(gap.host_activity)) +
              "</tr>";
    }
    out_ += kTableClose;
  }

  void Copies() {
    if (NothingToShow(s_.copies.empty(), "No memory copies or memsets in this trace.")) return;
    out_ += TableOpen("copy-table", {{"Kind"}, {"Count", true}, {"Bytes", true},
                                     {"Time", true}, {"Throughput", true}});
    for (const CopyStat &copy : s_.copies) {
      char throughput[32];
      std::snprintf(throughput, sizeof throughput, "%.2f GB/s", copy.gigabytes_per_second);
      out_ += "<tr>" + TextCell(copy.label) + CountCell(copy.count) +
              NumberCell(FormatBytes(copy.bytes), static_cast<double>(copy.bytes)) +
              DurationCell(static_cast<double>(copy.total_ns)) +
              NumberCell(throughput, copy.gigabytes_per_second) + "</tr>";
    }
    out_ += kTableClose;
  }

  void Memory() { out_ += RenderMemorySection(s_); }

  // The median step and the slowest (one timeline when they are the same step), each drawn from
  // the trace: threads and streams as rows, kernels' tooltips naming their launching op.
  void StepTimelines() {
    std::vector<size_t> by_duration(s_.steps.size());
    for (size_t i = 0; i < by_duration.size(); ++i) by_duration[i] = i;
    std::stable_sort(by_duration.begin(), by_duration.end(), [&](size_t a, size_t b) {
      return s_.steps[a].duration_ns < s_.steps[b].duration_ns;
    });
    const size_t median = by_duration[(by_duration.size() - 1) / 2];
    const size_t slowest = by_duration.back();
    out_ += "<p>Rows are threads and GPU streams; nested host spans stack downwards. Hover a "
            "span for its name and times, a kernel for the host op that launched it. Spans "
            "narrower than a pixel are drawn together as grey blocks.</p>";
    StepTimeline(median, slowest == median ? "median and slowest" : "median");
    if (slowest != median) StepTimeline(slowest, "slowest");
  }
  void StepTimeline(size_t index, const std::string &which) {
    const StepBreakdown &step = s_.steps[index];
    const Trace &trace = *options_.trace;
    // The step's recording (a merge's rank): that of the trace's step at the same time.
    uint32_t group = 0;
    for (const Step &candidate : trace.steps) {
      if (candidate.number == step.number && candidate.begin_ns == step.begin_ns &&
          candidate.process < trace.processes.size()) {
        group = trace.processes[candidate.process].group;
        break;
      }
    }
    StepTimelineFacts facts;
    const std::string svg = RenderStepTimeline(trace, step.begin_ns,
                                               step.begin_ns + step.duration_ns, group,
                                               StepTimelineOptions{}, &facts);
    out_ += "<figure class=\"step-timeline-figure\" data-step=\"" +
            std::to_string(step.number) + "\" data-which=\"" + which + "\"><figcaption><b>" +
            Escaped(which) + " step</b>: step " + std::to_string(step.number) + ", " +
            Escaped(FormatDuration(static_cast<double>(step.duration_ns))) + "; " +
            std::to_string(facts.host_rows) + " threads, " + std::to_string(facts.stream_rows) +
            " streams";
    if (facts.blocks > 0) {
      out_ += "; " + std::to_string(facts.spans_merged) + " spans in " +
              std::to_string(facts.blocks) + " blocks";
    }
    if (facts.too_deep > 0) {
      out_ += "; " + std::to_string(facts.too_deep) + " spans nested deeper than " +
              std::to_string(StepTimelineOptions{}.max_depth) + " levels not drawn";
    }
    if (facts.rows_not_drawn > 0) {
      out_ += "; " + std::to_string(facts.rows_not_drawn) + " more rows not drawn";
    }
    out_ += "</figcaption>" +
            (svg.empty() ? std::string("<p class=\"empty\">Nothing ran in this step.</p>") : svg) +
            "</figure>";
  }
  void Counters() { out_ += RenderCounterSection(s_); }

  void Losses() {
    const TraceLosses &losses = s_.losses;
    if (NothingToShow(!losses.reported,
                      "This trace&#39;s format does not say whether the recorder lost anything.")) {
      return;
    }
    const uint64_t total = losses.dropped_events + losses.gpu_records_dropped +
                           losses.unmatched_span_ends + losses.unmatched_step_ends +
                           losses.memory_dropped_events;
    out_ += total == 0 ? (losses.unreported_inputs > 0
                              ? "<p class=\"ok-text\" id=\"no-losses\">Nothing was lost in the "
                                "inputs that record losses.</p>"
                              : "<p class=\"ok-text\" id=\"no-losses\">Nothing was lost: the "
                                "recorder kept every event.</p>")
                       : "<p class=\"bad-text\" id=\"some-losses\">The recorder lost events: "
                         "figures above may be low.</p>";
    if (losses.unreported_inputs > 0) {
      // A merge of inputs of which some do not record losses: the counts are the others'.
      out_ += "<p class=\"empty\" id=\"unreported-inputs\">These counts are those of the inputs "
              "that record losses; " + Integer(static_cast<int64_t>(losses.unreported_inputs)) +
              (losses.unreported_inputs == 1 ? " merged input does" : " merged inputs do") +
              " not record them.</p>";
    }
    out_ += TableOpen("loss-table", {{"What"}, {"Count", true}}, false);
    const std::pair<const char *, uint64_t> rows[] = {
        {"host events dropped (full ring buffers)", losses.dropped_events},
        {"GPU activity records dropped", losses.gpu_records_dropped},
        {"span ends without a start", losses.unmatched_span_ends},
        {"step ends without a start", losses.unmatched_step_ends},
        {"records lost for memory (max_memory_mb)", losses.memory_dropped_events},
        {"records outside the kept window (keep=)", losses.discarded_events},
    };
    for (const auto &[what, count] : rows) {
      out_ += "<tr>" + TextCell(what) + CountCell(count) + "</tr>";
    }
    out_ += kTableClose;
  }

  const TraceSummary &s_;
  const HtmlReportOptions &options_;
  const bool several_step_processes_;
  std::string out_;
};

}  // namespace

std::string RenderHtmlReport(const TraceSummary &summary, const HtmlReportOptions &options) {
  return ReportWriter(summary, options).Render();
}

}  // namespace tfprof::cli
