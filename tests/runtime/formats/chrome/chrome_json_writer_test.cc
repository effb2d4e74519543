// The session's Chrome trace export: a hand-built session log written by ExportTrace() (the
// session's pieces of the trace model through the one Chrome JSON writer) and read back with a
// real JSON parser.
#include "runtime/export/exporter.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/collector/event.h"
#include "runtime/export/export_context.h"
#include "runtime/common/output_sink.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/session/session_log.h"
#include "support/export_context_builder.h"
#include "support/test_files.h"
#include "tfprof/tfprof.h"

namespace {

using tfprof_test::Gunzip;
using tfprof_test::ReadFile;
using tfprof_test::TempDir;

namespace fs = std::filesystem;
using nlohmann::json;
using tfprof::Event;
using tfprof::EventKind;
using tfprof::ExportContext;
using tfprof::OutputSink;
using tfprof::SessionLog;

constexpr int64_t kStepRowTid = 2000000000;  // step rows: 2e9 + track index
constexpr int64_t kMainTid = 1234;
constexpr int64_t kWorkerTid = 5678;

// Writes `model` to `path` (a .json, or with `gzip` a .json.gz) and returns the file's text.
std::string WriteTrace(const SessionLog &model, const ExportContext &context,
                       const std::string &path, bool gzip = false) {
  const absl::Status written = tfprof::ExportTrace(model, context, path);
  INFO("export: ", std::string(tfprof::ToStd(written.message())));
  REQUIRE(written.ok());
  return gzip ? Gunzip(path) : ReadFile(path);
}

// Places events at nanosecond offsets from a base (a whole millisecond) so that expected
// timestamps are easy to state: offset 1500 is base_us + 1.500.
struct TraceBuilder {
  SessionLog model;
  ExportContext context = tfprof_test::TrainerContext();
  int64_t base = 0;
  int64_t base_us = 0;

  TraceBuilder() {
    base = context.converter.start_ns() / 1000000 * 1000000;
    base_us = base / 1000;
    context.losses.dropped = 7;
  }

  uint64_t Ticks(int64_t offset) const { return static_cast<uint64_t>(base + offset); }
  void Add(size_t track, int64_t offset, EventKind kind, uint32_t name, uint64_t arg) {
    model.tracks[track].events.Append(Event{Ticks(offset), arg, name, kind, 0});
  }
  void SpanBegin(size_t track, int64_t offset, std::string_view name) {
    Add(track, offset, EventKind::kSpanBegin, model.names.Intern(name), 0);
  }
  void SpanEnd(size_t track, int64_t offset) { Add(track, offset, EventKind::kSpanEnd, 0, 0); }
  void Instant(size_t track, int64_t offset, std::string_view name) {
    Add(track, offset, EventKind::kInstant, model.names.Intern(name), 0);
  }
  void Counter(size_t track, int64_t offset, std::string_view name, double value) {
    Add(track, offset, EventKind::kCounter, model.names.Intern(name), tfprof::DoubleBits(value));
  }
  void StepBegin(size_t track, int64_t offset, int64_t step) {
    Add(track, offset, EventKind::kStepBegin, 0, static_cast<uint64_t>(step));
  }
  void StepEnd(size_t track, int64_t offset) { Add(track, offset, EventKind::kStepEnd, 0, 0); }
  void SetEnd(int64_t offset) { context.end_ns = base + offset; }

  // A timestamp field (microseconds) as nanoseconds from the base.
  int64_t Offset(const json &micros) const {
    return std::llround(micros.get<double>() * 1000.0) - base;
  }
  static int64_t Nanos(const json &micros) { return std::llround(micros.get<double>() * 1000.0); }

