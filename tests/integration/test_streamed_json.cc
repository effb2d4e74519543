// output=TRACE.json streams: the file is a complete Chrome trace after every step the collector
// writes (parsed here with a real JSON parser while the session runs), and a program that dies
// keeps the steps it finished.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "integration/crashing_child.h"
#include "integration/trace_reader.h"
#include "support/test_files.h"
#include "tfprof/tfprof.h"

namespace {

using tfprof_test::Json;
using tfprof_test::TempDir;

// The file's content when no write is under way: a read that overlaps one of the session's
// writes can see part of it (the kernel copies pages without the writer's lock), so the file is
// read until two reads in a row agree. A state the writer leaves between two of its writes is
// stable and gets through.
std::string SettledContent(const std::string &path) {
  std::string previous = tfprof_test::ReadFile(path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string now = tfprof_test::ReadFile(path);
    if (now == previous) return now;
    previous = std::move(now);
  }
  FAIL("the file at " << path << " never stopped changing");
  return previous;
}

// The step numbers of the complete Chrome trace at `path` (fails the test when it is not one).
std::vector<int64_t> StepsIn(const std::string &path) {
  const Json trace = Json::parse(SettledContent(path));  // throws on invalid JSON
  std::vector<int64_t> steps;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["cat"] == "step") steps.push_back(event["args"]["step"].get<int64_t>());
  }
  return steps;
}

void RecordSteps(int64_t first, int64_t last) {
  for (int64_t step = first; step <= last; ++step) {
    prof_begin_step(step);
    prof_span_begin("work");
    prof_span_end();
    prof_end_step();
  }
}

}  // namespace

TEST_CASE("streamed json: the file is a complete trace after every step written") {
  TempDir dir;
  const std::string path = dir.File("live.json");
  REQUIRE(prof_start(("flush_interval_ms=2,output=" + path).c_str()) == PROF_OK);
  // Valid from the start: an empty trace naming its process.
  CHECK(StepsIn(path).empty());
  std::set<size_t> seen_counts;
  for (int64_t round = 0; round < 3; ++round) {
    RecordSteps(round * 2 + 1, round * 2 + 2);
    // Every copy of the file taken while it grows parses, and its steps only ever grow.
    size_t seen = 0;
    for (int attempt = 0; attempt < 400 && seen < static_cast<size_t>(round * 2 + 2); ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      seen = StepsIn(path).size();
      seen_counts.insert(seen);
    }
    CHECK(seen == static_cast<size_t>(round * 2 + 2));
  }
  CHECK(prof_is_running());
  REQUIRE(prof_stop() == PROF_OK);
  const Json trace = tfprof_test::ReadTrace(path);
  CHECK(StepsIn(path) == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  size_t work = 0;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["name"] == "work") ++work;
  }
  CHECK(work == 6);
  // The header, after the events, says the session ended with nothing lost.
  CHECK(trace["dropped_events"] == 0);
  CHECK(trace["tfprof"]["events_recorded"] == 6 * 4);
  CHECK(tfprof_test::NestingProblem(trace) == "");
}

TEST_CASE("streamed json: a cancelled step's events are written outside steps, nothing held") {
  TempDir dir;
  const std::string path = dir.File("cancel.json");
  REQUIRE(prof_start(("flush_interval_ms=2,output=" + path).c_str()) == PROF_OK);
  RecordSteps(0, 1);
  prof_begin_step(2);
  prof_span_begin("exhausted_fetch");
  prof_span_end();
  prof_cancel_step();
  RecordSteps(2, 3);
  // The steps after the withdrawn one are streamed while the session runs: it holds nothing back.
  size_t seen = 0;
  for (int attempt = 0; attempt < 400 && seen < 4; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    seen = StepsIn(path).size();
  }
  CHECK(seen == 4);
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(StepsIn(path) == std::vector<int64_t>{0, 1, 2, 3});
  const Json trace = tfprof_test::ReadTrace(path);
  size_t fetches = 0;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["name"] != "exhausted_fetch") continue;
    ++fetches;
    CHECK_FALSE(event.contains("args"));
  }
  CHECK(fetches == 1);
}

TEST_CASE("streamed json: a program that crashes keeps the steps it finished") {
  TempDir dir;
  const std::string path = dir.File("crash.json");
  tfprof_test::RunChildThatCrashes(path);
  CHECK(StepsIn(path) == std::vector<int64_t>{1, 2, 3});
  const Json trace = tfprof_test::ReadTrace(path);
  std::vector<std::string> names;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["cat"] != "step") names.push_back(event["name"]);
  }
  CHECK(names == std::vector<std::string>{"work", "work", "work"});
  CHECK(tfprof_test::RowName(trace, trace["tfprof"]["pid"].get<int64_t>(), 2000000000) == "Steps");
}

TEST_CASE("streamed json: .json.gz is written at stop, not streamed") {
  TempDir dir;
  const std::string path = dir.File("whole.json.gz");
  REQUIRE(prof_start(("flush_interval_ms=2,output=" + path).c_str()) == PROF_OK);
  RecordSteps(1, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(std::filesystem::exists(path));
  REQUIRE(prof_stop() == PROF_OK);
  const Json trace = tfprof_test::ReadTrace(path);
  CHECK(tfprof_test::EventsWithPhase(trace, "X").size() == 4);
}
