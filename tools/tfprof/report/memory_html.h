// The report's Memory section: per device and source, a chart of bytes in use over the trace
// (RenderLineChart), the peak, each step's peak and the top-level ops holding the most at the
// peak (TraceSummary::memory, tools/tfprof/analysis/memory_usage.h).
#pragma once

#include <string>

#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

// The section's body (its <section> and heading are the report's), as HTML.
std::string RenderMemorySection(const TraceSummary &summary);

}  // namespace tfprof::cli
