// Records through the C ABI, exports, parses the file and checks what is in it: names, nesting,
// rows, steps, instants, counters, thread hand-over and timestamps.
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "integration/trace_reader.h"
#include "tfprof/tfprof.h"

using tfprof_test::Json;

namespace {

int64_t CurrentTid() { return static_cast<int64_t>(syscall(SYS_gettid)); }

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void BusyWaitNs(int64_t ns) {
  const int64_t until = MonotonicNs() + ns;
  while (MonotonicNs() < until) {
  }
}

// Stops the session and exports it to a fresh path; returns the parsed trace.
Json StopAndRead(const std::string &file_name = "trace.json") {
  REQUIRE(prof_stop() == PROF_OK);
  const std::string path = tfprof_test::TempPath(file_name);
  REQUIRE_MESSAGE(prof_export(path.c_str()) == PROF_OK, prof_last_error());
  return tfprof_test::ReadTrace(path);
}

std::vector<Json> SpansNamed(const Json &trace, const std::string &name) {
  std::vector<Json> found;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["name"] == name) found.push_back(event);
  }
  return found;
}

Json OnlySpanNamed(const Json &trace, const std::string &name) {
  std::vector<Json> found = SpansNamed(trace, name);
  REQUIRE_MESSAGE(found.size() == 1, "expected one span named " << name << ", found " << found.size());
  return found[0];
}

bool Contains(const Json &outer, const Json &inner) {
  return tfprof_test::TsNs(outer) <= tfprof_test::TsNs(inner) &&
         tfprof_test::TsNs(inner) + tfprof_test::DurNs(inner) <=
             tfprof_test::TsNs(outer) + tfprof_test::DurNs(outer);
}

}  // namespace

TEST_CASE("trace: nested spans keep their names, nesting and row") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_set_thread_name("trainer");
  prof_span_begin("train_step");
  prof_span_begin("forward");
  prof_span_begin("MatMul");
  BusyWaitNs(20000);
  prof_span_end();
  prof_span_end();
  prof_span_begin("backward");
  BusyWaitNs(20000);
  prof_span_end();
  prof_span_end();
  const Json trace = StopAndRead();

  CHECK(tfprof_test::NestingProblem(trace) == "");
  const Json outer = OnlySpanNamed(trace, "train_step");
  const Json forward = OnlySpanNamed(trace, "forward");
  const Json matmul = OnlySpanNamed(trace, "MatMul");
  const Json backward = OnlySpanNamed(trace, "backward");
  CHECK(Contains(outer, forward));
  CHECK(Contains(forward, matmul));
  CHECK(Contains(outer, backward));
  CHECK(tfprof_test::TsNs(backward) >= tfprof_test::TsNs(forward) + tfprof_test::DurNs(forward));
  CHECK(tfprof_test::DurNs(matmul) >= 20000);
  for (const Json &span : {outer, forward, matmul, backward}) {
    CHECK(span["pid"] == getpid());
    CHECK(span["tid"] == CurrentTid());
    CHECK(span["cat"] == "user_annotation");
  }
  CHECK(tfprof_test::RowName(trace, getpid(), CurrentTid()) == "trainer");
  CHECK(trace["dropped_events"] == 0);
  CHECK(trace["displayTimeUnit"] == "ns");
  CHECK(trace["tfprof"]["events_recorded"] == 8);
}

TEST_CASE("trace: timestamps are CLOCK_MONOTONIC microseconds with nanosecond digits") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  const int64_t before = MonotonicNs();
  prof_span_begin("timed");
  BusyWaitNs(2000000);
  prof_span_end();
  const int64_t after = MonotonicNs();
  const Json trace = StopAndRead();
  const Json span = OnlySpanNamed(trace, "timed");
  // The TSC-to-monotonic calibration is good to well under a microsecond per millisecond; allow
  // 50 us of slack for the reads around the span.
  CHECK(tfprof_test::TsNs(span) >= before - 50000);
  CHECK(tfprof_test::TsNs(span) + tfprof_test::DurNs(span) <= after + 50000);
  CHECK(tfprof_test::DurNs(span) >= 2000000 - 50000);
  CHECK(tfprof_test::DurNs(span) <= after - before + 50000);
  const Json &meta = trace["tfprof"];
  CHECK(meta["start_time_monotonic_ns"].get<int64_t>() <= tfprof_test::TsNs(span));
  CHECK(meta["end_time_monotonic_ns"].get<int64_t>() >= tfprof_test::TsNs(span) + tfprof_test::DurNs(span));
  const int64_t wall_offset = meta["start_time_unix_ns"].get<int64_t>() - meta["start_time_monotonic_ns"].get<int64_t>();
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  const int64_t wall_now = static_cast<int64_t>(wall.tv_sec) * 1000000000 + wall.tv_nsec;
  CHECK(std::llabs(wall_now - (MonotonicNs() + wall_offset)) < 5000000);
}

