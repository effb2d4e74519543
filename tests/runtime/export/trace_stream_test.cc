// TraceStream: a session output written piece by piece on the writer thread. A writer that falls
// behind makes pieces be dropped and counted, never block, and the streamed Chrome JSON stays a
// complete trace whatever was dropped; TensorFlow files grow by whole records.
#include "runtime/export/trace_stream.h"

#include <doctest/doctest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/storage/background_writer.h"
#include "runtime/collector/clock.h"
#include "runtime/collector/event.h"
#include "runtime/export/export_context.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/session/session_log.h"
#include "support/export_context_builder.h"
#include "support/test_files.h"

namespace {

using nlohmann::json;
using tfprof::Event;
using tfprof::EventKind;
using tfprof::Format;
using tfprof::TraceStream;
using tfprof_test::ReadFile;
using tfprof_test::TempDir;

// One thread's steps, each holding a span, at whole milliseconds from the session's start.
struct Session {
  tfprof::SessionLog log;
  tfprof::ExportContext context = tfprof_test::TrainerContext();
  int64_t base = 0;

  Session() {
    base = context.converter.start_ns();
    context.start_monotonic_ns = base;
    context.start_wall_ns = 1'700'000'000'000'000'000;
    log.AddTrack(1001);
    log.tracks[0].name = "main";
  }
  void Add(int64_t ms, EventKind kind, uint64_t arg = 0, const char *name = "") {
    log.tracks[0].events.Append(Event{static_cast<uint64_t>(base + ms * 1'000'000), arg,
                                      log.names.Intern(name), kind, 0});
    ++context.events_recorded;
  }
  void Step(int64_t step) {
    const int64_t at = step * 10;
    Add(at, EventKind::kStepBegin, static_cast<uint64_t>(step));
    Add(at + 1, EventKind::kSpanBegin, 0, "work");
    Add(at + 2, EventKind::kSpanEnd);
    Add(at + 5, EventKind::kStepEnd);
  }
  // A step of `spans` spans of "op", a microsecond apart.
  void BigStep(int64_t step, int spans) {
    const int64_t at_ns = base + step * 10'000'000;
    const auto add = [&](int64_t ns, EventKind kind, uint64_t arg, const char *name) {
      log.tracks[0].events.Append(
          Event{static_cast<uint64_t>(ns), arg, log.names.Intern(name), kind, 0});
      ++context.events_recorded;
    };
    add(at_ns, EventKind::kStepBegin, static_cast<uint64_t>(step), "");
    for (int span = 0; span < spans; ++span) {
      add(at_ns + 1000 + span * 1000, EventKind::kSpanBegin, 0, "op");
      add(at_ns + 1500 + span * 1000, EventKind::kSpanEnd, 0, "");
    }
    add(at_ns + 5'000'000, EventKind::kStepEnd, 0, "");
  }
  // Everything recorded so far is drained and settled.
  int64_t Settled() const { return base + 1'000'000'000; }
};

std::vector<int64_t> StepsOf(const json &trace) {
  std::vector<int64_t> steps;
  for (const json &event : trace.at("traceEvents")) {
    if (event.value("cat", "") == "step") steps.push_back(event.at("args").at("step"));
  }
  return steps;
}

// A writer with a budget smaller than a piece, kept busy (slow storage) until Release().
struct BusyWriter {
  BusyWriter() { REQUIRE(writer.TrySubmit(1, [released = released] { released.wait(); })); }
  void Release() {
    release.set_value();
    writer.WaitIdle();
  }

  tfprof::BackgroundWriter writer{1024};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
};

// A session whose stream writes on a busy writer, into a scratch directory.
struct StreamBehind {
  std::unique_ptr<TraceStream> Open(Format format, const std::string &path) {
    absl::StatusOr<std::unique_ptr<TraceStream>> stream =
        TraceStream::Open(format, path, session.context, &busy.writer);
    REQUIRE(stream.ok());
    return std::move(*stream);
  }

