// Every kind of bad input gets a defined result (a negative code with a message, or a documented
// no-op), never a crash, and what was collected survives it.
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <unistd.h>

#include <string>

#include <doctest/doctest.h>

#include "integration/trace_reader.h"
#include "tfprof/tfprof.h"

using tfprof_test::Json;

namespace {

std::string LastError() { return prof_last_error(); }

}  // namespace

TEST_CASE("bad input: stop, export and stats before any session") {
  // Each test case runs in its own process (ctest), so no session has run here yet.
  CHECK(prof_stop() == PROF_ENOTSTARTED);
  CHECK(LastError().find("no profiling session is running") != std::string::npos);
  const std::string path = tfprof_test::TempPath("nothing.json");
  CHECK(prof_export(path.c_str()) == PROF_ENODATA);
  CHECK(access(path.c_str(), F_OK) != 0);
  prof_stats_t stats = {};
  stats.struct_size = sizeof stats;
  CHECK(prof_get_stats(&stats) == PROF_ENODATA);
  // Hot-path calls without a session do nothing.
  prof_span_begin("ignored");
  prof_span_end();
  prof_begin_step(1);
  prof_end_step();
  prof_instant("ignored");
  prof_counter("ignored", 1.0);
  CHECK(prof_is_running() == 0);
}

TEST_CASE("bad input: option strings are rejected with the key, offset and reason") {
  struct Case {
    const char *options;
    const char *expected_text;
  };
  const Case cases[] = {
      {"bogus=1", "option 'bogus' at offset 0: unknown key"},
      {"buffer_events=64,bogus=1", "option 'bogus' at offset 17"},
      {"buffer_events=abc", "'abc' is not an integer"},
      {"buffer_events=0", "is not an integer in [16, 67108864]"},
      {"buffer_events=-5", "is not an integer"},
      {"buffer_events=99999999999999999999", "is not an integer"},
      {"buffer_events", "expected key=value"},
      {"=5", "empty key"},
      {"output=", "empty path"},
      {"output=trace.txt", "extension '.txt' names no supported format"},
      {"output=trace", "no extension"},
      {"clock=sundial", "'sundial' is not one of auto, tsc, monotonic"},
      {"flush_interval_ms=-1", "is not an integer in [0, 60000]"},
      {"buffer_events=64,buffer_events=128", "given twice"},
  };
  for (const Case &bad : cases) {
    CAPTURE(bad.options);
    CHECK(prof_start(bad.options) == PROF_EOPTION);
    CHECK(LastError().find(bad.expected_text) != std::string::npos);
    CHECK(LastError().rfind("prof_start: ", 0) == 0);
    CHECK(prof_is_running() == 0);
  }
  // Tolerated: spaces around keys and values, empty items.
  CHECK(prof_start(" buffer_events = 64 ,, flush_interval_ms=0 ,") == PROF_OK);
  CHECK(LastError().empty());
  CHECK(prof_stop() == PROF_OK);
}

TEST_CASE("bad input: double start leaves the running session untouched") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_span_begin("survivor");
  prof_span_end();
  CHECK(prof_start(nullptr) == PROF_EALREADY);
  CHECK(prof_start("bogus=1") == PROF_EOPTION);
  CHECK(prof_is_running() == 1);
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(prof_stop() == PROF_ENOTSTARTED);
  CHECK(tfprof_test::CurrentStats().events_recorded == 2);
}

TEST_CASE("bad input: unmatched ends and nested steps are defined no-ops, counted") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_span_end();
  prof_span_end();
  prof_end_step();
  prof_begin_step(1);
  prof_begin_step(2);  // nested begin: ends step 1 first
  prof_end_step();
  prof_end_step();  // no open step
  prof_span_begin("ok");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.unmatched_span_ends == 2);
  CHECK(stats.unmatched_step_ends == 2);
  CHECK(stats.events_recorded == 5);  // two step begins, a step end, a span
  const Json trace = tfprof_test::ExportedTrace("steps.json");
  CHECK(trace["tfprof"]["unmatched_span_ends"] == 2);
  CHECK(trace["tfprof"]["unmatched_step_ends"] == 2);
  std::vector<std::string> steps;
  for (const Json &span : tfprof_test::EventsWithPhase(trace, "X")) {
    if (span["cat"] == "step") steps.push_back(span["name"]);
  }
  CHECK(steps == std::vector<std::string>{"step 1", "step 2"});
}

TEST_CASE("bad input: NULL and empty names are recorded as (unnamed)") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_span_begin(nullptr);
  prof_span_end();
  prof_span_begin("");
  prof_span_end();
  prof_counter(nullptr, 1.0);
  prof_set_thread_name(nullptr);
  REQUIRE(prof_stop() == PROF_OK);
  const Json trace = tfprof_test::ExportedTrace("unnamed.json");
  const auto spans = tfprof_test::EventsWithPhase(trace, "X");
  REQUIRE(spans.size() == 2);
  CHECK(spans[0]["name"] == "(unnamed)");
  CHECK(spans[1]["name"] == "(unnamed)");
  CHECK(tfprof_test::EventsWithPhase(trace, "C").at(0)["name"] == "(unnamed)");
}

