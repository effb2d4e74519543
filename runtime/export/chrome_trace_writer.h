// Chrome trace JSON (the format Perfetto UI and chrome://tracing open), streamed to a sink.
#pragma once

#include "absl/status/status.h"
#include "runtime/export/export_context.h"
#include "runtime/export/output_sink.h"
#include "runtime/session_log.h"

namespace tfprof {

// Writes {"displayTimeUnit":"ns","dropped_events":N,"tfprof":{...},"traceEvents":[...]}:
// process and thread names and sort indices, one row per thread with its spans (X), instants
// (i) and counters (C), and a row of "step N" spans per thread that marked steps. Times are
// CLOCK_MONOTONIC microseconds with three decimals. Returns the sink's error if writing failed.
absl::Status WriteChromeTrace(const SessionLog &model, const ExportContext &context,
                              OutputSink &sink);

}  // namespace tfprof
