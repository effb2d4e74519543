// Session lifecycle through the C ABI: options take effect, sessions restart fresh, output= exports
// at stop, and statistics are exact.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "integration/trace_reader.h"
#include "tfprof/tfprof.h"

using tfprof_test::Json;

TEST_CASE("sessions: version macros match the library") {
  CHECK(prof_version() == TFPROF_VERSION_NUMBER);
  const std::string expected = std::to_string(TFPROF_VERSION_MAJOR) + "." +
                               std::to_string(TFPROF_VERSION_MINOR) + "." +
                               std::to_string(TFPROF_VERSION_PATCH);
  CHECK(std::string(prof_version_string()) == expected);
}

TEST_CASE("sessions: prof_session_active holds a new nonzero serial per session, 0 when stopped - stats keep it") {
  CHECK(prof_session_active == 0);
  REQUIRE(prof_start("flush_interval_ms=0") == PROF_OK);
  const int first = prof_session_active;
  CHECK(first != 0);
  CHECK(tfprof_test::CurrentStats().session_serial == static_cast<uint64_t>(first));
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(prof_session_active == 0);
  CHECK(tfprof_test::CurrentStats().session_serial == static_cast<uint64_t>(first));
  REQUIRE(prof_start("flush_interval_ms=0") == PROF_OK);
  const int second = prof_session_active;
  CHECK(second != 0);
  CHECK(second != first);
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(tfprof_test::CurrentStats().session_serial == static_cast<uint64_t>(second));
}

TEST_CASE("sessions: buffer_events bounds each thread's ring - drops are counted exactly") {
  // No collector thread, so nothing drains the 16-event ring until prof_stop.
  REQUIRE(prof_start("buffer_events=16,flush_interval_ms=0") == PROF_OK);
  for (int index = 0; index < 100; ++index) prof_instant("tick");
  prof_stats_t running = tfprof_test::CurrentStats();  // drains the ring: room for 16 more
  CHECK(running.running == 1);
  CHECK(running.events_recorded == 16);
  CHECK(running.events_dropped == 84);
  for (int index = 0; index < 20; ++index) prof_instant("tock");
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stopped = tfprof_test::CurrentStats();
  CHECK(stopped.running == 0);
  CHECK(stopped.events_recorded == 32);
  CHECK(stopped.events_dropped == 88);
  const Json trace = tfprof_test::ExportedTrace("drops.json");
  CHECK(trace["dropped_events"] == 88);
  CHECK(tfprof_test::EventsWithPhase(trace, "i").size() == 32);
}

TEST_CASE("sessions: a dropped span begin drops its end and everything nested inside") {
  REQUIRE(prof_start("buffer_events=16,flush_interval_ms=0") == PROF_OK);
  for (int index = 0; index < 14; ++index) prof_instant("filler");  // two slots left
  prof_span_begin("outer");    // recorded, keeping the last slot for its own end
  prof_instant("no_room");     // dropped: the last slot is reserved for outer's end
  prof_span_begin("dropped");  // dropped
  tfprof_test::CurrentStats();                     // drain: room again
  prof_span_begin("inside_dropped");  // dropped with its parent
  prof_span_end();
  prof_span_end();  // end of "dropped": dropped
  prof_span_begin("sibling");  // recorded
  prof_span_end();
  prof_span_end();  // end of "outer": recorded
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_recorded == 14 + 1 + 2 + 1);
  CHECK(stats.events_dropped == 5);
  const Json trace = tfprof_test::ExportedTrace("nested_drops.json");
  std::vector<std::string> names;
  for (const Json &span : tfprof_test::EventsWithPhase(trace, "X")) names.push_back(span["name"]);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"outer", "sibling"});
  CHECK(tfprof_test::NestingProblem(trace) == "");
  CHECK(trace["dropped_events"] == 5);
}