TEST_CASE("bad input: failed exports lose nothing and leave no file behind") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_span_begin("precious");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);

  CHECK(prof_export(nullptr) == PROF_EINVAL);
  CHECK(LastError().find("NULL or empty") != std::string::npos);
  CHECK(prof_export("") == PROF_EINVAL);
  CHECK(prof_export("/tmp/trace.csv") == PROF_EFORMAT);
  CHECK(LastError().find("'.csv'") != std::string::npos);
  CHECK(prof_export("/nonexistent_dir_for_tfprof/x.json") == PROF_EIO);
  CHECK(LastError().find("/nonexistent_dir_for_tfprof/x.json") != std::string::npos);
  CHECK(LastError().find("No such file or directory") != std::string::npos);

  // A log directory under a regular file, and a read-only directory.
  const std::string plain_file = tfprof_test::TempPath("plain_file.json");
  REQUIRE(prof_export(plain_file.c_str()) == PROF_OK);
  CHECK(prof_export((plain_file + "/logs/").c_str()) == PROF_EIO);
  CHECK(LastError().find("cannot create TensorBoard log directory") != std::string::npos);
  CHECK(LastError().find("Not a directory") != std::string::npos);
  if (geteuid() != 0) {  // root writes anywhere
    const std::string locked = tfprof_test::TempPath("locked");
    REQUIRE(mkdir(locked.c_str(), 0555) == 0);
    CHECK(prof_export((locked + "/trace.json").c_str()) == PROF_EIO);
  }
  const std::string good = tfprof_test::TempPath("good.json");
  REQUIRE(prof_export(good.c_str()) == PROF_OK);
  CHECK(tfprof_test::EventsWithPhase(tfprof_test::ReadTrace(good), "X").at(0)["name"] == "precious");
  CHECK(LastError().empty());
}

TEST_CASE("bad input: a write that fails half-way removes the partial file") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  for (int index = 0; index < 20000; ++index) {
    prof_span_begin("fills_more_than_the_file_size_limit");
    prof_span_end();
  }
  REQUIRE(prof_stop() == PROF_OK);
  // A file size limit makes write() fail with EFBIG once the file reaches 64 KiB.
  signal(SIGXFSZ, SIG_IGN);
  rlimit original = {};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &original) == 0);
  rlimit limited = original;
  limited.rlim_cur = 64 * 1024;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
  const std::string path = tfprof_test::TempPath("too_big.json");
  const int result = prof_export(path.c_str());
  const std::string error = LastError();
  REQUIRE(setrlimit(RLIMIT_FSIZE, &original) == 0);
  CHECK(result == PROF_EIO);
  CHECK(error.find("cannot write") != std::string::npos);
  CHECK(error.find("File too large") != std::string::npos);
  const std::string directory = path.substr(0, path.rfind('/'));
  DIR *listing = opendir(directory.c_str());
  REQUIRE(listing != nullptr);
  int entries = 0;
  while (dirent *entry = readdir(listing)) {
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") ++entries;
  }
  closedir(listing);
  CHECK(entries == 0);  // neither the final file nor the temporary one
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  CHECK(tfprof_test::EventsWithPhase(tfprof_test::ReadTrace(path), "X").size() == 20000);
}

TEST_CASE("bad input: an empty session exports a valid, empty trace") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  REQUIRE(prof_stop() == PROF_OK);
  const Json trace = tfprof_test::ExportedTrace("empty.json");
  CHECK(tfprof_test::EventsWithPhase(trace, "X").empty());
  CHECK(trace["dropped_events"] == 0);
  CHECK(tfprof_test::EventsWithPhase(trace, "M").size() == 2);  // process name and sort index
}

TEST_CASE("bad input: prof_get_stats checks its argument") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  CHECK(prof_get_stats(nullptr) == PROF_EINVAL);
  prof_stats_t stats = {};
  stats.struct_size = 8;  // too small for any version of the struct
  CHECK(prof_get_stats(&stats) == PROF_EINVAL);
  CHECK(LastError().find("struct_size 8") != std::string::npos);
  REQUIRE(prof_stop() == PROF_OK);
}

TEST_CASE("bad input: prof_strerror knows every code and tolerates unknown ones") {
  for (int code = PROF_EINTERNAL; code <= PROF_OK; ++code) {
    CAPTURE(code);
    CHECK(std::string(prof_strerror(code)) != "unknown error code");
  }
  CHECK(std::string(prof_strerror(12345)) == "unknown error code");
  CHECK(std::string(prof_strerror(-12345)) == "unknown error code");
}
