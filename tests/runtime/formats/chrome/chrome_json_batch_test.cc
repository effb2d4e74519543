// The Chrome reader's multi-threaded parse: a trace read on several threads is the trace read on
// one, byte for byte once written again, whatever its strings hold (boundary look-alikes inside
// names and nested args, escapes the parser decodes into scratch text), and damage is reported
// at the same byte with the same words.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/formats/chrome/chrome_json_batch.h"
#include "runtime/formats/chrome/chrome_json_reader.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/model/trace.h"
#include "support/test_files.h"

namespace {

using tfprof::ChromeJsonBatchParser;
using tfprof::ChromeJsonEvent;
using tfprof::Format;
using tfprof::Trace;
using tfprof_test::TempDir;

void WriteText(const std::string &path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// `count` events of every shape the parser keeps text of: kernels and launches with GPU args,
// copies, counters (their series' names), string pids and tids, names with escapes, flow ids,
// and names and args that look like event boundaries ("},\n{").
std::string EventsText(int count) {
  std::string text;
  for (int index = 0; index < count; ++index) {
    const std::string n = std::to_string(index);
    const std::string ts = std::to_string(1000 + index * 10) + "." + std::to_string(index % 1000);
    if (!text.empty()) text += index % 5 == 0 ? ",\n  " : ",\n";
    switch (index % 8) {
      case 0:
        text += R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":7,"tid":1,"ts":)" +
                ts + R"(,"dur":3.5,"args":{"cbid":211,"correlation":)" + n +
                R"(,"External id":)" + n + "}}";
        break;
      case 1:
        text += R"({"ph":"X","cat":"kernel","name":"gemm_)" + std::to_string(index % 13) +
                R"(","pid":0,"tid":"stream 7","ts":)" + ts +
                R"(,"dur":8.25,"args":{"device":0,"stream":7,"correlation":)" +
                std::to_string(index - 1) +
                R"(,"registers per thread":32,"grid":[80,1,1],"block":[256,1,1],"note":"x\"y"}})";
        break;
      case 2:
        text += R"({"ph":"X","cat":"user_annotation","name":"weird },\n{\"ph\":\"X\"} name \u00e9 )" +
                n + R"(","pid":7,"tid":1,"ts":)" + ts + R"(,"dur":1})";
        break;
      case 3:
        text += R"({"ph":"C","name":"memory","pid":7,"tid":1,"ts":)" + ts +
                R"(,"args":{"bytes in use":)" + n + R"(,"peak \"bytes\"":)" + n + ".5}}";
        break;
      case 4:
        text += R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":"Spans","tid":"worker \/ )" +
                std::to_string(index % 3) + R"(","ts":)" + ts +
                R"(,"dur":2,"args":{"nested":[{"a":1},)" "\n" R"({"b":[{"c":"},{"}]}],"Input Dims":[[2,3]]}})";
        break;
      case 5:
        text += R"({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":)" + ts +
                R"(,"dur":4,"args":{"device":0,"stream":7,"bytes":4096,"kind":"HtoD","correlation":)" +
                n + "}}";
        break;
      case 6:
        text += R"({"ph":"s","cat":"ac2g","name":"launch","id":)" + n +
                R"(,"pid":7,"tid":1,"ts":)" + ts + "}";
        break;
      default:
        text += R"({"ph":"i","s":"t","name":"mark\ttab","pid":7,"tid":1,"ts":)" + ts + "}";
        break;
    }
  }
  return text;
}

std::string Document(std::string_view events) {
  return std::string(R"({"displayTimeUnit":"ns","traceEvents":[)") + "\n" + std::string(events) +
         "\n]}";
}

absl::Status Read(const std::string &path, size_t window_bytes, unsigned threads, Trace *trace) {
  trace->path = path;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const absl::Status status =
      tfprof::ReadChromeTrace(fd, false, 0, nullptr, trace, window_bytes, threads);
  close(fd);
  return status;
}

std::string Written(const Trace &trace) {
  std::string bytes;
  tfprof::EncodeTrace(trace, Format::kChromeJson,
                      [&](std::string_view piece) { bytes.append(piece); });
  return bytes;
}

}  // namespace

TEST_CASE("chrome batch parse: every event once, in order, whatever the cuts guessed") {
  const std::string events = EventsText(4000);
  for (unsigned threads : {2u, 3u, 8u}) {
    CAPTURE(threads);
    ChromeJsonBatchParser batch(threads, 0);
    const char *const begin = events.data();
    const char *const end = begin + events.size();
    std::vector<std::string_view> texts;
    const char *const after = batch.ParseEach(
        begin, end, [&](const ChromeJsonEvent &event) { texts.push_back(event.text); });
    REQUIRE(texts.size() == 4000);
    CHECK(after == end);
    CHECK(batch.accepted_slices() >= 2);  // the cuts were found and each one checked out
    // Consecutive, and each one an element of the array: only a ',' and whitespace between.
    CHECK(texts.front().data() == begin);
    for (size_t index = 1; index < texts.size(); ++index) {
      const std::string_view gap(texts[index - 1].data() + texts[index - 1].size(),
                                 static_cast<size_t>(texts[index].data() -
                                                     (texts[index - 1].data() + texts[index - 1].size())));
      REQUIRE(gap.find_first_not_of(",\n ") == std::string_view::npos);
      REQUIRE(gap.find(',') != std::string_view::npos);
    }
  }
}

