// `tfprof report`'s page: a TraceSummary rendered as one self-contained HTML file. Inline CSS,
// charts as inline SVG, a few lines of inline script that only sort tables; no external resource
// of any kind (a Content-Security-Policy forbids them), so it opens offline and can be mailed.
//
// Stable hooks for tests and scripts: <section id="overview|diagnosis|step-time|step-timelines|
// gpu-utilization|top-ops|top-kernels|gpu-time-by-op|streams|idle-gaps|copies|memory|counters|
// losses"> (docs/cli.md lists the figures' classes), <article class="finding"
// data-kind="input_bound">, <svg id="step-chart"> with one <g class="step-bar" data-step="N"> per
// step (or, past max_step_bars, <g class="step-bar step-group" data-first-step data-last-step
// data-steps> per group of consecutive steps), rectangles of class "seg seg-CATEGORY",
// <table id="step-table|top-ops-self|top-ops-total|top-kernels|devices|streams|idle-gap-table|
// copy-table|loss-table">, <figure class="util-chart" data-device="D"> with <path class=
// "util-line">, and <p id="no-gpu"> / <p id="no-steps"> when there is nothing to draw.
#pragma once

#include <cstddef>
#include <string>

#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

struct HtmlReportOptions {
  // At most this many bars in the step chart; more steps are drawn as groups of consecutive
  // steps (each bar their mean), and the page says so.
  size_t max_step_bars = 500;
  // At most this many rows in the step table; past it, the longest steps (in step order), and
  // the page says so.
  size_t max_step_rows = 1000;
  // "tfprof 0.1.0": who made the page (the footer).
  std::string generator = "tfprof";
  // The trace the summary was made of, when at hand: the median and the slowest step are drawn
  // from it as timelines (section "step-timelines"). Null: no timelines.
  const Trace *trace = nullptr;
};

std::string RenderHtmlReport(const TraceSummary &summary, const HtmlReportOptions &options);

}  // namespace tfprof::cli