  // `span` is on row `tid`, begins `begin` ns after the base and lasts `duration` ns.
  void CheckPlacement(const json &span, int64_t tid, int64_t begin, int64_t duration) const {
    INFO("span ", span.at("name").get<std::string>());
    CHECK(span.at("tid") == tid);
    CHECK(Offset(span.at("ts")) == begin);
    CHECK(Nanos(span.at("dur")) == duration);
  }
};

// `b`'s trace written to a file of a fresh directory: the file's text.
std::string WriteTrace(const TraceBuilder &b) {
  TempDir dir;
  return WriteTrace(b.model, b.context, dir.File("trace.json"));
}

std::vector<json> EventsWhere(const json &trace, const std::string &ph, const std::string &name) {
  std::vector<json> found;
  for (const json &event : trace.at("traceEvents")) {
    if (event.at("ph") == ph && event.at("name") == name) found.push_back(event);
  }
  return found;
}

// The one event with this phase and name (on this tid when given).
json OnlyEvent(const json &trace, const std::string &ph, const std::string &name,
               int64_t tid = -1) {
  std::vector<json> found;
  for (const json &event : EventsWhere(trace, ph, name)) {
    if (tid < 0 || event.at("tid") == tid) found.push_back(event);
  }
  INFO("ph=", ph, " name=", name, " tid=", tid);
  REQUIRE(found.size() == 1);
  return found[0];
}

// The metadata record of `kind` for `tid`.
json Metadata(const json &trace, const std::string &kind, int64_t tid) {
  return OnlyEvent(trace, "M", kind, tid);
}

const std::string kQuotedName = "say \"hi\"\n\ttab\x01";
const std::string kInvalidName = "bad\xff" "byte\xC0\xAF";
const std::string kInvalidDecoded = "bad\xEF\xBF\xBD" "byte\xEF\xBF\xBD\xEF\xBF\xBD";

// Two threads: "main" marks two steps (the second still open at the end) and records nested
// spans, an instant, counters (one NaN), a span with an awkward name and a span left open;
// an unnamed worker records a span with an invalid UTF-8 name inside step 1 and one between steps.
TraceBuilder BuildTwoThreadTrace() {
  TraceBuilder b;
  b.model.AddTrack(kMainTid);
  b.model.tracks[0].name = "main";
  b.model.AddTrack(kWorkerTid);

  b.StepBegin(0, 1000, 1);
  b.SpanBegin(0, 1500, "outer");
  b.SpanBegin(0, 2000, "inner");
  b.Instant(0, 2500, "marker");
  b.SpanEnd(0, 3000);
  b.Counter(0, 3200, "loss", 0.25);
  b.SpanEnd(0, 4000);
  b.StepEnd(0, 5000);
  b.SpanBegin(0, 6000, kQuotedName);
  b.SpanEnd(0, 6500);
  b.StepBegin(0, 7000, 2);
  b.Counter(0, 7100, "nan_counter", std::numeric_limits<double>::quiet_NaN());
  b.SpanBegin(0, 7500, "open_span");  // never closed

  b.SpanBegin(1, 1200, kInvalidName);
  b.SpanEnd(1, 1800);
  b.SpanBegin(1, 5200, "inner");
  b.SpanEnd(1, 5300);

  b.SetEnd(10000);
  return b;
}

// The two-thread trace as the Chrome writer writes it, parsed.
struct WrittenTwoThreadTrace {
  const TraceBuilder b = BuildTwoThreadTrace();
  const json trace = json::parse(WriteTrace(b));
};

}  // namespace

TEST_CASE("chrome trace writer: header fields and loss counts") {
  TraceBuilder b = BuildTwoThreadTrace();
  b.context.losses.unmatched_span_ends = 2;
  b.context.losses.unmatched_step_ends = 3;
  b.context.events_recorded = 17;
  b.context.start_wall_ns = 1700000000123456789;
  b.context.start_monotonic_ns = 55555;
  const json trace = json::parse(WriteTrace(b));

  CHECK(trace.at("displayTimeUnit") == "ns");
  CHECK(trace.at("dropped_events") == 7);
  const json &meta = trace.at("tfprof");
  CHECK(meta.at("version") == prof_version_string());
  CHECK(meta.at("clock") == "monotonic");
  CHECK(meta.at("start_time_unix_ns") == 1700000000123456789);
  CHECK(meta.at("start_time_monotonic_ns") == 55555);
  CHECK(meta.at("end_time_monotonic_ns") == b.base + 10000);
  CHECK(meta.at("events_recorded") == 17);
  CHECK(meta.at("unmatched_span_ends") == 2);
  CHECK(meta.at("unmatched_step_ends") == 3);
  CHECK(trace.at("traceEvents").is_array());
}