TEST_CASE("trace: steps get their own row and tag the events inside them, on any thread") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_span_begin("before_steps");
  prof_span_end();
  prof_begin_step(41);
  prof_span_begin("step41_op");
  BusyWaitNs(10000);
  prof_span_end();
  std::thread helper([] {
    prof_span_begin("helper_op");
    prof_instant("helper_mark");
    prof_span_end();
  });
  helper.join();
  prof_end_step();
  prof_begin_step(42);
  prof_span_begin("step42_op");
  prof_span_end();
  prof_begin_step(43);  // implicitly ends step 42
  prof_span_begin("step43_op");
  prof_span_end();
  prof_end_step();
  const Json trace = StopAndRead();

  CHECK(tfprof_test::NestingProblem(trace) == "");
  std::vector<Json> steps;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["cat"] == "step") steps.push_back(event);
  }
  REQUIRE(steps.size() == 3);
  CHECK(steps[0]["name"] == "step 41");
  CHECK(steps[0]["args"]["step"] == 41);
  CHECK(steps[1]["name"] == "step 42");
  CHECK(steps[2]["name"] == "step 43");
  const int64_t step_tid = steps[0]["tid"].get<int64_t>();
  CHECK(step_tid != CurrentTid());
  CHECK(tfprof_test::RowName(trace, getpid(), step_tid) == "Steps");
  for (const Json &step : steps) CHECK(step["tid"] == step_tid);
  // Step 42 ends exactly where step 43 begins.
  CHECK(tfprof_test::TsNs(steps[1]) + tfprof_test::DurNs(steps[1]) == tfprof_test::TsNs(steps[2]));

  CHECK_FALSE(OnlySpanNamed(trace, "before_steps").contains("args"));
  CHECK(OnlySpanNamed(trace, "step41_op")["args"]["step"] == 41);
  CHECK(OnlySpanNamed(trace, "helper_op")["args"]["step"] == 41);
  CHECK(OnlySpanNamed(trace, "step42_op")["args"]["step"] == 42);
  CHECK(OnlySpanNamed(trace, "step43_op")["args"]["step"] == 43);
  CHECK(Contains(steps[0], OnlySpanNamed(trace, "helper_op")));
  const std::vector<Json> instants = tfprof_test::EventsWithPhase(trace, "i");
  REQUIRE(instants.size() == 1);
  CHECK(instants[0]["name"] == "helper_mark");
  CHECK(instants[0]["args"]["step"] == 41);
  CHECK(instants[0]["tid"] == OnlySpanNamed(trace, "helper_op")["tid"]);
}

TEST_CASE("trace: a cancelled step is no step; what it held stays, outside steps") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_begin_step(0);
  prof_span_begin("kept_op");
  prof_span_end();
  prof_end_step();
  prof_begin_step(1);  // a fetch that finds the data exhausted: not a step after all
  prof_span_begin("exhausted_fetch");
  BusyWaitNs(10000);
  prof_span_end();
  prof_cancel_step();
  prof_cancel_step();  // nothing open: counted like an unmatched end
  prof_begin_step(1);
  prof_span_begin("next_op");
  prof_span_end();
  prof_begin_step(2);  // a begin still ends the open step as usual
  prof_cancel_step();
  prof_stats_t stats{};
  stats.struct_size = sizeof stats;
  REQUIRE(prof_get_stats(&stats) == PROF_OK);
  CHECK(stats.unmatched_step_ends == 1);
  const Json trace = StopAndRead();

  std::vector<Json> steps;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    if (event["cat"] == "step") steps.push_back(event);
  }
  REQUIRE(steps.size() == 2);
  CHECK(steps[0]["args"]["step"] == 0);
  CHECK(steps[1]["args"]["step"] == 1);
  CHECK(OnlySpanNamed(trace, "kept_op")["args"]["step"] == 0);
  CHECK_FALSE(OnlySpanNamed(trace, "exhausted_fetch").contains("args"));
  CHECK(OnlySpanNamed(trace, "next_op")["args"]["step"] == 1);
  CHECK(tfprof_test::TsNs(steps[1]) > tfprof_test::TsNs(OnlySpanNamed(trace, "exhausted_fetch")));
}

