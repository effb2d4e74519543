#include "tools/tfprof/report/svg_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/tfprof/report/html_text.h"

namespace tfprof::cli {
namespace {

constexpr const char *kAxisColor = "#8c959f";
constexpr const char *kGridColor = "#eaeef2";
constexpr const char *kLabelColor = "#57606a";

// 1, 2 or 5 times a power of ten, the smallest such >= raw (raw > 0).
double NiceStep(double raw) {
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= raw * (1 - 1e-9)) return factor * power;
  }
  return 10 * power;
}

std::string Attr(const char *name, double value) {
  return std::string(" ") + name + "=\"" + SvgNumber(value) + "\"";
}

std::string Text(double x, double y, const char *anchor, const std::string &text,
                 const char *cls = "tick") {
  return "<text class=\"" + std::string(cls) + "\"" + Attr("x", x) + Attr("y", y) +
         " text-anchor=\"" + anchor + "\">" + HtmlEscape(text) + "</text>";
}

std::string Line(double x1, double y1, double x2, double y2, const char *color,
                 const char *cls) {
  return std::string("<line class=\"") + cls + "\"" + Attr("x1", x1) + Attr("y1", y1) +
         Attr("x2", x2) + Attr("y2", y2) + " stroke=\"" + color + "\"/>";
}

std::string SvgOpen(const std::string &id, const std::string &description, double width,
                    double height) {
  return "<svg id=\"" + HtmlEscape(id) + "\" class=\"chart\" viewBox=\"0 0 " + SvgNumber(width) +
         " " + SvgNumber(height) + "\" role=\"img\" aria-label=\"" + HtmlEscape(description) +
         "\" font-size=\"11\" fill=\"" + kLabelColor + "\">";
}

}  // namespace

std::vector<double> NiceTicks(double max, int target) {
  if (!(max > 0) || !std::isfinite(max)) return {0, 1};
  const double step = NiceStep(max / std::max(target, 1));
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    ticks.push_back(step * i);
    if (step * i >= max * (1 - 1e-9)) break;
  }
  return ticks;
}

TimeUnit AxisTimeUnit(double max_ns) {
  if (max_ns >= 1e9) return {1e9, "s"};
  if (max_ns >= 1e6) return {1e6, "ms"};
  if (max_ns >= 1e3) return {1e3, "\xC2\xB5s"};
  return {1, "ns"};
}

std::string AxisTimeLabel(double ns, TimeUnit unit) {
  double value = ns / unit.ns_per_unit;
  if (std::abs(value) < 1e-9) value = 0;  // no "-0"
  char text[64];
  std::snprintf(text, sizeof text, "%.4g %s", value, unit.name);
  return text;
}

