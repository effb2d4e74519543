// Putting a list of intervals in begin order, as the union of a trace's activities needs, in the
// orders traces come in:
//   - in order already (one stream, or a file sorted by time);
//   - a few sorted runs one after another: a device's streams, each unioned on its own, or a
//     `.pftrace` whose packets come a stream at a time. std::sort is at its worst here: two
//     interleaved runs of evenly spaced kernels send its quicksort to the heapsort fallback;
//   - nearly in order: a file that lists a step's copy after its kernels;
//   - in no order.
#pragma once

#include <span>

#include "tools/tfprof/analysis/intervals.h"

namespace tfprof::cli {

// Sorts `intervals` by begin (the order of equal begins is unspecified). Uses at most 1 MiB
// beside the list.
void SortByBegin(std::span<Interval> intervals);

}  // namespace tfprof::cli
