// TraceBuilder: processes by pid or by name, rows by tid or by name, begin/end pairing with spans
// a killed writer left open, steps sorted at the end, the time extent, unknown categories, and
// Finish() giving every activity its step and linking launches to their work.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/trace_builder.h"

namespace tfprof {
namespace {

TEST_CASE("trace builder: a process per pid, or per name and recording") {
  Trace trace;
  TraceBuilder builder(&trace);
  bool added = false;
  const uint32_t first = builder.ProcessFor(42, &added);
  CHECK(added);
  CHECK(builder.ProcessFor(42, &added) == first);
  CHECK_FALSE(added);
  CHECK(builder.ProcessFor(7) != first);
  REQUIRE(trace.processes.size() == 2);
  CHECK(trace.processes[first].pid == 42);

  builder.set_first_pid(1);  // formats without pids number their processes
  const uint32_t gpu = builder.NamedProcess("GPU 0");
  CHECK(trace.processes[gpu].pid == 3);
  CHECK(trace.processes[gpu].name == "GPU 0");
  CHECK(builder.NamedProcess("GPU 0") == gpu);
  const uint32_t other_host = builder.NamedProcess("GPU 0", 1, &added);  // another recording
  CHECK(added);
  CHECK(other_host != gpu);
  CHECK(trace.processes[other_host].group == 1);

  CHECK(builder.FindProcess(42) == first);  // found, nothing made
  CHECK_FALSE(builder.FindProcess(99).has_value());
  CHECK(trace.processes.size() == 4);
}

TEST_CASE("trace builder: rows by thread id, by name, a counters row, and new rows") {
  Trace trace;
  TraceBuilder builder(&trace);
  const uint32_t host = builder.ProcessFor(100);
  const uint32_t gpu = builder.ProcessFor(0);
  bool added = false;
  const uint32_t main_thread = builder.ThreadRow(host, 100, &added);
  CHECK(added);
  CHECK(builder.ThreadRow(host, 100, &added) == main_thread);
  CHECK_FALSE(added);
  CHECK(builder.ThreadRow(gpu, 100) != main_thread);  // the same tid in another process
  // By pid: the same rows, in one lookup once seen.
  CHECK_FALSE(builder.FindThreadRowByPid(100, 101).has_value());
  CHECK(builder.ThreadRowByPid(100, 100, &added) == main_thread);
  CHECK_FALSE(added);
  CHECK(builder.FindThreadRowByPid(100, 100) == main_thread);  // found, nothing made
  const uint32_t second_thread = builder.ThreadRowByPid(100, 101, &added);
  CHECK(added);
  CHECK(builder.ThreadRow(host, 101) == second_thread);
  CHECK(builder.FindThreadRowByPid(100, 101) == second_thread);
  CHECK_FALSE(builder.FindThreadRowByPid(5, 100).has_value());

  const uint32_t sync = builder.NamedRow(gpu, "stream 7 sync", TrackKind::kGpuSync, 1000007);
  CHECK(builder.NamedRow(gpu, "stream 7 sync", TrackKind::kGpuSync, 1000007) == sync);
  CHECK(trace.tracks[sync].kind == TrackKind::kGpuSync);
  CHECK(trace.tracks[sync].tid == 1000007);
  CHECK(trace.tracks[sync].name == "stream 7 sync");

  const uint32_t counters = builder.CounterRow(gpu);
  CHECK(builder.CounterRow(gpu) == counters);
  CHECK(trace.tracks[counters].kind == TrackKind::kCounters);
  CHECK(trace.tracks[counters].process == gpu);

  // A row no key finds: a thread whose OS id was reused gets its own.
  const uint32_t reused = builder.NewRow(host, 100, "worker");
  CHECK(reused != main_thread);
  CHECK(builder.ThreadRow(host, 100) == main_thread);
  CHECK(builder.ThreadRowByPid(100, 100) == main_thread);
  CHECK(trace.tracks.size() == 6);
}

TEST_CASE("trace builder: ends close the innermost begin of their row; open ones end at the end") {
  Trace trace;
  TraceBuilder builder(&trace);
  const uint32_t row = builder.ThreadRow(builder.ProcessFor(1), 1);
  const uint32_t other = builder.ThreadRow(builder.ProcessFor(1), 2);
  struct Open {
    int64_t begin_ns;
    std::string name;
  };
  OpenSpans<Open> spans;
  CHECK_FALSE(spans.End(row).has_value());  // an end whose begin the file does not hold
  for (const int64_t ns : {10, 20, 30, 45}) builder.NoteTime(ns);
  spans.Begin(row, {10, "outer"});
  spans.Begin(row, {20, "inner"});
  spans.Begin(other, {15, "other"});
  const std::optional<Open> inner = spans.End(row);
  REQUIRE(inner.has_value());
  CHECK(inner->name == "inner");
  CHECK(spans.open_on(row) == 1);
  CHECK(spans.open_on(other) == 1);
  CHECK(spans.open_on(99) == 0);

  // A killed writer: the spans still open end at the last time the file holds, marked incomplete.
  std::vector<Activity> ended;
  spans.EndAll([&](uint32_t on, const Open &open) {
    Activity activity;
    activity.begin_ns = open.begin_ns;
    activity.end_ns = builder.end_ns();
    activity.track = on;
    activity.flags = kActivityIncomplete;
    ended.push_back(activity);
  });
  REQUIRE(ended.size() == 2);
  CHECK(ended[0].track == row);
  CHECK(ended[0].begin_ns == 10);
  CHECK(ended[0].end_ns == 45);
  CHECK(ended[1].track == other);
  CHECK(spans.open_on(row) == 0);
  CHECK(builder.begin_ns() == 10);
  CHECK(builder.has_time());
}

TEST_CASE("trace builder: a row's open spans taken aside, outermost first") {
  OpenSpans<int> spans;
  CHECK(spans.Take(3).empty());  // a row never used
  spans.Begin(3, 1);
  spans.Begin(3, 2);
  spans.Begin(4, 9);
  const std::vector<int> taken = spans.Take(3);
  CHECK(taken == std::vector<int>{1, 2});
  CHECK(spans.open_on(3) == 0);
  CHECK(spans.open_on(4) == 1);
  CHECK_FALSE(spans.End(3).has_value());
}

TEST_CASE("trace builder: Finish sorts steps, assigns them, links launches, lists categories") {
  Trace trace;
  TraceBuilder builder(&trace);
  const uint32_t host = builder.ProcessFor(1);
  const uint32_t gpu = builder.ProcessFor(2);
  const uint32_t thread = builder.ThreadRow(host, 1);
  const uint32_t stream = builder.ThreadRow(gpu, 7);
  // Steps arrive out of order; ties keep their order.
  builder.AddStep(Step{2, 200, 300, host});
  builder.AddStep(Step{1, 100, 200, host});
  builder.AddStep(Step{9, 100, 150, host});

  Activity op;
  op.begin_ns = 210;
  op.end_ns = 250;
  op.track = thread;
  builder.AddActivity(op);

  GpuDetail call_detail;
  call_detail.correlation = 5;
  call_detail.fields = kGpuHasCorrelation;
  Activity call;
  call.begin_ns = 120;
  call.end_ns = 130;
  call.track = thread;
  call.kind = ActivityKind::kRuntimeApi;
  call.detail = builder.AddGpuDetail(call.kind, call_detail);
  builder.AddActivity(call);

  Activity kernel;  // runs in step 2's time, launched in step 1's
  kernel.begin_ns = 220;
  kernel.end_ns = 230;
  kernel.track = stream;
  kernel.kind = ActivityKind::kKernel;
  kernel.detail = builder.AddGpuDetail(kernel.kind, call_detail);
  builder.AddActivity(kernel);

  builder.NoteUnknownCategory("zeta");
  builder.NoteUnknownCategory("alpha");
  builder.NoteUnknownCategory("zeta");
  builder.NoteUnknownCategory("Op");
  builder.ForgetUnknownCategory("Op");
  builder.Finish();

  REQUIRE(trace.steps.size() == 3);
  CHECK(trace.steps[0].number == 1);
  CHECK(trace.steps[1].number == 9);
  CHECK(trace.steps[2].number == 2);
  CHECK(trace.activities[0].step == 2);
  CHECK(trace.gpu_details.Get(kernel.detail).launch_ns == 120);
  CHECK((trace.gpu_details.Get(call.detail).fields & kGpuLaunchesWork) != 0);
  CHECK(trace.activities[2].step == trace.activities[1].step);  // the launch's step
  CHECK(trace.activities[1].step != kNoStep);
  using Count = std::pair<std::string, uint64_t>;
  CHECK(trace.unknown_categories == std::vector<Count>{{"alpha", 1}, {"zeta", 2}});
}

}  // namespace
}  // namespace tfprof