std::string RenderStackedBarChart(const StackedBarChart &chart) {
  const double left = 64;
  const double right = 12;
  const double top = 12;
  const double bottom = chart.x_title.empty() ? 26 : 42;
  const double plot_width = chart.width - left - right;
  const double plot_height = chart.height - top - bottom;
  const double baseline = top + plot_height;

  double max_total = 0;
  for (const StackedBar &bar : chart.bars) {
    double total = 0;
    for (double value : bar.values) total += std::max(value, 0.0);
    max_total = std::max(max_total, total);
  }
  const std::vector<double> ticks = NiceTicks(max_total, 5);
  const double axis_max = ticks.back();
  const TimeUnit unit = AxisTimeUnit(axis_max);
  const auto y_of = [&](double value) { return baseline - plot_height * value / axis_max; };

  std::string svg = SvgOpen(chart.id, chart.description, chart.width, chart.height);
  svg += "<g class=\"grid\">";
  for (double tick : ticks) {
    svg += Line(left, y_of(tick), left + plot_width, y_of(tick), kGridColor, "gridline");
    svg += Text(left - 6, y_of(tick) + 4, "end", AxisTimeLabel(tick, unit));
  }
  svg += "</g>";

  const size_t count = chart.bars.size();
  const double slot = count > 0 ? plot_width / static_cast<double>(count) : plot_width;
  const double fill = count <= 40 ? 0.7 : count <= 150 ? 0.8 : count <= 300 ? 0.9 : 1.0;
  const double bar_width = std::max(slot * fill, 0.5);
  // Bars that touch would show seams where their anti-aliased edges meet.
  svg += fill >= 1.0 ? "<g class=\"bars\" shape-rendering=\"crispEdges\">" : "<g class=\"bars\">";
  for (size_t i = 0; i < count; ++i) {
    const StackedBar &bar = chart.bars[i];
    const double x = left + slot * static_cast<double>(i) + (slot - bar_width) / 2;
    svg += "<g class=\"" + HtmlEscape(chart.bar_class) + "\"" + bar.attributes + ">";
    svg += "<title>" + HtmlEscape(bar.tooltip) + "</title>";
    svg += "<rect class=\"hit\"" + Attr("x", left + slot * static_cast<double>(i)) +
           Attr("y", top) + Attr("width", slot) + Attr("height", plot_height) +
           " fill=\"transparent\"/>";
    double stacked = 0;
    for (size_t s = 0; s < bar.values.size() && s < chart.series.size(); ++s) {
      const double value = std::max(bar.values[s], 0.0);
      if (value <= 0) continue;
      const double y_top = y_of(stacked + value);
      const double y_bottom = y_of(stacked);
      stacked += value;
      svg += "<rect class=\"seg seg-" + HtmlEscape(chart.series[s].key) + "\"" + Attr("x", x) +
             Attr("y", y_top) + Attr("width", bar_width) +
             Attr("height", std::max(y_bottom - y_top, 0.0)) + " fill=\"" +
             HtmlEscape(chart.series[s].color) + "\"/>";
    }
    svg += "</g>";
  }
  svg += "</g>";

  // Labels under every k-th bar, k a round number that leaves room for about six characters.
  svg += "<g class=\"x-labels\">";
  size_t every = 1;
  const double label_room = 44;
  while (every < count && slot * static_cast<double>(every) < label_room) {
    every = static_cast<size_t>(NiceStep(static_cast<double>(every) + 0.5));
  }
  for (size_t i = 0; i < count; i += every) {
    const double center = left + slot * (static_cast<double>(i) + 0.5);
    svg += Line(center, baseline, center, baseline + 4, kAxisColor, "tickmark");
    svg += Text(center, baseline + 16, "middle", chart.bars[i].label);
  }
  svg += "</g>";
  svg += Line(left, baseline, left + plot_width, baseline, kAxisColor, "axis");
  if (!chart.x_title.empty()) {
    svg += Text(left + plot_width / 2, chart.height - 6, "middle", chart.x_title, "axis-title");
  }
  svg += "</svg>";
  return svg;
}

