// The export context the tests write with: one process, "trainer" with pid 4242, on the
// monotonic clock (one tick is one nanosecond, so expected times are easy to state).
#pragma once

#include "runtime/collector/clock.h"
#include "runtime/export/export_context.h"

namespace tfprof_test {

inline constexpr int64_t kTrainerPid = 4242;

// Its converter starts now; the caller sets the session's times and losses it needs.
inline tfprof::ExportContext TrainerContext() {
  tfprof::ExportContext context;
  context.pid = kTrainerPid;
  context.process_name = "trainer";
  context.clock = tfprof::ClockSource::kMonotonic;
  context.converter = tfprof::TickConverter::Start(tfprof::ClockSource::kMonotonic);
  return context;
}

}  // namespace tfprof_test
