// GPU tracing where it cannot run: this machine (and CI's) has libcupti from the CUDA toolkit but
// no NVIDIA driver. cuda=auto warns once, naming the cause, and still writes the host trace with
// the reason in it; cuda=on fails prof_start cleanly; cuda=off says nothing.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <doctest/doctest.h>

#include "integration/trace_reader.h"
#include "support/test_files.h"
#include "tfprof/tfprof.h"

using tfprof_test::Json;

namespace {

// Whether the fallback can be observed here: with a driver, GPU tracing may start for real
// (tests/gpu covers that).
bool HasCudaDriver() {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver != nullptr) dlclose(driver);
  return driver != nullptr;
}

// Runs `body` with stderr sent to a file; returns what it wrote there.
template <typename Body>
std::string CaptureStderr(Body &&body) {
  const std::string path = tfprof_test::TempPath("stderr.txt");
  std::fflush(stderr);
  const int saved = dup(2);
  const int file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(file >= 0);
  dup2(file, 2);
  close(file);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  return tfprof_test::ReadFileBytes(path);
}

size_t Count(const std::string &text, const std::string &part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("gpu fallback: cuda=auto without a driver warns once and still writes the host trace") {
  if (HasCudaDriver()) {
    MESSAGE("skipped: a CUDA driver is present here, so GPU tracing may start (tests/gpu covers it)");
    return;
  }
  const std::string path = tfprof_test::TempPath("auto.json");
  const std::string warnings = CaptureStderr([&] {
    REQUIRE(prof_start(("cuda=auto,output=" + path).c_str()) == PROF_OK);
    prof_begin_step(1);
    prof_span_begin("train:Step");
    prof_span_end();
    prof_end_step();
    const prof_stats_t stats = tfprof_test::CurrentStats();
    CHECK(stats.gpu_state == PROF_GPU_UNAVAILABLE);
    CHECK(stats.gpu_records == 0);
    REQUIRE(prof_stop() == PROF_OK);
    // A second session with the same cause: no second warning.
    REQUIRE(prof_start("cuda=auto") == PROF_OK);
    REQUIRE(prof_stop() == PROF_OK);
  });
  // One line, naming the cause and what to do.
  CHECK(Count(warnings, "tfprof: warning: GPU tracing is off") <= 1);
  if (Count(warnings, "tfprof: warning") == 1) {
    CHECK(warnings.find("no CUDA driver") != std::string::npos);
    CHECK(warnings.find("cuda=off") != std::string::npos);
  } else {
    // Another test in this process already warned for this cause.
    CHECK(warnings.empty());
  }

  const Json trace = tfprof_test::ReadTrace(path);
  const Json &gpu = trace["tfprof"]["gpu"];
  CHECK(gpu["state"] == "unavailable");
  CHECK(gpu["reason"].get<std::string>().find("no CUDA driver") != std::string::npos);
  CHECK(gpu["cupti"].get<std::string>().find("libcupti.so") != std::string::npos);
  CHECK(gpu["kernels"] == 0);
  int spans = 0;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["name"] == "train:Step") ++spans;
    CHECK(event.value("cat", "") != "kernel");
  }
  CHECK(spans == 1);
}

TEST_CASE("gpu fallback: cuda=on without a driver fails prof_start with PROF_ENOGPU and a reason") {
  if (HasCudaDriver()) {
    MESSAGE("skipped: a CUDA driver is present here (tests/gpu covers cuda=on)");
    return;
  }
  CHECK(prof_start("cuda=on") == PROF_ENOGPU);
  CHECK(prof_is_running() == 0);
  const std::string error = prof_last_error();
  CHECK(error.find("cuda=on") != std::string::npos);
  CHECK(error.find("no CUDA driver") != std::string::npos);
  CHECK(std::string(prof_strerror(PROF_ENOGPU)).find("cuda=on") != std::string::npos);
  // Nothing was started: a host-only session starts normally afterwards.
  REQUIRE(prof_start("cuda=off") == PROF_OK);
  REQUIRE(prof_stop() == PROF_OK);
}

TEST_CASE("gpu fallback: a cupti_path that does not exist is named, never replaced by another") {
  CHECK(prof_start("cuda=on,cupti_path=/nonexistent/libcupti.so.13") == PROF_ENOGPU);
  const std::string error = prof_last_error();
  CHECK(error.find("/nonexistent/libcupti.so.13") != std::string::npos);
  CHECK(error.find("TFPROF_CUPTI_PATH") != std::string::npos);
  CHECK(prof_is_running() == 0);
}

TEST_CASE("gpu fallback: cuda=off traces the host without a warning and says so in the trace") {
  const std::string path = tfprof_test::TempPath("off.json");
  const std::string warnings = CaptureStderr([&] {
    REQUIRE(prof_start(("cuda=off,output=" + path).c_str()) == PROF_OK);
    prof_instant("tick");
    CHECK(tfprof_test::CurrentStats().gpu_state == PROF_GPU_OFF);
    REQUIRE(prof_stop() == PROF_OK);
  });
  CHECK(warnings.empty());
  const Json trace = tfprof_test::ReadTrace(path);
  CHECK(trace["tfprof"]["gpu"]["state"] == "off");
}

TEST_CASE("gpu fallback: GPU options are checked, naming the key and what it accepts") {
  struct Case {
    const char *options;
    const char *expected;
  };
  for (const Case &bad : {Case{"cuda=maybe", "auto, on, off"},
                          Case{"cupti_buffers=1", "[2, 4096]"},
                          Case{"cupti_buffer_kb=8", "[64, 262144]"},
                          Case{"cuda_sync=maybe", "on, off"},
                          Case{"cuda_queries=maybe", "on, off"},
                          Case{"gpu_wait_ms=-1", "[0, 600000]"},
                          Case{"cupti_path=", "empty path"}}) {
    INFO(bad.options);
    CHECK(prof_start(bad.options) == PROF_EOPTION);
    CHECK(std::string(prof_last_error()).find(bad.expected) != std::string::npos);
    CHECK(prof_is_running() == 0);
  }
}

TEST_CASE("gpu fallback: a 0.1-sized prof_stats_t still works and its GPU fields stay untouched") {
  REQUIRE(prof_start("cuda=off") == PROF_OK);
  REQUIRE(prof_stop() == PROF_OK);
  prof_stats_t stats;
  std::memset(&stats, 0x5a, sizeof stats);
  stats.struct_size = 64;  // what a caller built against 0.1 passes
  REQUIRE(prof_get_stats(&stats) == PROF_OK);
  CHECK(stats.struct_size == 64);
  CHECK(stats.running == 0);
  CHECK(stats.gpu_state == 0x5a5a5a5a);  // beyond the caller's struct: not written
}