  TempDir dir;
  Session session;
  BusyWriter busy;
};

}  // namespace

TEST_CASE_FIXTURE(StreamBehind,
                  "trace stream: a writer that falls behind holds the piece back; the steps wait, none lost") {
  const std::string path = dir.File("behind.json");
  const std::unique_ptr<TraceStream> stream = Open(Format::kChromeJson, path);
  CHECK(StepsOf(json::parse(ReadFile(path))).empty());  // complete from the start

  session.Step(1);
  session.Step(2);
  stream->Append(session.log, session.context, session.Settled(), tfprof::kGpuCompleteAlways);
  CHECK(stream->pieces() == 1);  // encoded, held back for the writer
  session.Step(3);
  stream->Append(session.log, session.context, session.Settled(), tfprof::kGpuCompleteAlways);
  CHECK(stream->pieces() == 1);  // the writer still behind: step 3 waits in the session
  CHECK(stream->dropped_records() == 0);
  CHECK(StepsOf(json::parse(ReadFile(path))).empty());

  busy.Release();
  stream->Append(session.log, session.context, session.Settled(), tfprof::kGpuCompleteAlways);
  busy.writer.WaitIdle();
  // The held piece went first; the file is a whole trace after it, steps in order.
  const std::vector<int64_t> written = StepsOf(json::parse(ReadFile(path)));
  REQUIRE(written.size() >= 2);
  CHECK(std::vector<int64_t>(written.begin(), written.begin() + 2) == std::vector<int64_t>{1, 2});

  session.context.end_ns = session.base + 100'000'000;
  REQUIRE(stream->Finish(session.log, session.context).ok());
  const json trace = json::parse(ReadFile(path));
  CHECK(StepsOf(trace) == std::vector<int64_t>{1, 2, 3});
  CHECK(trace.at("tfprof").at("memory_dropped_events") == 0);
  CHECK(trace.at("tfprof").at("events_recorded") == 12);
  CHECK(stream->dropped_records() == 0);
}

TEST_CASE("trace stream: a TFRecord grows by whole records, the last one carrying the losses") {
  TempDir dir;
  const std::string path = dir.File("steps.tfrecord");
  Session session;
  tfprof::BackgroundWriter writer(64 << 20);
  absl::StatusOr<std::unique_ptr<TraceStream>> stream =
      TraceStream::Open(Format::kTfRecord, path, session.context, &writer);
  REQUIRE(stream.ok());
  const auto records = [&] {
    writer.WaitIdle();
    const std::string bytes = ReadFile(path);
    tfprof::TfRecordReader reader(bytes);
    std::string_view record;
    size_t count = 0;
    absl::Status status;
    while ((status = reader.Next(&record)).ok()) ++count;
    CHECK(absl::IsOutOfRange(status));
    return count;
  };
  for (int64_t step = 1; step <= 3; ++step) {
    session.Step(step);
    (*stream)->Append(session.log, session.context, session.Settled(), tfprof::kGpuCompleteAlways);
    CHECK(records() == static_cast<size_t>(step));
  }
  session.context.end_ns = session.base + 100'000'000;
  REQUIRE((*stream)->Finish(session.log, session.context).ok());
  CHECK(records() == 4);  // the three steps and the record of the losses
  CHECK((*stream)->dropped_records() == 0);
}

TEST_CASE("trace stream: a backlog is written in small pieces, nothing lost, steps in order") {
  TempDir dir;
  const std::string path = dir.File("backlog.json");
  Session session;
  absl::StatusOr<std::unique_ptr<TraceStream>> stream =
      TraceStream::Open(Format::kChromeJson, path, session.context, nullptr);
  REQUIRE(stream.ok());
  // 2 s of steps arriving at once, as when the collector fell behind: about 400,000 records.
  for (int64_t step = 0; step < 200; ++step) session.BigStep(step, 1000);
  // The collector drains the rings between pieces.
  int between_pieces = 0;
  (*stream)->Append(session.log, session.context, session.base + 2'100'000'000,
                    tfprof::kGpuCompleteAlways, [&] { ++between_pieces; });
  // About 16,000 records a piece: 24 pieces, not one of 400,000 records.
  CHECK((*stream)->pieces() >= 20);
  CHECK((*stream)->pieces() <= 26);
  CHECK(between_pieces >= 19);
  session.context.end_ns = session.base + 2'200'000'000;
  REQUIRE((*stream)->Finish(session.log, session.context).ok());
  const json trace = json::parse(ReadFile(path));
  std::vector<int64_t> expected(200);
  for (int64_t step = 0; step < 200; ++step) expected[static_cast<size_t>(step)] = step;
  CHECK(StepsOf(trace) == expected);
  size_t spans = 0;
  for (const json &event : trace.at("traceEvents")) spans += event.value("name", "") == "op";
  CHECK(spans == 200'000);
  CHECK(trace.at("tfprof").at("memory_dropped_events") == 0);
}

TEST_CASE_FIXTURE(StreamBehind,
                  "trace stream: a Perfetto trace whose writer fell behind keeps every step, in order") {
  const std::string path = dir.File("behind.pftrace");
  const std::unique_ptr<TraceStream> stream = Open(Format::kPerfetto, path);
  // The held piece interned "work", "step", the categories and described the tracks: it must be
  // written before the packets that lean on that.
  session.Step(1);
  session.Step(2);
  stream->Append(session.log, session.context, session.Settled(), tfprof::kGpuCompleteAlways);
  CHECK(stream->dropped_records() == 0);  // held back, not dropped
  busy.Release();
  session.Step(3);
  stream->Append(session.log, session.context, session.Settled(), tfprof::kGpuCompleteAlways);
  busy.writer.WaitIdle();
  session.Step(4);
  session.context.end_ns = session.base + 100'000'000;
  REQUIRE(stream->Finish(session.log, session.context).ok());

  // (The name "work" is inside a deflated batch: the trace read back shows it was written.)
  absl::StatusOr<tfprof::Trace> trace = tfprof::LoadTrace(path, tfprof::LoadOptions());
  REQUIRE(trace.ok());
  std::vector<int64_t> steps;
  for (const tfprof::Step &step : trace->steps) steps.push_back(step.number);
  CHECK(steps == std::vector<int64_t>{1, 2, 3, 4});
  REQUIRE(trace->activities.size() == 4);
  for (const tfprof::Activity &activity : trace->activities) {
    CHECK(trace->names.Get(activity.name) == "work");
    CHECK(trace->tracks[activity.track].name == "main");
    CHECK(activity.end_ns - activity.begin_ns == 1'000'000);
  }
  CHECK(trace->losses.reported);
  CHECK(trace->losses.memory_dropped_events == 0);
  CHECK(trace->events_recorded == 16);
  CHECK(trace->wall_offset_ns.has_value());
}
