// What every exporter needs besides the trace model: who the process is, when the session ran,
// and how much was lost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/session/session_log.h"

namespace tfprof {

struct ExportContext {
  int64_t pid = 0;
  std::string process_name;
  std::vector<std::string> command_line;  // argv as /proc/self/cmdline had it at start
  TickConverter converter;
  int64_t start_wall_ns = 0;       // CLOCK_REALTIME at session start
  int64_t start_monotonic_ns = 0;  // CLOCK_MONOTONIC at the same instant
  int64_t end_ns = 0;              // CLOCK_MONOTONIC at stop (or at export while running)
  ClockSource clock = ClockSource::kMonotonic;
  uint64_t events_recorded = 0;
  LossCounters losses;
  bool tensorboard_profile = true;  // a log directory gets the Profile tab's XPlane too
};

}  // namespace tfprof