// The span fast path (recorder.h) hands over to the general path whenever it cannot record, and
// takes over again once the state allows: counts and nesting must come out the same on either
// clock (clock=monotonic never takes the fast path).
TEST_CASE("sessions: exact loss accounting through the span fast path's hand-overs") {
  for (const char *options : {"buffer_events=16,flush_interval_ms=0,clock=tsc",
                              "buffer_events=16,flush_interval_ms=0,clock=monotonic"}) {
    CAPTURE(options);
    REQUIRE(prof_start(options) == PROF_OK);
    for (int index = 0; index < 3; ++index) {  // 6 records: 10 slots left
      prof_span_begin("flat");
      prof_span_end();
    }
    prof_span_begin("outer");  // 1 record and its end's slot: 8 left
    for (int index = 0; index < 4; ++index) prof_span_begin("inner");  // 8 more: none left
    prof_span_begin("dropped");        // no room: dropped, and so is all inside it
    prof_span_begin("inside_dropped");
    prof_span_begin("inside_dropped");
    prof_span_end();
    prof_span_end();
    prof_span_end();  // the end of "dropped": the fast path may take over again
    for (int index = 0; index < 5; ++index) prof_span_end();  // 4 inners and outer: reserved
    prof_span_begin("no_room");  // every slot is used: dropped with its end
    prof_span_end();
    prof_span_end();  // no span open: unmatched
    tfprof_test::CurrentStats();  // drains: room again
    for (int index = 0; index < 2; ++index) {
      prof_span_begin("flat");
      prof_span_end();
    }
    REQUIRE(prof_stop() == PROF_OK);
    const prof_stats_t stats = tfprof_test::CurrentStats();
    CHECK(stats.events_recorded == 6 + 2 + 8 + 4);
    CHECK(stats.events_dropped == 3 + 3 + 2);
    CHECK(stats.unmatched_span_ends == 1);
    const Json trace = tfprof_test::ExportedTrace("fast_path_drops.json");
    std::map<std::string, int> counts;
    for (const Json &span : tfprof_test::EventsWithPhase(trace, "X")) ++counts[span["name"]];
    CHECK(counts == std::map<std::string, int>{{"flat", 5}, {"inner", 4}, {"outer", 1}});
    CHECK(tfprof_test::NestingProblem(trace) == "");
    CHECK(trace["dropped_events"] == 8);
  }
}

// The fast path trusts a cached name only after comparing its text: a buffer rewritten between
// spans is recorded with its new text, whether the name fits the cache's first word or not.
TEST_CASE("sessions: span names rewritten at the same address are recorded as rewritten") {
  REQUIRE(prof_start("flush_interval_ms=0,clock=tsc") == PROF_OK);
  alignas(8) char name[64] = {};
  const std::vector<std::string> texts = {
      "short", "short", "shorT", "short!", "a name long enough for the cache's tail words",
      "a name long enough for the cache's tail words", "a name long enough for the cache's tail wordz",
      "a name long enough for the cache's tail word", "short"};
  for (const std::string &text : texts) {
    std::snprintf(name, sizeof name, "%s", text.c_str());
    prof_span_begin(name);
    prof_span_end();
    prof_span_begin(name + 1);  // the same texts at an odd address
    prof_span_end();
  }
  REQUIRE(prof_stop() == PROF_OK);
  const std::vector<std::string> recorded =
      tfprof_test::SpanNamesByStart(tfprof_test::ExportedTrace("rewritten_names.json"));
  std::vector<std::string> expected;
  for (const std::string &text : texts) {
    expected.push_back(text);
    expected.push_back(text.substr(1));
  }
  CHECK(recorded == expected);
}