TEST_CASE("chrome trace writer: process and thread metadata with sort indices") {
  TraceBuilder b = BuildTwoThreadTrace();
  b.context.process_name = "trainer \"rank 0\"";
  const json trace = json::parse(WriteTrace(b));

  int metadata_count = 0;
  for (const json &event : trace.at("traceEvents")) {
    CHECK(event.at("pid") == 4242);
    if (event.at("ph") == "M") ++metadata_count;
  }
  CHECK(metadata_count == 8);

  CHECK(Metadata(trace, "process_name", 0).at("args").at("name") == "trainer \"rank 0\"");
  CHECK(Metadata(trace, "process_sort_index", 0).at("args").at("sort_index") == 0);
  // One thread marks steps: its step row is simply "Steps", sorted first.
  CHECK(Metadata(trace, "thread_name", kStepRowTid).at("args").at("name") == "Steps");
  CHECK(Metadata(trace, "thread_sort_index", kStepRowTid).at("args").at("sort_index") == 0);
  CHECK(Metadata(trace, "thread_name", kMainTid).at("args").at("name") == "main");
  CHECK(Metadata(trace, "thread_sort_index", kMainTid).at("args").at("sort_index") == 1);
  // A thread without a name is labelled with its id.
  CHECK(Metadata(trace, "thread_name", kWorkerTid).at("args").at("name") == "thread 5678");
  CHECK(Metadata(trace, "thread_sort_index", kWorkerTid).at("args").at("sort_index") == 2);
}

TEST_CASE_FIXTURE(WrittenTwoThreadTrace,
                  "chrome trace writer: spans with names, times, rows and steps") {
  const json outer = OnlyEvent(trace, "X", "outer");
  CHECK(outer.at("cat") == "user_annotation");
  b.CheckPlacement(outer, kMainTid, 1500, 2500);
  CHECK(outer.at("ts").get<double>() == static_cast<double>(b.base_us) + 1.5);
  CHECK(outer.at("dur").get<double>() == 2.5);
  CHECK(outer.at("args") == json{{"step", 1}});

  const json inner = OnlyEvent(trace, "X", "inner", kMainTid);
  CHECK(b.Offset(inner.at("ts")) == 2000);
  CHECK(TraceBuilder::Nanos(inner.at("dur")) == 1000);
  CHECK(inner.at("args") == json{{"step", 1}});

  // Between the two steps: no step argument at all.
  const json quoted = OnlyEvent(trace, "X", kQuotedName);
  b.CheckPlacement(quoted, kMainTid, 6000, 500);
  CHECK_FALSE(quoted.contains("args"));

  // The worker's spans are on its own row; step 1 (marked by main) covers its first span.
  const json invalid = OnlyEvent(trace, "X", kInvalidDecoded);
  b.CheckPlacement(invalid, kWorkerTid, 1200, 600);
  CHECK(invalid.at("args") == json{{"step", 1}});

  const json worker_inner = OnlyEvent(trace, "X", "inner", kWorkerTid);
  CHECK(b.Offset(worker_inner.at("ts")) == 5200);
  CHECK(TraceBuilder::Nanos(worker_inner.at("dur")) == 100);
  CHECK_FALSE(worker_inner.contains("args"));

  // Exactly the spans recorded, nothing more: 6 thread spans and 2 step spans.
  int spans = 0;
  for (const json &event : trace.at("traceEvents")) spans += event.at("ph") == "X" ? 1 : 0;
  CHECK(spans == 8);
}

