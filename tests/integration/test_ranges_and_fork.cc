// prof_range_start/end (ranges that end on another thread, in any order) in every format, and a
// session across fork(): the child has none, the parent's output is the parent's alone.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "integration/trace_reader.h"
#include "tfprof/tensorflow/run_metadata.pb.h"
#include "tfprof/tfprof.h"

namespace tfprof_test {
namespace {

TEST_CASE("ranges: start and end on different threads, overlapping, one never ended") {
  REQUIRE(prof_start("cuda=off") == PROF_OK);
  prof_begin_step(0);
  const uint64_t first = prof_range_start("first");
  const uint64_t second = prof_range_start("second");
  CHECK(first != 0);
  CHECK(second != first);
  std::thread([first] { prof_range_end(first); }).join();  // ends on another thread, first
  prof_range_end(second);
  prof_range_end(second);  // a second end of one range is ignored
  prof_range_end(0);
  prof_range_start("left open");
  prof_end_step();
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(prof_range_start("after stop") == 0);

  const std::string json_path = TempPath("ranges.json");
  REQUIRE(prof_export(json_path.c_str()) == PROF_OK);
  const Json trace = ReadTrace(json_path);
  std::map<std::string, std::map<std::string, Json>> edges;  // name -> ph -> event
  for (const Json &event : trace["traceEvents"]) {
    if (event.value("cat", "") != "range") continue;
    CHECK(edges[event["name"]].count(event["ph"]) == 0);
    edges[event["name"]][event["ph"]] = event;
  }
  REQUIRE(edges.size() == 3);
  CHECK(edges["first"]["b"]["tid"] != edges["first"]["e"]["tid"]);
  CHECK(edges["first"]["b"]["id"] == edges["first"]["e"]["id"]);
  CHECK(TsNs(edges["first"]["b"]) <= TsNs(edges["second"]["b"]));
  CHECK(TsNs(edges["second"]["e"]) >= TsNs(edges["first"]["e"]));
  CHECK(edges["second"]["e"]["tid"] == edges["second"]["b"]["tid"]);
  CHECK(edges["left open"]["e"]["args"]["incomplete"] == true);
  CHECK(edges["first"]["b"]["args"]["step"] == 0);

  // TensorFlow formats: ops of the starting thread, placed in the step that holds them.
  const std::string pb_path = TempPath("ranges.pb");
  REQUIRE(prof_export(pb_path.c_str()) == PROF_OK);
  tensorflow::RunMetadata metadata;
  REQUIRE(metadata.ParseFromString(ReadFileBytes(pb_path)));
  std::map<std::string, int> ops;
  for (const auto &device : metadata.step_stats().dev_stats()) {
    for (const auto &node : device.node_stats()) ++ops[node.node_name()];
  }
  CHECK(ops["first"] == 1);
  CHECK(ops["second"] == 1);
  CHECK(ops["left open"] == 1);
}

TEST_CASE("ranges: ends on a thread whose ring is full keep their ranges whole") {
  // The consumer ends every range and records spans between ends, so its small ring is full
  // most of the time between collector runs: before the overflow queue, about 80% of the ends
  // were dropped and their ranges shown running to the end of the session.
  REQUIRE(prof_start("cuda=off,buffer_events=1024,flush_interval_ms=5") == PROF_OK);
  constexpr int kRanges = 20000;
  std::mutex mutex;
  std::deque<uint64_t> started;
  std::atomic<bool> producing{true};
  std::thread producer([&] {
    for (int index = 0; index < kRanges; ++index) {
      const uint64_t id = prof_range_start("handed over");
      {
        std::lock_guard<std::mutex> lock(mutex);
        started.push_back(id);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(2));
    }
    producing = false;
  });
  int64_t consumer_tid = 0;
  std::thread consumer([&] {
    consumer_tid = static_cast<int64_t>(gettid());
    for (;;) {
      uint64_t id = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!started.empty()) {
          id = started.front();
          started.pop_front();
        }
      }
      if (id == 0) {
        if (!producing) break;
        continue;
      }
      prof_range_end(id);
      for (int span = 0; span < 20; ++span) {
        prof_span_begin("consumer work");
        prof_span_end();
      }
    }
  });
  producer.join();
  consumer.join();
  REQUIRE(prof_stop() == PROF_OK);
  prof_stats_t stats{};
  stats.struct_size = sizeof stats;
  REQUIRE(prof_get_stats(&stats) == PROF_OK);
  CHECK(stats.events_dropped > 0);  // the consumer's spans: the ring was full
  const std::string path = TempPath("handed_over.json");
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  std::map<int64_t, int64_t> begins;
  std::map<int64_t, Json> ends;
  const Json trace = ReadTrace(path);
  for (const Json &event : trace["traceEvents"]) {
    if (event.value("cat", "") != "range") continue;
    if (event["ph"] == "b") begins[event["id"].get<int64_t>()] = TsNs(event);
    if (event["ph"] == "e") ends[event["id"].get<int64_t>()] = event;
  }
  INFO("ranges in the trace: ", begins.size(), ", ends: ", ends.size());
  CHECK(begins.size() == kRanges);
  REQUIRE(ends.size() == kRanges);
  int incomplete = 0;
  for (const auto &[id, end] : ends) {
    REQUIRE(begins.count(id) == 1);
    CHECK(TsNs(end) >= begins[id]);
    if (end.contains("args") && end["args"].value("incomplete", false)) {
      ++incomplete;  // its end was dropped: shown on the start's row, to the session's end
      continue;
    }
    CHECK(end["tid"].get<int64_t>() == consumer_tid);
  }
  // The overflow queue holds 8,192 ends; when the collector thread gets no CPU for long enough
  // (CI's loaded 2-core machines: seen once, 43 of 20,000) it fills, and further ends are dropped
  // and counted, as documented. Without the queue about 80% were lost.
  CHECK(incomplete <= kRanges / 100);
  CHECK(static_cast<uint64_t>(incomplete) <= stats.events_dropped);
}

