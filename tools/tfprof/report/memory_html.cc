#include "tools/tfprof/report/memory_html.h"

#include "tools/tfprof/report/html_text.h"
#include "tools/tfprof/report/svg_charts.h"

namespace tfprof::cli {
namespace {

std::string SignedBytes(double bytes) {
  return bytes < 0 ? "-" + FormatBytes(static_cast<uint64_t>(-bytes))
                   : FormatBytes(static_cast<uint64_t>(bytes));
}

// The device's name; in a trace of several processes (a merge of ranks), with its process's.
std::string DeviceLabel(const TraceSummary &s, const DeviceMemory &d) {
  for (const DeviceMemory &other : s.memory) {
    if (other.process != d.process && !d.process_name.empty()) {
      return d.process_name + " " + d.label;
    }
  }
  return d.label;
}

std::string Caption(const TraceSummary &s, const DeviceMemory &d) {
  std::string caption = "<b>" + HtmlEscape(DeviceLabel(s, d)) + "</b> (" + HtmlEscape(d.source) +
                        ", " + FormatCount(d.events) + " events): peak " +
                        HtmlEscape(SignedBytes(static_cast<double>(d.peak_bytes))) + " at +" +
                        HtmlEscape(FormatDuration(static_cast<double>(d.peak_ns - s.begin_ns)));
  if (d.peak_step) caption += ", in step " + std::to_string(*d.peak_step);
  if (d.relative) {
    caption += ". The file gives no totals: the line counts bytes allocated since its first "
               "memory event";
  }
  return caption;
}

}  // namespace

std::string RenderMemorySection(const TraceSummary &s) {
  if (s.memory.empty()) {
    return "<p class=\"empty\" id=\"no-memory\">This trace holds nothing about memory: no "
           "[memory] events (PyTorch's profile_memory), no GPU memory counter, no allocator "
           "statistics.</p>";
  }
  std::string out =
      "<p>Bytes in use over the trace, the most in each of " +
      std::to_string(kMemoryTimelineBuckets) +
      " slices; the red line marks the peak, thin lines are step starts. Hover for a slice&#39;s "
      "figures.</p>";
  for (size_t index = 0; index < s.memory.size(); ++index) {
    const DeviceMemory &d = s.memory[index];
    LineChart chart;
    chart.id = "memory-" + std::to_string(index);
    chart.description = "bytes in use on " + DeviceLabel(s, d) + " (" + d.source + ")";
    chart.color = d.device < 0 ? "#7048e8" : "#2f9e44";
    for (const MemoryPoint &point : d.timeline) {
      chart.points.push_back(LinePoint{static_cast<double>(point.ns - s.begin_ns),
                                       static_cast<double>(point.bytes)});
    }
    chart.begin_ns = 0;
    chart.end_ns = static_cast<double>(s.end_ns - s.begin_ns);
    chart.format_value = SignedBytes;
    chart.binary_ticks = true;
    chart.peak_ns = static_cast<double>(d.peak_ns - s.begin_ns);
    for (const StepBreakdown &step : s.steps) {
      chart.marks_ns.push_back(static_cast<double>(step.begin_ns - s.begin_ns));
    }
    out += "<figure class=\"memory-chart\" data-device=\"" + std::to_string(d.device) +
           "\" data-peak-bytes=\"" + std::to_string(d.peak_bytes) + "\"><figcaption>" +
           Caption(s, d) + "</figcaption>" + RenderLineChart(chart) + "</figure>";
    if (!d.top_ops_at_peak.empty()) {
      out += "<p>Top-level ops " +
             std::string(d.top_ops_basis == PeakOpsBasis::kLiveBlocks
                             ? "holding the most at the peak (blocks still allocated):"
                             : "allocating the most in the peak&#39;s step:") +
             "</p><table class=\"memory-ops\"><thead><tr><th>Op</th><th class=\"num\">Bytes"
             "</th></tr></thead><tbody>";
      for (const MemoryOpBytes &op : d.top_ops_at_peak) {
        out += "<tr><td class=\"name\">" + HtmlEscape(op.name) + "</td><td class=\"num\">" +
               HtmlEscape(FormatBytes(static_cast<uint64_t>(op.bytes))) + "</td></tr>";
      }
      out += "</tbody></table>";
    }
  }
  return out;
}

}  // namespace tfprof::cli