TEST_CASE_FIXTURE(WrittenTwoThreadTrace,
                  "chrome trace writer: an unclosed span is incomplete and ends at end_ns") {
  const json open = OnlyEvent(trace, "X", "open_span");
  b.CheckPlacement(open, kMainTid, 7500, 2500);  // to end_ns at offset 10000
  CHECK(open.at("args").at("incomplete") == true);
  CHECK(open.at("args").at("step") == 2);
  CHECK(open.at("args").size() == 2);
  // Closed spans carry no incomplete flag.
  CHECK_FALSE(OnlyEvent(trace, "X", "outer").at("args").contains("incomplete"));
}

TEST_CASE_FIXTURE(WrittenTwoThreadTrace,
                  "chrome trace writer: steps are spans on their own row") {
  const json step1 = OnlyEvent(trace, "X", "step 1");
  b.CheckPlacement(step1, kStepRowTid, 1000, 4000);
  CHECK(step1.at("cat") == "step");
  // The thread that marked it: the summary judges input wait on it.
  CHECK(step1.at("args") == json{{"step", 1}, {"thread", kMainTid}});

  const json step2 = OnlyEvent(trace, "X", "step 2");
  b.CheckPlacement(step2, kStepRowTid, 7000, 3000);  // open: ends at end_ns
  CHECK(step2.at("args") == json{{"incomplete", true}, {"step", 2}, {"thread", kMainTid}});

  // Nothing but steps on the step row.
  for (const json &event : trace.at("traceEvents")) {
    if (event.at("tid") == kStepRowTid && event.at("ph") != "M") CHECK(event.at("cat") == "step");
  }
}

TEST_CASE("chrome trace writer: instants and counters") {
  const TraceBuilder b = BuildTwoThreadTrace();
  const std::string text = WriteTrace(b);
  const json trace = json::parse(text);

  const json marker = OnlyEvent(trace, "i", "marker");
  CHECK(marker.at("s") == "t");
  CHECK(marker.at("tid") == kMainTid);
  CHECK(b.Offset(marker.at("ts")) == 2500);
  CHECK(marker.at("args") == json{{"step", 1}});
  CHECK_FALSE(marker.contains("dur"));

  const json loss = OnlyEvent(trace, "C", "loss");
  CHECK(loss.at("tid") == kMainTid);
  CHECK(b.Offset(loss.at("ts")) == 3200);
  CHECK(loss.at("args") == json{{"value", 0.25}});

  // NaN has no JSON number: written as the string "NaN", and the file still parses.
  const json nan_counter = OnlyEvent(trace, "C", "nan_counter");
  CHECK(b.Offset(nan_counter.at("ts")) == 7100);
  CHECK(nan_counter.at("args").at("value") == "NaN");
  CHECK(text.find("\"value\":\"NaN\"") != std::string::npos);
  CHECK(text.find(":nan") == std::string::npos);
}

TEST_CASE("chrome trace writer: names are escaped and invalid UTF-8 becomes U+FFFD") {
  const TraceBuilder b = BuildTwoThreadTrace();
  const std::string text = WriteTrace(b);
  // The raw text holds the escapes and no raw control byte or invalid byte.
  CHECK(text.find("\"say \\\"hi\\\"\\n\\ttab\\u0001\"") != std::string::npos);
  CHECK(text.find('\x01') == std::string::npos);
  CHECK(text.find('\xff') == std::string::npos);
  CHECK(text.find("\"bad\xEF\xBF\xBD" "byte\xEF\xBF\xBD\xEF\xBF\xBD\"") != std::string::npos);
  const json trace = json::parse(text);
  CHECK(EventsWhere(trace, "X", kQuotedName).size() == 1);
  CHECK(EventsWhere(trace, "X", kInvalidDecoded).size() == 1);
}

