// The report's Counters section: one chart per counter that is not about memory (the Memory
// section draws those), its values over the trace (TraceSummary::counters, counter_series.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/tfprof/analysis/trace_summary.h"
#include "tools/tfprof/report/svg_charts.h"

namespace tfprof::cli {

// The section's body (its <section> and heading are the report's), as HTML: <figure
// class="counter-chart" data-counter="NAME" data-series="SERIES" data-samples="N"> per counter.
std::string RenderCounterSection(const TraceSummary &summary);

// A counter's chart points, relative to `begin_ns` (the trace's, as its timeline's slices are):
// per slice its lowest and highest value in the order they were sampled, the first at the
// slice's start and the second at its middle; a slice of one value is one point.
std::vector<LinePoint> CounterLinePoints(const CounterSeries &counter, int64_t begin_ns,
                                         int64_t end_ns);

}  // namespace tfprof::cli
