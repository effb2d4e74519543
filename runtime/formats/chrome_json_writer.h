// A Trace as Chrome trace JSON in the layout tfprof's runtime writes (docs/chrome-trace.md):
// the "tfprof" header object with the wall-clock origin, one process per process of the trace
// (its pid, name and order), a "Steps" row per process that has steps, one row per thread or
// stream, PyTorch-profiler categories, async ranges as "b"/"e" pairs.
#pragma once

#include <string>

#include "runtime/model/trace.h"
#include "runtime/formats/counting_sink.h"

namespace tfprof {

// Rows no thread can have (Linux tids stay below 2^22), as the runtime numbers them: each
// process's Steps row, and a thread whose (pid, tid) another row of the trace already took.
inline constexpr int64_t kStepsRowTid = 2000000000;
inline constexpr int64_t kRenumberedRowTidBase = 1000000000;

// Writes `trace` with its timestamps as they are (nanoseconds on its own clock, written as
// microseconds with three decimals). `sources_json` becomes "tfprof"."sources" when not empty:
// what the trace was made from.
void WriteChromeJson(const Trace &trace, const std::string &sources_json, CountingSink &out);

}  // namespace tfprof