TEST_CASE("chrome trace writer: ts and dur have exactly three decimals in the text") {
  const TraceBuilder b = BuildTwoThreadTrace();
  const std::string text = WriteTrace(b);

  const std::regex field("\"(ts|dur)\":([^,}]*)");
  const std::regex three_decimals("-?[0-9]+\\.[0-9]{3}");
  int fields = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), field);
       it != std::sregex_iterator(); ++it) {
    const std::string value = (*it)[2].str();
    CAPTURE(value);
    CHECK(std::regex_match(value, three_decimals));
    ++fields;
  }
  // 8 spans (ts and dur) + 1 instant + 2 counters.
  CHECK(fields == 8 * 2 + 1 + 2);

  // Exact spellings: outer begins at base + 1500 ns and lasts 2500 ns; step 1 begins at
  // base + 1000 ns.
  CHECK(text.find("\"name\":\"outer\",\"pid\":4242,\"tid\":1234,\"ts\":" +
                  std::to_string(b.base_us + 1) + ".500,\"dur\":2.500") != std::string::npos);
  CHECK(text.find("\"ts\":" + std::to_string(b.base_us + 1) + ".000,\"dur\":4.000") !=
        std::string::npos);
  CHECK(text.find("\"dur\":0.100") != std::string::npos);  // the worker's 100 ns span
}

TEST_CASE("chrome trace writer: small absolute times keep their exact value") {
  // With a converter anchored at 0 the recorded ticks are the nanoseconds themselves.
  TempDir dir;
  SessionLog model;
  const uint32_t name = model.names.Intern("tiny");
  model.AddTrack(1);
  model.tracks[0].events.Append(Event{1500, 0, name, EventKind::kSpanBegin, 0});
  model.tracks[0].events.Append(Event{2001, 0, 0, EventKind::kSpanEnd, 0});
  ExportContext context;  // default converter: ticks are CLOCK_MONOTONIC nanoseconds
  context.end_ns = 5000;
  const std::string text = WriteTrace(model, context, dir.File("tiny.json"));
  CHECK(text.find("\"ts\":1.500,\"dur\":0.501") != std::string::npos);
  const json span = OnlyEvent(json::parse(text), "X", "tiny");
  CHECK(span.at("ts").get<double>() == 1.5);
  CHECK(span.at("dur").get<double>() == 0.501);
}

TEST_CASE("chrome trace writer: several threads marking steps get one labelled row each") {
  TempDir dir;
  TraceBuilder b;
  b.model.AddTrack(kMainTid);
  b.model.tracks[0].name = "main";
  b.model.AddTrack(kWorkerTid);
  b.StepBegin(0, 1000, 1);
  b.StepEnd(0, 2000);
  b.StepBegin(1, 1500, 10);
  b.StepEnd(1, 2500);
  b.SpanBegin(1, 2200, "late");
  b.SpanEnd(1, 2300);
  b.SetEnd(3000);
  const json trace = json::parse(WriteTrace(b.model, b.context, dir.File("steps.json")));

  CHECK(Metadata(trace, "thread_name", kStepRowTid + 0).at("args").at("name") == "Steps (main)");
  CHECK(Metadata(trace, "thread_sort_index", kStepRowTid + 0).at("args").at("sort_index") == 0);
  CHECK(Metadata(trace, "thread_name", kStepRowTid + 1).at("args").at("name") ==
        "Steps (thread 5678)");
  CHECK(Metadata(trace, "thread_sort_index", kStepRowTid + 1).at("args").at("sort_index") == 1);
  CHECK(Metadata(trace, "thread_sort_index", kMainTid).at("args").at("sort_index") == 2);
  CHECK(Metadata(trace, "thread_sort_index", kWorkerTid).at("args").at("sort_index") == 3);

  CHECK(OnlyEvent(trace, "X", "step 1").at("tid") == kStepRowTid + 0);
  CHECK(OnlyEvent(trace, "X", "step 10").at("tid") == kStepRowTid + 1);
  // At 2200 step 1 has ended and step 10 (marked by the other thread) is running.
  CHECK(OnlyEvent(trace, "X", "late").at("args") == json{{"step", 10}});
}

