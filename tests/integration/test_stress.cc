// Concurrency: many threads recording into small rings while the collector drains, threads that
// come and go, and control calls racing with recording. Exact accounting is the assertion:
// recorded + dropped == issued, and the exported trace holds exactly what was recorded.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "integration/trace_reader.h"
#include "tfprof/tfprof.h"

using tfprof_test::Json;

namespace {

// One worker's share: nested spans, instants and counters; returns how many calls it issued.
uint64_t RecordMix(int worker, int iterations) {
  uint64_t issued = 0;
  const std::string name = "worker_" + std::to_string(worker) + "_op";
  for (int index = 0; index < iterations; ++index) {
    prof_span_begin(name.c_str());
    prof_span_begin("inner");
    prof_instant("mark");
    prof_span_end();
    prof_counter("progress", static_cast<double>(index));
    prof_span_end();
    issued += 6;
  }
  return issued;
}

}  // namespace

TEST_CASE("stress: recorded + dropped equals issued, exactly, with small rings") {
  constexpr int kThreads = 8;
  constexpr int kIterations = 20000;
  REQUIRE(prof_start("buffer_events=64,flush_interval_ms=1") == PROF_OK);
  std::atomic<uint64_t> issued{0};
  std::vector<std::thread> threads;
  for (int worker = 0; worker < kThreads; ++worker) {
    threads.emplace_back([worker, &issued] { issued += RecordMix(worker, kIterations); });
  }
  for (std::thread &thread : threads) thread.join();
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(issued.load() == uint64_t{kThreads} * kIterations * 6);
  CHECK(stats.events_recorded + stats.events_dropped == issued.load());
  CHECK(stats.events_dropped > 0);  // 64-event rings cannot keep up with this
  CHECK(stats.threads == kThreads);

  const Json trace = tfprof_test::ExportedTrace("stress.json");
  CHECK(trace["dropped_events"].get<uint64_t>() == stats.events_dropped);
  // Every recorded begin has its end (drops take both), so each span is two records.
  const uint64_t spans = tfprof_test::EventsWithPhase(trace, "X").size();
  const uint64_t instants = tfprof_test::EventsWithPhase(trace, "i").size();
  const uint64_t counters = tfprof_test::EventsWithPhase(trace, "C").size();
  CHECK(2 * spans + instants + counters == stats.events_recorded);
  CHECK(tfprof_test::NestingProblem(trace) == "");
  for (const Json &span : tfprof_test::EventsWithPhase(trace, "X")) {
    CHECK_FALSE(span.contains("args"));  // nothing left open
  }
  CHECK(tfprof_test::CompleteEventsByRow(trace).size() == kThreads);
}

TEST_CASE("stress: with full_ring_wait_ms, full rings wait for the collector and drop nothing") {
  // The same load as above, and ranges started in one burst and ended on other threads: with
  // back-pressure, the small rings wait instead of dropping, and the trace holds every call.
  constexpr int kThreads = 8;
  constexpr int kIterations = 5000;
  constexpr int kRangesPerThread = 2000;
  REQUIRE(prof_start("buffer_events=64,flush_interval_ms=1,full_ring_wait_ms=2000") == PROF_OK);
  std::vector<uint64_t> ranges(kThreads * kRangesPerThread);
  for (uint64_t &range : ranges) range = prof_range_start("r");
  std::atomic<uint64_t> issued{ranges.size()};
  std::vector<std::thread> threads;
  for (int worker = 0; worker < kThreads; ++worker) {
    threads.emplace_back([worker, &issued, &ranges] {
      issued += RecordMix(worker, kIterations);
      for (int index = 0; index < kRangesPerThread; ++index) {
        prof_range_end(ranges[static_cast<size_t>(worker * kRangesPerThread + index)]);
      }
      issued += kRangesPerThread;
    });
  }
  for (std::thread &thread : threads) thread.join();
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_dropped == 0);
  CHECK(stats.events_recorded == issued.load());

  const Json trace = tfprof_test::ExportedTrace("back_pressure.json");
  CHECK(trace["dropped_events"].get<uint64_t>() == 0);
  const uint64_t spans = tfprof_test::EventsWithPhase(trace, "X").size();
  const uint64_t instants = tfprof_test::EventsWithPhase(trace, "i").size();
  const uint64_t counters = tfprof_test::EventsWithPhase(trace, "C").size();
  // Ranges are async begin/end pairs, spans two records each: every call is there.
  const uint64_t range_begins = tfprof_test::EventsWithPhase(trace, "b").size();
  const uint64_t range_ends = tfprof_test::EventsWithPhase(trace, "e").size();
  CHECK(range_begins == ranges.size());
  CHECK(range_ends == ranges.size());
  CHECK(2 * spans + instants + counters + range_begins + range_ends == issued.load());
}

TEST_CASE("stress: short-lived threads hand over their rings while the collector runs") {
  constexpr int kWaves = 20;
  constexpr int kThreadsPerWave = 6;
  constexpr int kSpans = 300;
  REQUIRE(prof_start("buffer_events=1024,flush_interval_ms=1") == PROF_OK);
  for (int wave = 0; wave < kWaves; ++wave) {
    std::vector<std::thread> threads;
    for (int index = 0; index < kThreadsPerWave; ++index) {
      threads.emplace_back([] {
        for (int span = 0; span < kSpans; ++span) {
          prof_span_begin("short_lived");
          prof_span_end();
        }
      });
    }
    for (std::thread &thread : threads) thread.join();
  }
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_recorded + stats.events_dropped == uint64_t{kWaves} * kThreadsPerWave * kSpans * 2);
  CHECK(stats.events_dropped == 0);  // 1024 slots hold a whole thread's 600 records
  CHECK(stats.threads == kWaves * kThreadsPerWave);
  const std::string path = tfprof_test::TempPath("waves.json");
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  CHECK(tfprof_test::EventsWithPhase(tfprof_test::ReadTrace(path), "X").size() ==
        size_t{kWaves} * kThreadsPerWave * kSpans);
}

TEST_CASE("stress: sessions start, export and stop while other threads keep recording") {
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int worker = 0; worker < 4; ++worker) {
    threads.emplace_back([&done, worker] {
      while (!done.load(std::memory_order_relaxed)) {
        RecordMix(worker, 50);
        prof_begin_step(worker);
        prof_end_step();
      }
    });
  }
  for (int round = 0; round < 30; ++round) {
    REQUIRE(prof_start(round % 2 == 0 ? "buffer_events=128" : "buffer_events=4096,flush_interval_ms=0") ==
            PROF_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const prof_stats_t stats = tfprof_test::CurrentStats();
    CHECK(stats.running == 1);
    if (round % 5 == 0) {
      const Json trace = tfprof_test::ExportedTrace("racing.json");
      CHECK(tfprof_test::NestingProblem(trace) == "");
    }
    REQUIRE(prof_stop() == PROF_OK);
  }
  done = true;
  for (std::thread &thread : threads) thread.join();
}