TEST_CASE("chrome batch parse: a cut guessed inside a string is refused, its slice parsed again") {
  // One long name full of "},\n{" look-alikes: every guess after the first event lands in it.
  std::string name;
  for (int index = 0; index < 3000; ++index) name += R"(},\n{\"ph\":\"X\"},{ )";
  std::string events = R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},)";
  events += "\n" R"({"ph":"X","name":")" + name + R"(","pid":1,"tid":1,"ts":2,"dur":1},)";
  events += "\n" R"({"ph":"X","name":"c","pid":1,"tid":1,"ts":3,"dur":1})";
  events += ",\n";  // the reader's window goes on
  ChromeJsonBatchParser batch(4, 0);
  // Names are kept as strings: a view into the parser's arenas lasts only while it is visited.
  std::vector<std::string> names;
  const char *const after =
      batch.ParseEach(events.data(), events.data() + events.size(),
                      [&](const ChromeJsonEvent &event) { names.emplace_back(event.name); });
  // The guesses all fall in the long name (one even parses, as "{ }"), so none is believed: the
  // first slice ends where it passed its cut, after the long event, and the second is parsed
  // again from there, which ends at the window's end. Every event comes back once, in order.
  CHECK(batch.accepted_slices() == 2);
  REQUIRE(names.size() == 3);
  CHECK(names[0] == "a");
  CHECK(names[1].size() == 3000 * 16);  // decoded: the escapes' backslashes are gone
  CHECK(names[1].substr(0, 16) == "},\n{\"ph\":\"X\"},{ ");
  CHECK(names[2] == "c");
  CHECK(after == events.data() + events.size() - 2);  // on the ",\n" the reader reads next
}

TEST_CASE("chrome batch parse: damage after an event ends the batch there, each event once") {
  // Found by the fuzzer: a slice whose last event had no ',' after it kept, as the element after
  // it, the one before; the next slice was then parsed again from there, an event twice.
  for (const int damaged_after : {0, 1, 57, 200, 398}) {
    std::string events;
    std::vector<size_t> ends;  // where each event's text ends
    for (int index = 0; index < 400; ++index) {
      if (index > 0) events += index == damaged_after + 1 ? std::string("\x00\x01garbage") : ",\n";
      events += R"({"ph":"X","name":"e)" + std::to_string(index) +
                R"(","pid":1,"tid":1,"ts":)" + std::to_string(index) + R"(,"dur":1})";
      ends.push_back(events.size());
    }
    events += ",\n";
    for (const unsigned threads : {2u, 3u, 8u}) {
      CAPTURE(damaged_after);
      CAPTURE(threads);
      ChromeJsonBatchParser batch(threads, 0);
      std::vector<std::string> names;
      const char *const after = batch.ParseEach(
          events.data(), events.data() + events.size(),
          [&](const ChromeJsonEvent &event) { names.emplace_back(event.name); });
      REQUIRE(names.size() == static_cast<size_t>(damaged_after) + 1);
      for (int index = 0; index <= damaged_after; ++index) {
        REQUIRE(names[static_cast<size_t>(index)] == "e" + std::to_string(index));
      }
      CHECK(after == events.data() + ends[static_cast<size_t>(damaged_after)]);
    }
  }
}

TEST_CASE("chrome reader: several threads read the trace one thread reads") {
  TempDir dir;
  const std::string path = dir.File("trace.json");
  WriteText(path, Document(EventsText(20000)));
  Trace one;
  REQUIRE(Read(path, 64 << 10, 1, &one).ok());
  REQUIRE(one.activities.size() >= 14000);
  const std::string expected = Written(one);
  for (unsigned threads : {2u, 4u, 7u}) {
    for (size_t window : {size_t{16} << 10, size_t{64} << 10, size_t{1} << 20}) {
      CAPTURE(threads);
      CAPTURE(window);
      Trace many;
      REQUIRE(Read(path, window, threads, &many).ok());
      CHECK(many.activities.size() == one.activities.size());
      CHECK(many.counters.size() == one.counters.size());
      CHECK(Written(many) == expected);
    }
  }
}

TEST_CASE("chrome reader: damage found by several threads is reported as by one") {
  TempDir dir;
  std::string events = EventsText(12000);
  // A number that is not one, two thirds of the way in, inside an event's args.
  const size_t at = events.find(R"("bytes":4096)", events.size() * 2 / 3);
  REQUIRE(at != std::string::npos);
  events.replace(at, 12, R"("bytes":40-96)");
  const std::string path = dir.File("damaged.json");
  WriteText(path, Document(events));
  Trace one;
  const absl::Status expected = Read(path, 64 << 10, 1, &one);
  REQUIRE(absl::IsDataLoss(expected));
  for (unsigned threads : {2u, 5u}) {
    CAPTURE(threads);
    Trace many;
    CHECK(Read(path, 64 << 10, threads, &many) == expected);
    CHECK(many.activities.size() == one.activities.size());
  }
}