TEST_CASE("trace: counters keep their values and order") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  const double values[] = {0.0, 1.5, -3.25, 1e300, 42.0};
  for (double value : values) prof_counter("queue_depth", value);
  const Json trace = StopAndRead();
  const std::vector<Json> counters = tfprof_test::EventsWithPhase(trace, "C");
  REQUIRE(counters.size() == 5);
  for (size_t index = 0; index < counters.size(); ++index) {
    CHECK(counters[index]["name"] == "queue_depth");
    CHECK(counters[index]["args"]["value"].get<double>() == values[index]);
    if (index > 0) CHECK(tfprof_test::TsNs(counters[index]) >= tfprof_test::TsNs(counters[index - 1]));
  }
}

TEST_CASE("trace: a thread that exits before prof_stop hands everything over") {
  REQUIRE(prof_start("buffer_events=4096") == PROF_OK);
  int64_t worker_tid = 0;
  std::thread worker([&worker_tid] {
    worker_tid = CurrentTid();
    pthread_setname_np(pthread_self(), "os_named_worker");
    for (int index = 0; index < 1500; ++index) {
      prof_span_begin("worker_op");
      prof_span_end();
    }
  });
  worker.join();
  const Json trace = StopAndRead();
  const std::vector<Json> spans = SpansNamed(trace, "worker_op");
  CHECK(spans.size() == 1500);
  for (const Json &span : spans) CHECK(span["tid"] == worker_tid);
  CHECK(tfprof_test::RowName(trace, getpid(), worker_tid) == "os_named_worker");
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_recorded == 3000);
  CHECK(stats.events_dropped == 0);
  CHECK(stats.threads == 1);
}

TEST_CASE("trace: names may hold any bytes, be transient, long or numerous") {
  REQUIRE(prof_start("buffer_events=1048576") == PROF_OK);
  const std::string tricky[] = {"quote\"back\\slash", "new\nline\ttab", "ctl\x01\x1f",
                                "utf8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "bad \xff\xc0 end"};
  for (const std::string &name : tricky) {
    prof_span_begin(name.c_str());
    prof_span_end();
  }
  // The same buffer holding different text on every call.
  char buffer[32];
  for (int index = 0; index < 50; ++index) {
    std::snprintf(buffer, sizeof buffer, "batch_%d", index % 5);
    prof_instant(buffer);
  }
  const std::string long_name(100000, 'L');
  prof_span_begin(long_name.c_str());
  prof_span_end();
  // More distinct names than one thread's name table holds: the rest travel inline.
  for (int index = 0; index < 6000; ++index) {
    const std::string name = "unique_name_" + std::to_string(index);
    prof_instant(name.c_str());
  }
  prof_instant("");
  prof_instant(nullptr);
  const Json trace = StopAndRead();

  CHECK(OnlySpanNamed(trace, "quote\"back\\slash")["dur"].is_number());
  OnlySpanNamed(trace, "new\nline\ttab");
  OnlySpanNamed(trace, "ctl\x01\x1f");
  OnlySpanNamed(trace, "utf8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  OnlySpanNamed(trace, "bad \xef\xbf\xbd\xef\xbf\xbd end");
  OnlySpanNamed(trace, long_name);
  std::map<std::string, int> instant_counts;
  for (const Json &instant : tfprof_test::EventsWithPhase(trace, "i")) {
    instant_counts[instant["name"].get<std::string>()]++;
  }
  for (int index = 0; index < 5; ++index) CHECK(instant_counts["batch_" + std::to_string(index)] == 10);
  for (int index = 0; index < 6000; ++index) {
    CHECK_MESSAGE(instant_counts["unique_name_" + std::to_string(index)] == 1, index);
  }
  CHECK(instant_counts["(unnamed)"] == 2);
  CHECK(trace["dropped_events"] == 0);
}

TEST_CASE("trace: .json.gz holds the same trace as .json") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  for (int index = 0; index < 200; ++index) {
    prof_span_begin("op");
    prof_instant("tick");
    prof_span_end();
  }
  REQUIRE(prof_stop() == PROF_OK);
  const std::string plain = tfprof_test::TempPath("trace.json");
  const std::string packed = tfprof_test::TempPath("trace.json.gz");
  REQUIRE(prof_export(plain.c_str()) == PROF_OK);
  REQUIRE(prof_export(packed.c_str()) == PROF_OK);
  const std::string packed_bytes_raw = [&] {
    FILE *file = std::fopen(packed.c_str(), "rb");
    REQUIRE(file != nullptr);
    unsigned char magic[2] = {};
    REQUIRE(std::fread(magic, 1, 2, file) == 2);
    std::fclose(file);
    return std::string(reinterpret_cast<char *>(magic), 2);
  }();
  CHECK(packed_bytes_raw == "\x1f\x8b");  // gzip magic
  CHECK(tfprof_test::ReadFileBytes(plain) == tfprof_test::ReadFileBytes(packed));
  CHECK(SpansNamed(tfprof_test::ReadTrace(packed), "op").size() == 200);
}

TEST_CASE("trace: exporting while running shows open spans as incomplete - after stop they close") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_span_begin("long_running");
  prof_span_begin("finished_child");
  prof_span_end();
  const std::string during = tfprof_test::TempPath("during.json");
  REQUIRE(prof_export(during.c_str()) == PROF_OK);
  BusyWaitNs(100000);
  prof_span_end();
  const Json after = StopAndRead("after.json");
  const Json snapshot = tfprof_test::ReadTrace(during);
  const Json open_span = OnlySpanNamed(snapshot, "long_running");
  CHECK(open_span["args"]["incomplete"] == true);
  CHECK_FALSE(OnlySpanNamed(snapshot, "finished_child").contains("args"));
  const Json closed = OnlySpanNamed(after, "long_running");
  CHECK_FALSE(closed.contains("args"));
  CHECK(tfprof_test::DurNs(closed) > tfprof_test::DurNs(open_span));
}