TEST_CASE("sessions: registered names - one id per text, recorded by id, across threads and sessions") {
  const prof_name_id_t forward = prof_register_name("forward");
  REQUIRE(forward != 0);
  CHECK(prof_register_name("forward") == forward);
  const prof_name_id_t backward = prof_register_name("backward");
  CHECK(backward != 0);
  CHECK(backward != forward);
  CHECK(prof_register_name(nullptr) == prof_register_name(""));
  CHECK(prof_register_name("(unnamed)") == prof_register_name(nullptr));
  // Threads registering the same texts at once all get the same ids.
  std::vector<std::thread> threads;
  std::vector<prof_name_id_t> seen(8);
  for (size_t index = 0; index < seen.size(); ++index) {
    threads.emplace_back([&seen, index] {
      seen[index] = prof_register_name(index % 2 ? "forward" : "registered by a thread");
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (size_t index = 1; index < seen.size(); index += 2) CHECK(seen[index] == forward);
  for (size_t index = 2; index < seen.size(); index += 2) CHECK(seen[index] == seen[0]);

  for (int session = 0; session < 2; ++session) {  // ids outlive sessions
    CAPTURE(session);
    REQUIRE(prof_start("flush_interval_ms=0,clock=tsc") == PROF_OK);
    prof_span_begin_id(forward);
    prof_span_begin("by text");
    prof_span_begin_id(backward);
    prof_span_end();
    prof_span_end();
    prof_span_begin_id(seen[0]);
    prof_span_end();
    prof_span_end();
    prof_span_begin_id(0);         // never an id
    prof_span_end();
    prof_span_begin_id(4000000);   // beyond the table
    prof_span_end();
    (prof_span_begin_id)(forward);  // through the function itself, past the inline check
    prof_span_end();
    REQUIRE(prof_stop() == PROF_OK);
    const Json trace = tfprof_test::ExportedTrace("registered_names.json");
    const std::vector<std::string> expected = {
        "forward", "by text", "backward", "registered by a thread", "(unregistered name)",
        "(unregistered name)", "forward"};
    CHECK(tfprof_test::SpanNamesByStart(trace) == expected);
    CHECK(tfprof_test::NestingProblem(trace) == "");
    CHECK(tfprof_test::CurrentStats().events_dropped == 0);
  }
}

TEST_CASE("sessions: registered-name spans keep exact loss accounting when the ring fills") {
  const prof_name_id_t op = prof_register_name("op");
  REQUIRE(prof_start("buffer_events=16,flush_interval_ms=0,clock=tsc") == PROF_OK);
  for (int index = 0; index < 8; ++index) prof_span_begin_id(op);  // 8 records, 8 reserved ends
  prof_span_begin_id(op);  // no room: dropped with its end
  prof_span_begin("inside_dropped");
  prof_span_end();
  prof_span_end();
  for (int index = 0; index < 8; ++index) prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_recorded == 16);
  CHECK(stats.events_dropped == 4);
  const Json trace = tfprof_test::ExportedTrace("registered_drops.json");
  CHECK(tfprof_test::EventsWithPhase(trace, "X").size() == 8);
  CHECK(tfprof_test::NestingProblem(trace) == "");
}

TEST_CASE("sessions: threads calling stats and export in a loop never starve prof_stop") {
  // std::mutex is not fair: a thread that unlocks and locks again at once could keep a stop, or
  // the prof_get_stats after it, waiting for ever (the preload library does both on a fatal
  // signal). Control calls take their turns in order (FairMutex).
  const std::string path = tfprof_test::TempPath("starve.json");
  REQUIRE(prof_start("cuda=off") == PROF_OK);
  for (int span = 0; span < 20000; ++span) {
    prof_span_begin("op");
    prof_span_end();
  }
  std::atomic<bool> stopped{false};
  std::vector<std::thread> callers;
  for (int caller = 0; caller < 3; ++caller) {
    callers.emplace_back([&, caller] {
      while (!stopped) {
        prof_stats_t stats{};
        stats.struct_size = sizeof stats;
        if (caller == 0) {
          prof_export(path.c_str());
        } else {
          prof_get_stats(&stats);
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto started = std::chrono::steady_clock::now();
  CHECK(prof_stop() == PROF_OK);
  prof_stats_t after_stop{};
  after_stop.struct_size = sizeof after_stop;
  CHECK(prof_get_stats(&after_stop) == PROF_OK);  // the exports go on with the stopped session
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  stopped = true;
  for (std::thread &caller : callers) caller.join();
  CHECK(seconds < 5);  // one call in progress at most, not an unbounded wait
}

TEST_CASE("sessions: prof_start after prof_stop starts fresh") {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  prof_span_begin("first_session");
  prof_span_begin("left_open_across_sessions");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(tfprof_test::CurrentStats().events_recorded == 3);

  REQUIRE(prof_start(nullptr) == PROF_OK);
  CHECK(prof_is_running() == 1);
  CHECK(tfprof_test::CurrentStats().events_recorded == 0);
  prof_span_end();  // the first session's open span does not carry over
  prof_span_begin("second_session");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(prof_is_running() == 0);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_recorded == 2);
  CHECK(stats.unmatched_span_ends == 1);
  const Json trace = tfprof_test::ExportedTrace("second.json");
  const std::vector<Json> spans = tfprof_test::EventsWithPhase(trace, "X");
  REQUIRE(spans.size() == 1);
  CHECK(spans[0]["name"] == "second_session");
}

TEST_CASE("sessions: a thread's ring follows the new session's buffer_events") {
  REQUIRE(prof_start("buffer_events=1024,flush_interval_ms=0") == PROF_OK);
  prof_instant("attach");
  REQUIRE(prof_stop() == PROF_OK);
  REQUIRE(prof_start("buffer_events=32,flush_interval_ms=0") == PROF_OK);
  for (int index = 0; index < 40; ++index) prof_instant("tick");
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(tfprof_test::CurrentStats().events_recorded == 32);
  CHECK(tfprof_test::CurrentStats().events_dropped == 8);
}

TEST_CASE("sessions: output= exports at prof_stop, and the data can be exported again") {
  const std::string path = tfprof_test::TempPath("auto, with comma.json");
  std::string escaped;
  for (char c : path) {
    if (c == ',' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  REQUIRE(prof_start(("output=" + escaped + ",clock=monotonic").c_str()) == PROF_OK);
  prof_span_begin("auto_exported");
  prof_span_end();
  REQUIRE_MESSAGE(prof_stop() == PROF_OK, prof_last_error());
  const Json trace = tfprof_test::ReadTrace(path);
  CHECK(tfprof_test::EventsWithPhase(trace, "X").at(0)["name"] == "auto_exported");
  CHECK(trace["tfprof"]["clock"] == "monotonic");
  const std::string again = tfprof_test::TempPath("again.json.gz");
  CHECK(prof_export(again.c_str()) == PROF_OK);
  CHECK(tfprof_test::EventsWithPhase(tfprof_test::ReadTrace(again), "X").size() == 1);
}

TEST_CASE("sessions: output= to an unwritable path fails at start when streamed, else at stop") {
  // .json streams as the session runs: its file is created at prof_start, which says so.
  CHECK(prof_start("output=/nonexistent_dir_for_tfprof/trace.json") == PROF_EIO);
  CHECK(std::string(prof_last_error()).find("/nonexistent_dir_for_tfprof/trace.json") != std::string::npos);
  CHECK(prof_is_running() == 0);
  // .json.gz is written at stop: the failure is then, and loses nothing.
  REQUIRE(prof_start("output=/nonexistent_dir_for_tfprof/trace.json.gz") == PROF_OK);
  prof_span_begin("kept");
  prof_span_end();
  CHECK(prof_stop() == PROF_EIO);
  CHECK(std::string(prof_last_error()).find("/nonexistent_dir_for_tfprof/trace.json.gz") != std::string::npos);
  CHECK(prof_is_running() == 0);
  const std::string path = tfprof_test::TempPath("rescued.json");
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  CHECK(tfprof_test::EventsWithPhase(tfprof_test::ReadTrace(path), "X").at(0)["name"] == "kept");
}

TEST_CASE("sessions: the collector thread drains rings while the program runs") {
  // 64-event rings and 10,000 events in bursts of 32 with 3 ms pauses: without periodic
  // draining all but the first 64 would drop.
  REQUIRE(prof_start("buffer_events=64,flush_interval_ms=1") == PROF_OK);
  for (int index = 0; index < 5000; ++index) {
    prof_span_begin("op");
    prof_span_end();
    if (index % 16 == 15) usleep(3000);
  }
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_recorded + stats.events_dropped == 10000);
  CHECK(stats.events_recorded >= 5000);
}
