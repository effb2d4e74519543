// The scalars an event file carries per step for TensorBoard's Scalars tab (x axis: the step):
//   tfprof/step_time_ms                        the step's wall time
//   tfprof/counter/NAME (or NAME/SERIES)       a counter's last value in the step
//   tfprof/memory/LABEL/peak_bytes             a device's most bytes in use in the step
// Counters about memory are the memory tags' (runtime/model/memory_series.h, IsMemoryCounter).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof {

// Per step of `trace` (indexed as trace.steps), its scalars as (tag, value), step time first.
std::vector<std::vector<std::pair<std::string, double>>> StepScalars(const Trace &trace);

}  // namespace tfprof
