// `tfprof summary`'s terminal output: the TraceSummary as aligned tables, ending with the
// diagnosis.
#pragma once

#include <cstddef>
#include <string>

#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

struct TextOptions {
  size_t step_rows = 20;  // steps listed one per row; the rest are in the totals (and --json)
  size_t name_width = 56;  // longer names are cut with "..." (--json has them whole)
};

std::string SummaryToText(const TraceSummary &summary, const TextOptions &options);

}  // namespace tfprof::cli
