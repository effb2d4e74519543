// The HTML report's charts, drawn as inline SVG by this code: no script, no fonts, no external
// resource. A chart scales to its container's width (viewBox); hovering a bar or a stretch of
// time shows its figures through an SVG <title>, which needs no script either.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tfprof::cli {

// One part of a stacked bar, bottom first. `key` becomes the class "seg-KEY" of its rectangles.
struct ChartSeries {
  std::string key;
  std::string label;
  std::string color;  // a CSS color
};

struct StackedBar {
  std::string attributes;  // added to the bar's <g> as they are: ` data-step="3"` (escaped already)
  std::string label;       // the x-axis label (plain text)
  std::string tooltip;     // plain text; lines separated by '\n'
  std::vector<double> values;  // one per series, in nanoseconds
};

struct StackedBarChart {
  std::string id;           // the <svg>'s id
  std::string description;  // its aria-label (plain text)
  std::string bar_class = "bar";  // each bar's <g> has this class
  std::string x_title;
  std::vector<ChartSeries> series;
  std::vector<StackedBar> bars;
  double width = 1100;
  double height = 300;
};

// Bars side by side, their height the sum of their values, with a time axis on the left.
std::string RenderStackedBarChart(const StackedBarChart &chart);

// A busy fraction (0..1) over time, as a step line over a filled area.
struct TimelineChart {
  std::string id;
  std::string description;
  std::string color = "#1c7ed6";
  std::vector<double> values;  // one per bucket
  double begin_ns = 0;         // bucket 0's start, relative to the axis origin (the trace's begin)
  double bucket_ns = 0;
  std::optional<double> mean;  // drawn as a dashed line when set
  std::vector<double> marks_ns;  // thin vertical lines (step starts), same origin as begin_ns
  double width = 1100;
  double height = 180;
};

std::string RenderTimelineChart(const TimelineChart &chart);

// A quantity over time (memory in use, a counter's value) as a step line: each point's value
// holds until the next point (the last one's until end_ns). One line per chart; the memory
// section and the counters section of the report both draw with it.
struct LinePoint {
  double ns = 0;  // relative to the axis origin (the trace's begin)
  double value = 0;
};

struct LineChart {
  std::string id;
  std::string description;  // its aria-label (plain text)
  std::string color = "#1c7ed6";
  std::vector<LinePoint> points;  // in time order
  double begin_ns = 0;  // the time axis, same origin as the points; when end_ns <= begin_ns,
  double end_ns = 0;    // the points' own extent
  // A value as the axis and the hover text show it (FormatBytes for memory); null: a plain
  // number.
  std::function<std::string(double)> format_value;
  // Ticks round in powers of 1024 (256 MiB, 1 GiB) rather than of ten: for bytes.
  bool binary_ticks = false;
  std::vector<double> marks_ns;  // thin vertical lines (step starts)
  std::optional<double> peak_ns;  // where to mark the highest value, when set
  double width = 1100;
  double height = 180;
};

// The line is a <path class="line-path"> with one horizontal segment ("H") per point; each point
// has a hover target <rect class="point"> whose <title> gives its time and value.
std::string RenderLineChart(const LineChart &chart);

// Round tick values from 0 to at least `max`: about `target` steps of 1, 2 or 5 times a power
// of ten. Never empty; the last tick is >= max.
std::vector<double> NiceTicks(double max, int target);

// A time axis's unit for values up to `max_ns`: {divisor, name}, e.g. {1e6, "ms"}.
struct TimeUnit {
  double ns_per_unit;
  const char *name;
};
TimeUnit AxisTimeUnit(double max_ns);
// "250 ms", "1.5 s": a tick's label in `unit` (no needless decimals).
std::string AxisTimeLabel(double ns, TimeUnit unit);

}  // namespace tfprof::cli
