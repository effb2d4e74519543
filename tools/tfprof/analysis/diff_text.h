// `tfprof diff`'s terminal output: the headline, then one aligned table per comparison.
#pragma once

#include <cstddef>
#include <string>

#include "tools/tfprof/analysis/trace_diff.h"

namespace tfprof::cli {

struct DiffTextOptions {
  size_t rows = 10;        // rows per op and kernel table (--top); --json has them all
  size_t name_width = 56;  // longer names are cut with "..."
};

std::string DiffToText(const TraceDiff &diff, const DiffTextOptions &options);

}  // namespace tfprof::cli
