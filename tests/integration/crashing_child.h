// A program that crashes in the middle of a step, for the tests that check what a streamed output
// keeps when nothing gets to call prof_stop().
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "tfprof/tfprof.h"

namespace tfprof_test {

// Forks a child that streams to `path` (the collector running every millisecond): steps 1 to
// `finished_steps` with one span "work" each, a pause of a few collector cycles, then one more
// step with a span "crashing" left open, and abort(). Returns once the child died of SIGABRT.
inline void RunChildThatCrashes(const std::string &path, int64_t finished_steps = 3) {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (prof_start(("flush_interval_ms=1,output=" + path).c_str()) != PROF_OK) _exit(2);
    for (int64_t step = 1; step <= finished_steps; ++step) {
      prof_begin_step(step);
      prof_span_begin("work");
      prof_span_end();
      prof_end_step();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    prof_begin_step(finished_steps + 1);
    prof_span_begin("crashing");
    signal(SIGABRT, SIG_DFL);
    abort();
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}

}  // namespace tfprof_test