std::string RenderTimelineChart(const TimelineChart &chart) {
  const double left = 48;
  const double right = 12;
  const double top = 10;
  const double bottom = 26;
  const double plot_width = chart.width - left - right;
  const double plot_height = chart.height - top - bottom;
  const double baseline = top + plot_height;
  const size_t count = chart.values.size();
  const double span = std::max(chart.bucket_ns * static_cast<double>(count), 1.0);
  const double begin = chart.begin_ns;
  const double end = begin + span;
  const auto x_of = [&](double ns) { return left + plot_width * (ns - begin) / span; };
  const auto y_of = [&](double fraction) {
    return baseline - plot_height * std::clamp(fraction, 0.0, 1.0);
  };

  std::string svg = SvgOpen(chart.id, chart.description, chart.width, chart.height);
  svg += "<g class=\"grid\">";
  for (double tick : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    svg += Line(left, y_of(tick), left + plot_width, y_of(tick), kGridColor, "gridline");
    svg += Text(left - 6, y_of(tick) + 4, "end", std::to_string(std::lround(tick * 100)) + "%");
  }
  // Time ticks: round values inside [begin, end], labelled from the trace's beginning.
  const double step = NiceStep(span / 8);
  const TimeUnit unit = AxisTimeUnit(std::max(std::abs(end), std::abs(begin)));
  for (double tick = std::ceil(begin / step - 1e-9) * step; tick <= end + step * 1e-9;
       tick += step) {
    svg += Line(x_of(tick), baseline, x_of(tick), baseline + 4, kAxisColor, "tickmark");
    svg += Text(x_of(tick), baseline + 16, "middle", AxisTimeLabel(tick, unit));
  }
  svg += "</g>";

  svg += "<g class=\"step-marks\">";
  for (double mark : chart.marks_ns) {
    if (mark < begin || mark > end) continue;
    svg += Line(x_of(mark), top, x_of(mark), baseline, "#d0d7de", "step-mark");
  }
  svg += "</g>";

  if (count > 0) {
    // Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
    const std::string first_x = SvgNumber(x_of(begin));
    std::string line = "M";
    line.append(first_x).append(" ").append(SvgNumber(y_of(chart.values[0])));
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) line.append("V").append(SvgNumber(y_of(chart.values[i])));
      line.append("H").append(
          SvgNumber(x_of(begin + chart.bucket_ns * static_cast<double>(i + 1))));
    }
    std::string area = "M";
    area.append(first_x).append(" ").append(SvgNumber(baseline)).append("V");
    area.append(line, line.find(' ') + 1).append("V").append(SvgNumber(baseline)).append("Z");
    svg += "<path class=\"util-area\" d=\"" + area + "\" fill=\"" + HtmlEscape(chart.color) +
           "\" fill-opacity=\"0.18\" stroke=\"none\"/>";
    svg += "<path class=\"util-line\" d=\"" + line + "\" fill=\"none\" stroke=\"" +
           HtmlEscape(chart.color) + "\" stroke-width=\"1.5\" stroke-linejoin=\"round\"/>";
  }
  if (chart.mean) {
    svg += "<g class=\"util-mean\">" +
           Line(left, y_of(*chart.mean), left + plot_width, y_of(*chart.mean), "#24292f",
                "mean-line") +
           "<text class=\"mean-label\"" + Attr("x", left + plot_width - 4) +
           Attr("y", y_of(*chart.mean) - 4) +
           " text-anchor=\"end\" fill=\"#24292f\" stroke=\"#fff\" stroke-width=\"3\" "
           "paint-order=\"stroke\">mean " +
           FormatPercent(*chart.mean) + "</text></g>";
  }

  // Hover targets: each bucket's time and busy fraction.
  svg += "<g class=\"buckets\">";
  const TimeUnit hover_unit = AxisTimeUnit(std::max(std::abs(end), std::abs(begin)));
  for (size_t i = 0; i < count; ++i) {
    const double from = begin + chart.bucket_ns * static_cast<double>(i);
    svg += "<rect class=\"bucket\"" + Attr("x", x_of(from)) + Attr("y", top) +
           Attr("width", plot_width / static_cast<double>(count)) + Attr("height", plot_height) +
           " fill=\"transparent\"><title>" + AxisTimeLabel(from, hover_unit) + " \xE2\x80\x93 " +
           AxisTimeLabel(from + chart.bucket_ns, hover_unit) + ": " +
           FormatPercent(chart.values[i]) + " busy</title></rect>";
  }
  svg += "</g>";
  svg += Line(left, baseline, left + plot_width, baseline, kAxisColor, "axis");
  svg += "</svg>";
  return svg;
}

