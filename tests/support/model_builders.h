// The trace model's structs with the fields tests set most often (the others keep their
// defaults), for tests that build a Trace by hand.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/model/trace.h"

namespace tfprof_test {

inline tfprof::Process ProcessOf(int64_t pid, const std::string &name) {
  tfprof::Process process;
  process.pid = pid;
  process.name = name;
  return process;
}

inline tfprof::Step StepOf(int64_t number, int64_t begin_ns, int64_t end_ns, uint32_t process) {
  tfprof::Step step;
  step.number = number;
  step.begin_ns = begin_ns;
  step.end_ns = end_ns;
  step.process = process;
  return step;
}

inline tfprof::Track TrackOf(uint32_t process, int64_t tid, const std::string &name,
                             tfprof::TrackKind kind, int32_t device, int64_t stream) {
  tfprof::Track track;
  track.process = process;
  track.tid = tid;
  track.name = name;
  track.kind = kind;
  track.device = device;
  track.stream = stream;
  return track;
}

}  // namespace tfprof_test