TEST_CASE("trace: spans still open at prof_stop end at the stop time, marked incomplete") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_begin_step(1);
  prof_span_begin("never_closed");
  const Json trace = StopAndRead();
  const Json span = OnlySpanNamed(trace, "never_closed");
  CHECK(span["args"]["incomplete"] == true);
  CHECK(span["args"]["step"] == 1);
  const Json step = OnlySpanNamed(trace, "step 1");
  CHECK(step["args"]["incomplete"] == true);
  CHECK(tfprof_test::TsNs(span) + tfprof_test::DurNs(span) <=
        trace["tfprof"]["end_time_monotonic_ns"].get<int64_t>() + 1);
}

TEST_CASE("trace: rows are named, sorted, one per thread, steps first") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_set_thread_name("main_loop");
  prof_begin_step(0);
  std::vector<std::thread> threads;
  for (int index = 0; index < 3; ++index) {
    threads.emplace_back([index] {
      prof_set_thread_name(("loader_" + std::to_string(index)).c_str());
      prof_span_begin("load");
      prof_span_end();
    });
  }
  for (std::thread &thread : threads) thread.join();
  prof_end_step();
  const Json trace = StopAndRead();
  std::map<std::string, int64_t> sort_index_by_name;
  std::map<int64_t, std::string> name_by_tid;
  std::map<int64_t, int64_t> sort_by_tid;
  std::string process_name;
  for (const Json &meta : tfprof_test::EventsWithPhase(trace, "M")) {
    CHECK(meta["pid"] == getpid());
    if (meta["name"] == "thread_name") name_by_tid[meta["tid"]] = meta["args"]["name"];
    if (meta["name"] == "thread_sort_index") sort_by_tid[meta["tid"]] = meta["args"]["sort_index"];
    if (meta["name"] == "process_name") process_name = meta["args"]["name"];
  }
  CHECK_FALSE(process_name.empty());
  REQUIRE(name_by_tid.size() == 5);  // Steps, main_loop, loader_0..2
  for (auto &[tid, name] : name_by_tid) sort_index_by_name[name] = sort_by_tid.at(tid);
  CHECK(sort_index_by_name.at("Steps") == 0);
  CHECK(sort_index_by_name.at("main_loop") == 1);
  for (int index = 0; index < 3; ++index) CHECK(sort_index_by_name.count("loader_" + std::to_string(index)) == 1);
  std::set<int64_t> tids;
  for (const Json &span : SpansNamed(trace, "load")) tids.insert(span["tid"].get<int64_t>());
  CHECK(tids.size() == 3);
}
