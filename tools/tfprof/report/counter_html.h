// The report's Counters section: one chart per counter that is not about memory (the Memory
// section draws those), its values over the trace (TraceSummary::counters, counter_series.h).
#pragma once

#include <string>

#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

// The section's body (its <section> and heading are the report's), as HTML: <figure
// class="counter-chart" data-counter="NAME" data-series="SERIES" data-samples="N"> per counter.
std::string RenderCounterSection(const TraceSummary &summary);

}  // namespace tfprof::cli