TEST_CASE("fork: the child has no session and never writes the parent's output") {
  const std::string path = TempPath("parent.json");
  REQUIRE(prof_start(("cuda=off,output=" + path).c_str()) == PROF_OK);
  prof_span_begin("before fork");
  prof_span_end();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Exit codes tell the parent what went wrong; no doctest in the child.
    if (prof_is_running() != 0 || prof_session_active != 0) _exit(10);
    prof_span_begin("in child");  // recorded nowhere
    prof_span_end();
    if (prof_stop() != PROF_ENOTSTARTED) _exit(11);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    // ThreadSanitizer stops a child of a threaded process from starting threads; GCC's
    // AddressSanitizer does not lock its allocator around fork(), so a child's new thread can
    // wait forever on an allocator lock the parent's collector held at that instant (seen in
    // CI). glibc's malloc is fork-safe: the release run checks the child's own session.
    _exit(0);
#endif
    if (prof_start("cuda=off") != PROF_OK) _exit(12);  // the child may start its own
    prof_span_begin("child session");
    prof_span_end();
    if (prof_stop() != PROF_OK) _exit(13);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  prof_span_begin("after fork");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  std::map<std::string, int> names;
  for (const Json &event : EventsWithPhase(ReadTrace(path), "X")) ++names[event["name"]];
  CHECK(names["before fork"] == 1);
  CHECK(names["after fork"] == 1);
  CHECK(names.count("in child") == 0);
  CHECK(names.count("child session") == 0);
}

TEST_CASE("fork: children run sessions of their own while the parent's collector waits") {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return;  // no threads in children under the sanitizers (see the test above)
#endif
  // The parent's collector sleeps on a condition variable most of the time; a child inherits it
  // with that waiter counted, and its own session's stop must not wait for a thread that does
  // not exist there (2 of 20 children hung before the fix).
  REQUIRE(prof_start("cuda=off,flush_interval_ms=1") == PROF_OK);
  std::vector<pid_t> children;
  for (int i = 0; i < 20; ++i) {
    prof_span_begin("parent work");
    prof_span_end();
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      alarm(10);  // a hang ends by SIGALRM, which the parent sees
      for (int session = 0; session < 2; ++session) {
        if (prof_start("cuda=off,flush_interval_ms=1") != PROF_OK) _exit(12);
        prof_span_begin("child session");
        prof_span_end();
        if (prof_stop() != PROF_OK) _exit(13);
      }
      _exit(0);
    }
    children.push_back(child);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int finished = 0;
  for (const pid_t child : children) {
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK_MESSAGE(WIFEXITED(status), "child " << child << " ended by signal " << WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ++finished;
  }
  CHECK(finished == 20);
  REQUIRE(prof_stop() == PROF_OK);
}

}  // namespace
}  // namespace tfprof_test
