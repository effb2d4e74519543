#include "tools/tfprof/report/counter_html.h"

#include <algorithm>
#include <cstdio>

#include "tools/tfprof/report/html_text.h"
#include "tools/tfprof/report/svg_charts.h"

namespace tfprof::cli {
namespace {

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// "loss", "loss / value2", and the process's name in a trace of several (a merge of ranks).
std::string CounterLabel(const TraceSummary &s, const CounterSeries &c) {
  std::string label = c.series == "value" ? c.name : c.name + " / " + c.series;
  for (const CounterSeries &other : s.counters) {
    if (other.process_index != c.process_index && !c.process.empty()) {
      return c.process + ": " + label;
    }
  }
  return label;
}

}  // namespace

std::vector<LinePoint> CounterLinePoints(const CounterSeries &counter, int64_t begin_ns,
                                         int64_t end_ns) {
  const double half_slice = static_cast<double>(std::max<int64_t>(end_ns - begin_ns, 1)) /
                            static_cast<double>(kCounterTimelineBuckets) / 2;
  std::vector<LinePoint> points;
  points.reserve(counter.timeline.size() * 2);
  for (const CounterPoint &point : counter.timeline) {
    const double start = static_cast<double>(point.ns - begin_ns);
    if (point.min == point.value) {
      points.push_back(LinePoint{start, point.value});
      continue;
    }
    points.push_back(LinePoint{start, point.min_first ? point.min : point.value});
    points.push_back(LinePoint{start + half_slice, point.min_first ? point.value : point.min});
  }
  return points;
}

std::string RenderCounterSection(const TraceSummary &s) {
  if (s.counters.empty()) {
    return "<p class=\"empty\" id=\"no-counters\">This trace holds no counters besides memory "
           "(tfprof.counter(), prof_counter(), a file&#39;s counter events).</p>";
  }
  std::string out =
      "<p>Each counter&#39;s values over the trace, the lowest and the highest in each of " +
      std::to_string(kCounterTimelineBuckets) +
      " slices; thin lines are step starts. Hover for a slice&#39;s values.</p>";
  for (size_t index = 0; index < s.counters.size(); ++index) {
    const CounterSeries &c = s.counters[index];
    LineChart chart;
    chart.id = "counter-" + std::to_string(index);
    chart.description = "values of the counter " + CounterLabel(s, c);
    chart.color = "#e8590c";
    chart.points = CounterLinePoints(c, s.begin_ns, s.end_ns);
    chart.begin_ns = 0;
    chart.end_ns = static_cast<double>(s.end_ns - s.begin_ns);
    chart.format_value = Number;
    for (const StepBreakdown &step : s.steps) {
      chart.marks_ns.push_back(static_cast<double>(step.begin_ns - s.begin_ns));
    }
    out += "<figure class=\"counter-chart\" data-counter=\"" + HtmlEscape(c.name) +
           "\" data-series=\"" + HtmlEscape(c.series) + "\" data-samples=\"" +
           std::to_string(c.samples) + "\"><figcaption><b>" + HtmlEscape(CounterLabel(s, c)) +
           "</b>: " + FormatCount(c.samples) + " samples, from " + Number(c.min) + " to " +
           Number(c.max) + ", last " + Number(c.last) + "</figcaption>" + RenderLineChart(chart) +
           "</figure>";
  }
  return out;
}

}  // namespace tfprof::cli