TEST_CASE("chrome trace writer: a thread id reused by a later thread gets a row of its own") {
  TempDir dir;
  TraceBuilder b;
  b.model.AddTrack(kMainTid);
  b.model.tracks[0].name = "first";
  b.model.AddTrack(kMainTid);  // the OS handed the exited thread's id to a new one
  b.model.tracks[1].name = "second";
  b.SpanBegin(0, 1000, "early");
  b.SpanEnd(0, 3000);
  b.SpanBegin(1, 2000, "overlapping");
  b.SpanEnd(1, 4000);
  b.SetEnd(5000);
  const json trace = json::parse(WriteTrace(b.model, b.context, dir.File("reused.json")));
  const int64_t second_row = 1000000000 + 1;  // kReusedTidRowBase + track index
  CHECK(OnlyEvent(trace, "X", "early").at("tid") == kMainTid);
  CHECK(OnlyEvent(trace, "X", "overlapping").at("tid") == second_row);
  CHECK(Metadata(trace, "thread_name", kMainTid).at("args").at("name") == "first");
  CHECK(Metadata(trace, "thread_name", second_row).at("args").at("name") == "second");
}

TEST_CASE("chrome trace writer: an empty model is a valid trace with process metadata only") {
  TempDir dir;
  SessionLog model;
  ExportContext context;
  context.pid = 99;
  context.process_name = "idle";
  context.losses.dropped = 0;
  const json trace = json::parse(WriteTrace(model, context, dir.File("empty.json")));
  CHECK(trace.at("dropped_events") == 0);
  const json &events = trace.at("traceEvents");
  REQUIRE(events.size() == 2);
  CHECK(events[0].at("name") == "process_name");
  CHECK(events[0].at("args").at("name") == "idle");
  CHECK(events[0].at("pid") == 99);
  CHECK(events[1].at("name") == "process_sort_index");
}

TEST_CASE("chrome trace writer: a gzip sink holds the same trace") {
  TempDir dir;
  const TraceBuilder b = BuildTwoThreadTrace();
  const std::string plain = WriteTrace(b.model, b.context, dir.File("trace.json"));
  const std::string unzipped = WriteTrace(b.model, b.context, dir.File("trace.json.gz"), true);
  CHECK(unzipped == plain);
  CHECK(json::parse(unzipped).at("dropped_events") == 7);
}

TEST_CASE("chrome trace writer: many events stream through the sink's buffer") {
  TempDir dir;
  TraceBuilder b;
  b.model.AddTrack(kMainTid);
  const int count = 30000;  // several MiB of JSON, more than the sink's 1 MiB buffer
  for (int i = 0; i < count; ++i) {
    b.SpanBegin(0, int64_t{i} * 10, "span_" + std::to_string(i % 100));
    b.SpanEnd(0, int64_t{i} * 10 + 5);
  }
  b.SetEnd(int64_t{count} * 10);
  const std::string text = WriteTrace(b.model, b.context, dir.File("many.json"));
  CHECK(text.size() > OutputSink::kBufferBytes);
  const json trace = json::parse(text);
  int spans = 0;
  bool all_exact = true;
  for (const json &event : trace.at("traceEvents")) {
    if (event.at("ph") != "X") continue;
    const int64_t offset = b.Offset(event.at("ts"));
    const int i = static_cast<int>(offset / 10);
    if (offset % 10 != 0 || event.at("name") != "span_" + std::to_string(i % 100) ||
        TraceBuilder::Nanos(event.at("dur")) != 5) {
      all_exact = false;
    }
    ++spans;
  }
  CHECK(spans == count);
  CHECK(all_exact);
}
