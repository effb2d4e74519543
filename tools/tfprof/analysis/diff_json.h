// `tfprof diff --json`: the TraceDiff as data. Keys are stable and documented in docs/cli.md:
// {"tfprof_diff_version":1,"a":{side},"b":{side},"whole_trace":bool,"headline":"...",
//  "sections":[{"key":"op_self","title":...,"per_step":bool,"rows":[{row},...]},...]}.
// Times are nanoseconds (per step where the section's per_step says so), with at most three
// decimals; a figure missing on a side is null.
#pragma once

#include <string>

#include "tools/tfprof/analysis/trace_diff.h"

namespace tfprof::cli {

std::string DiffToJson(const TraceDiff &diff);

}  // namespace tfprof::cli
