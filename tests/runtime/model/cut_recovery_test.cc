// Files that end early, as a writer killed mid-write leaves them: real streamed outputs (and a
// gzip export, and a PyTorch profiler trace) cut at every byte offset (or a dense sample) must
// each load without salvage, hold only whole steps, keep the events before the cut as they were,
// and say so in Trace::cut and CutWarning(). Damage inside a file stays an error.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/model/cut_recovery.h"
#include "support/test_files.h"
#include "tfprof/tfprof.h"

namespace tfprof {
namespace {

using tfprof_test::TempDir;

constexpr int kSpansPerStep = 6;  // half on the thread that marks the step, half on another
constexpr int kSteps = 24;

void Spans(int count) {
  for (int span = 0; span < count; ++span) {
    prof_span_begin("work");
    prof_span_end();
  }
}

// Streams a session of kSteps steps to `output` (output=, so it is written piece by piece) and
// stops it. Pauses now and then so that the stream writes several pieces.
void StreamSession(const std::string &output, const char *format) {
  REQUIRE(prof_start(absl::StrCat("output=", output, ",format=", format,
                                  ",flush_interval_ms=1,cuda=off")
                         .c_str()) == PROF_OK);
  for (int step = 0; step < kSteps; ++step) {
    prof_begin_step(step);
    Spans(kSpansPerStep / 2);
    std::thread helper([] { Spans(kSpansPerStep / 2); });
    helper.join();
    prof_end_step();
    if (step % 5 == 4) std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  REQUIRE(prof_stop() == PROF_OK);
}

void WriteBytes(const std::string &path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::map<int64_t, size_t> ActivitiesPerStep(const Trace &trace) {
  std::map<int64_t, size_t> counts;
  for (const Step &step : trace.steps) counts[step.number] = 0;
  for (const Activity &activity : trace.activities) {
    if (activity.step != kNoStep) ++counts[activity.step];
  }
  return counts;
}

using SpanKey = std::tuple<std::string, int64_t, int64_t>;  // name, begin, end

std::multiset<SpanKey> WholeSpans(const Trace &trace) {
  std::multiset<SpanKey> spans;
  for (const Activity &activity : trace.activities) {
    if ((activity.flags & kActivityIncomplete) != 0) continue;  // a span the cut left open
    spans.emplace(trace.names.Get(activity.name), activity.begin_ns, activity.end_ns);
  }
  return spans;
}

// Where a JSON file's last '}' is: any cut before it leaves the document unclosed.
size_t LastBrace(const std::string &bytes) { return bytes.rfind('}'); }

struct CutCheck {
  std::string whole;         // the file's bytes
  std::string cut_path;      // where each cut copy is written
  std::string load_path;     // what is loaded (the cut file, or its log directory)
  size_t first_offset = 1;   // cuts from here
  size_t most_cuts = 2500;   // every byte when the file is smaller, else a dense sample
  bool json = false;         // plain JSON: every cut before the last '}' must be noticed
};

// Cuts `check.whole` at every offset (or a sample) and checks what each cut copy loads as
// against `full`, the whole file's trace.
void CheckEveryCut(const CutCheck &check, const Trace &full) {
  const std::map<int64_t, size_t> full_counts = ActivitiesPerStep(full);
  const std::multiset<SpanKey> full_spans = WholeSpans(full);
  REQUIRE(!full.steps.empty());
  const size_t size = check.whole.size();
  const size_t stride = std::max<size_t>(1, (size - check.first_offset) / check.most_cuts);
  size_t kept_before = 0;
  size_t cuts_noticed = 0;
  for (size_t offset = check.first_offset; offset < size; offset += stride) {
    CAPTURE(offset);
    WriteBytes(check.cut_path, std::string_view(check.whole).substr(0, offset));
    absl::StatusOr<Trace> trace = LoadTrace(check.load_path, LoadOptions{});
    REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
    // Only whole steps: each as many activities as in the whole file.
    for (const auto &[number, count] : ActivitiesPerStep(*trace)) {
      CAPTURE(number);
      REQUIRE(full_counts.count(number) == 1);
      REQUIRE(count == full_counts.at(number));
    }
    // The events before the cut as they were.
    for (const SpanKey &span : WholeSpans(*trace)) REQUIRE(full_spans.count(span) > 0);
    // A longer file never keeps fewer steps.
    REQUIRE(trace->steps.size() >= kept_before);
    kept_before = trace->steps.size();
    if (check.json && offset <= LastBrace(check.whole)) REQUIRE(trace->cut.has_value());
    if (!trace->cut) continue;
    ++cuts_noticed;
    const CutRecovery &cut = *trace->cut;
    CHECK(cut.file == check.cut_path);
    CHECK(cut.file_bytes == offset);
    CHECK(cut.events_kept == trace->activities.size());
    const std::string warning = CutWarning(cut);
    REQUIRE(warning.starts_with(absl::StrCat(check.cut_path, ": the file ends at byte ", offset,
                                             " (")));
    CHECK(warning.find(absl::StrCat("kept ", cut.events_kept, " events")) != std::string::npos);
    if (cut.last_whole_step) {
      CHECK(warning.find(absl::StrCat("recovered to its last whole step: kept ", cut.events_kept,
                                      " events through step ", *cut.last_whole_step)) !=
            std::string::npos);
      CHECK(*cut.last_whole_step == trace->steps.back().number);
    }
    if (cut.steps_dropped > 0) {
      CHECK(warning.find(absl::StrCat(cut.events_dropped, " events), which the cut may have left "
                                      "partial")) != std::string::npos);
    }
  }
  CHECK(cuts_noticed > 0);
  // Cut at its very end, the file still keeps all but its last piece's steps.
  CHECK(kept_before + 12 >= full.steps.size());
}

Trace LoadWhole(const std::string &path) {
  absl::StatusOr<Trace> trace = LoadTrace(path, LoadOptions{});
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  REQUIRE(!trace->cut.has_value());
  REQUIRE(trace->steps.size() == static_cast<size_t>(kSteps));
  for (const auto &[number, count] : ActivitiesPerStep(*trace)) {
    REQUIRE(count == static_cast<size_t>(kSpansPerStep));
  }
  return *std::move(trace);
}

TEST_CASE("cut streams: a streamed .json cut anywhere keeps its whole steps") {
  TempDir dir;
  const std::string path = dir.File("stream.json");
  StreamSession(path, "json");
  CutCheck check;
  check.whole = tfprof_test::ReadFile(path);
  check.cut_path = check.load_path = dir.File("cut.json");
  check.json = true;
  CheckEveryCut(check, LoadWhole(path));
}

TEST_CASE("cut streams: a streamed .tfrecord cut anywhere keeps its whole steps") {
  TempDir dir;
  const std::string path = dir.File("stream.tfrecord");
  StreamSession(path, "tfrecord");
  CutCheck check;
  check.whole = tfprof_test::ReadFile(path);
  check.cut_path = check.load_path = dir.File("cut.tfrecord");
  // The first record's header: shorter, the file is no TFRecord (a stream names its file only
  // once its first record is whole).
  check.first_offset = 12;
  CheckEveryCut(check, LoadWhole(path));
}

// The event files a log directory holds (beside them: the profile for TensorBoard's Profile tab).
std::vector<std::filesystem::path> EventFilesIn(const std::string &logs) {
  std::vector<std::filesystem::path> files;
  for (const auto &entry : std::filesystem::directory_iterator(logs)) {
    if (entry.path().filename().string().find("tfevents") != std::string::npos) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("cut streams: a TensorBoard event file cut anywhere keeps its whole steps") {
  TempDir dir;
  const std::string logs = dir.File("logs");
  StreamSession(logs, "tensorboard");
  std::vector<std::filesystem::path> files = EventFilesIn(logs);
  REQUIRE(files.size() == 1);
  const Trace full = LoadWhole(logs);
  const std::string cut_logs = dir.File("cut_logs");
  std::filesystem::create_directory(cut_logs);
  CutCheck check;
  check.whole = tfprof_test::ReadFile(files[0].string());
  check.cut_path = (std::filesystem::path(cut_logs) / files[0].filename()).string();
  check.load_path = cut_logs;
  // The stream names its event file once the first piece is written whole: its header, a graph
  // of the host ops and the first step's record. A shorter file is never left behind.
  TfRecordReader records(check.whole);
  std::string_view record;
  for (int whole_records = 0; whole_records < 3; ++whole_records) REQUIRE(records.Next(&record).ok());
  check.first_offset = records.offset();
  CheckEveryCut(check, full);
}

TEST_CASE("cut streams: a log directory reads on past an event file that ends early") {
  TempDir dir;
  const std::string logs = dir.File("logs");
  StreamSession(logs, "tensorboard");
  StreamSession(logs, "tensorboard");  // a second run into the same directory: a second file
  std::vector<std::filesystem::path> files = EventFilesIn(logs);
  REQUIRE(files.size() == 2);
  const std::string first = tfprof_test::ReadFile(files[0].string());
  WriteBytes(files[0].string(), std::string_view(first).substr(0, first.size() - 7));
  absl::StatusOr<Trace> trace = LoadTrace(logs, LoadOptions{});
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  REQUIRE(trace->cut.has_value());
  CHECK(trace->cut->file == files[0].string());
  CHECK(trace->cut->file_bytes == first.size() - 7);
  // The second file starts again at the first one's step numbers: a restart, whose steps
  // supersede the first file's from there on (as TensorBoard reads a run folder), so the trace
  // holds each step once, the second file's.
  CHECK(trace->steps.size() == static_cast<size_t>(kSteps));
}

TEST_CASE("cut streams: a streamed .pftrace cut anywhere keeps its whole steps") {
  TempDir dir;
  const std::string path = dir.File("stream.pftrace");
  StreamSession(path, "perfetto");
  CutCheck check;
  check.whole = tfprof_test::ReadFile(path);
  check.cut_path = check.load_path = dir.File("cut.pftrace");
  check.first_offset = 4;  // a Perfetto trace's first packet is recognised from its first bytes
  CheckEveryCut(check, LoadWhole(path));
}

TEST_CASE("cut streams: a .json.gz cut anywhere keeps its whole steps") {
  TempDir dir;
  const std::string path = dir.File("stream.json");
  StreamSession(path, "json");
  const Trace full = LoadWhole(path);
  const std::string gz = dir.File("whole.json.gz");
  REQUIRE(WriteTrace(full, gz, Format::kChromeJsonGzip).ok());
  CutCheck check;
  check.whole = tfprof_test::ReadFile(gz);
  check.cut_path = check.load_path = dir.File("cut.json.gz");
  check.first_offset = 2;  // gzip's magic number
  CheckEveryCut(check, LoadWhole(gz));
}

TEST_CASE("cut streams: a cut PyTorch profiler trace is recovered the same way") {
  // tests/data, from tests/runtime/model (CMake compiles sources by their full paths).
  const std::string sample =
      (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() /
       "data/real/kineto/tb_plugin/samples/resnet50_num_workers_0/"
       "worker0.pt.trace.trimmed-1step.json.gz")
          .string();
  TempDir dir;
  const std::string plain = dir.File("pytorch.json");
  WriteBytes(plain, tfprof_test::Gunzip(sample));
  absl::StatusOr<Trace> full = LoadTrace(plain, LoadOptions{});
  REQUIRE_MESSAGE(full.ok(), full.status().ToString());
  REQUIRE(full->producer == Producer::kPytorch);
  REQUIRE(!full->steps.empty());
  CutCheck check;
  check.whole = tfprof_test::ReadFile(plain);
  check.cut_path = check.load_path = dir.File("cut.json");
  check.json = true;  // an array that ends without its ']' is a writer killed too
  check.most_cuts = 1000;
  CheckEveryCut(check, *full);
}

TEST_CASE("cut streams: a file with no steps keeps everything before the cut") {
  TempDir dir;
  const std::string path = dir.File("nosteps.json");
  REQUIRE(prof_start(absl::StrCat("output=", path, ",flush_interval_ms=1,cuda=off").c_str()) ==
          PROF_OK);
  Spans(40);
  REQUIRE(prof_stop() == PROF_OK);
  const std::string whole = tfprof_test::ReadFile(path);
  const std::string cut_path = dir.File("cut.json");
  // Cut just after the 30th event: 30 whole spans, nothing dropped.
  size_t at = 0;
  for (int event = 0; event < 30; ++event) at = whole.find("\"name\":\"work\"", at + 1);
  const size_t offset = whole.find(",\n", at);  // where the 30th event ends
  WriteBytes(cut_path, std::string_view(whole).substr(0, offset + 5));  // into the next event
  absl::StatusOr<Trace> trace = LoadTrace(cut_path, LoadOptions{});
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  REQUIRE(trace->cut.has_value());
  CHECK(trace->steps.empty());
  CHECK(trace->activities.size() == 30);
  CHECK(CutWarning(*trace->cut) ==
        absl::StrCat(cut_path, ": the file ends at byte ", offset + 5,
                     " (inside an event: cut while being written?); recovered what precedes the "
                     "cut: kept 30 events (the file has no steps)"));
}

TEST_CASE("cut streams: damage inside a file stays an error") {
  TempDir dir;
  const std::string path = dir.File("stream.tfrecord");
  StreamSession(path, "tfrecord");
  std::string bytes = tfprof_test::ReadFile(path);
  SUBCASE("a TFRecord with a bad CRC in the middle") {
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
    const std::string damaged = dir.File("damaged.tfrecord");
    WriteBytes(damaged, bytes);
    absl::StatusOr<Trace> trace = LoadTrace(damaged, LoadOptions{});
    REQUIRE(absl::IsDataLoss(trace.status()));
    CHECK(std::string(trace.status().message()).starts_with(damaged + ": "));
  }
  SUBCASE("JSON with garbage in the middle") {
    const std::string json_path = dir.File("stream.json");
    StreamSession(json_path, "json");
    std::string json = tfprof_test::ReadFile(json_path);
    json.insert(json.find(',', json.size() / 2) + 1, "@#!");  // no JSON value starts with '@'
    const std::string damaged = dir.File("damaged.json");
    WriteBytes(damaged, json);
    absl::StatusOr<Trace> trace = LoadTrace(damaged, LoadOptions{});
    REQUIRE(absl::IsDataLoss(trace.status()));
  }
}

}  // namespace
}  // namespace tfprof
