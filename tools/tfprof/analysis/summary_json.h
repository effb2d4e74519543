// `tfprof summary --json`: the TraceSummary as data. Times are in nanoseconds (keys end in _ns),
// fractions in [0, 1]; the schema is documented in docs/cli.md.
#pragma once

#include <string>
#include <vector>

#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {

// An input that could not be read at all.
struct UnreadTrace {
  std::string path;
  std::string error;
};

// {"tfprof_summary_version":1,"traces":[{...one per summary...}],
//  "errors":[{"path":...,"error":...}, one per input that could not be read]}
std::string SummariesToJson(const std::vector<TraceSummary> &summaries,
                            const std::vector<UnreadTrace> &unread = {});

}  // namespace tfprof::cli