std::string RenderLineChart(const LineChart &chart) {
  const double left = 64;
  const double right = 12;
  const double top = 10;
  const double bottom = 26;
  const double plot_width = chart.width - left - right;
  const double plot_height = chart.height - top - bottom;
  const double baseline = top + plot_height;
  const auto format = [&](double value) {
    if (chart.format_value) return chart.format_value(value);
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", value);
    return std::string(text);
  };
  double begin = chart.begin_ns;
  double end = chart.end_ns;
  if (end <= begin && !chart.points.empty()) {
    begin = chart.points.front().ns;
    end = chart.points.back().ns;
  }
  const double span = std::max(end - begin, 1.0);
  double low = 0;
  double high = 0;
  for (const LinePoint &point : chart.points) {
    low = std::min(low, point.value);
    high = std::max(high, point.value);
  }
  // Ticks from 0 up (and down, for values below 0), round in the chart's own units.
  double tick_unit = 1;
  if (chart.binary_ticks) {
    while (tick_unit * 1024 <= std::max(high, -low)) tick_unit *= 1024;
  }
  std::vector<double> up = NiceTicks(high / tick_unit, 4);
  for (double &tick : up) tick *= tick_unit;
  const double tick_step = up.size() > 1 ? up[1] - up[0] : 1;
  const double bottom_value = low < 0 ? -std::ceil(-low / tick_step - 1e-9) * tick_step : 0;
  const double top_value = up.back();
  const double range = std::max(top_value - bottom_value, 1e-9);
  const auto x_of = [&](double ns) {
    return left + plot_width * (std::clamp(ns, begin, begin + span) - begin) / span;
  };
  const auto y_of = [&](double value) {
    return baseline - plot_height * (std::clamp(value, bottom_value, top_value) - bottom_value) /
                          range;
  };

  std::string svg = SvgOpen(chart.id, chart.description, chart.width, chart.height);
  svg += "<g class=\"grid\">";
  for (double tick = bottom_value; tick <= top_value + tick_step * 1e-9; tick += tick_step) {
    svg += Line(left, y_of(tick), left + plot_width, y_of(tick), kGridColor, "gridline");
    svg += Text(left - 6, y_of(tick) + 4, "end", format(tick));
  }
  const double time_step = NiceStep(span / 8);
  const TimeUnit unit = AxisTimeUnit(std::max(std::abs(begin + span), std::abs(begin)));
  for (double tick = std::ceil(begin / time_step - 1e-9) * time_step;
       tick <= begin + span + time_step * 1e-9; tick += time_step) {
    svg += Line(x_of(tick), baseline, x_of(tick), baseline + 4, kAxisColor, "tickmark");
    svg += Text(x_of(tick), baseline + 16, "middle", AxisTimeLabel(tick, unit));
  }
  svg += "</g><g class=\"step-marks\">";
  for (double mark : chart.marks_ns) {
    if (mark < begin || mark > begin + span) continue;
    svg += Line(x_of(mark), top, x_of(mark), baseline, "#d0d7de", "step-mark");
  }
  svg += "</g>";

  const size_t count = chart.points.size();
  if (count > 0) {
    std::string line = "M";
    line.append(SvgNumber(x_of(chart.points[0].ns)))
        .append(" ")
        .append(SvgNumber(y_of(chart.points[0].value)));
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) line.append("V").append(SvgNumber(y_of(chart.points[i].value)));
      const double until = i + 1 < count ? chart.points[i + 1].ns : begin + span;
      line.append("H").append(SvgNumber(x_of(until)));
    }
    svg += "<path class=\"line-path\" d=\"" + line + "\" fill=\"none\" stroke=\"" +
           HtmlEscape(chart.color) + "\" stroke-width=\"1.5\" stroke-linejoin=\"round\"/>";
  }
  if (chart.peak_ns) {
    svg += Line(x_of(*chart.peak_ns), top, x_of(*chart.peak_ns), baseline, "#e03131", "peak-mark");
  }
  svg += "<g class=\"points\">";
  for (size_t i = 0; i < count; ++i) {
    const double from = chart.points[i].ns;
    const double until = i + 1 < count ? chart.points[i + 1].ns : begin + span;
    svg += "<rect class=\"point\"" + Attr("x", x_of(from)) + Attr("y", top) +
           Attr("width", std::max(x_of(until) - x_of(from), 0.0)) + Attr("height", plot_height) +
           " fill=\"transparent\"><title>" + AxisTimeLabel(from, unit) + ": " +
           HtmlEscape(format(chart.points[i].value)) + "</title></rect>";
  }
  svg += "</g>";
  svg += Line(left, baseline, left + plot_width, baseline, kAxisColor, "axis");
  svg += "</svg>";
  return svg;
}

}  // namespace tfprof::cli
