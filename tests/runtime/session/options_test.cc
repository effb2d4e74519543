// ParseOptions: prof_start()'s "key=value,..." option string.
#include "runtime/session/options.h"

#include <doctest/doctest.h>

#include <string>

#include "absl/status/status.h"
#include "runtime/collector/clock.h"
#include "runtime/export/exporter.h"
#include "runtime/common/string_view_bridge.h"

namespace {

using tfprof::Options;
using tfprof::ParseOptions;

// The parsed options; fails the test (and returns defaults) when parsing failed.
Options Parse(const char *text) {
  absl::StatusOr<Options> parsed = ParseOptions(text);
  INFO("options: ", text == nullptr ? "(null)" : text,
       " error: ", std::string(tfprof::ToStd(parsed.status().message())));
  REQUIRE(parsed.ok());
  return *parsed;
}

// The error message for text that must fail to parse.
std::string ErrorOf(const char *text) {
  absl::StatusOr<Options> parsed = ParseOptions(text);
  INFO("options: ", text);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(tfprof::ToStd(parsed.status().message()));
}

bool Contains(const std::string &text, const std::string &piece) {
  return text.find(piece) != std::string::npos;
}

tfprof::ClockSource AutoClock() {
  tfprof::ClockSource source = tfprof::ClockSource::kMonotonic;
  REQUIRE(tfprof::ResolveClockSource("auto", &source));
  return source;
}

void CheckDefaults(const Options &options) {
  CHECK(options.buffer_events == 65536);
  CHECK(options.buffer_events == Options::kDefaultBufferEvents);
  CHECK(options.flush_interval_ms == 10);
  CHECK(options.output.empty());
  CHECK(options.clock == AutoClock());
}

}  // namespace

TEST_CASE("options: NULL and the empty string give the defaults") {
  CheckDefaults(Parse(nullptr));
  CheckDefaults(Parse(""));
  CheckDefaults(Parse("   "));
  CheckDefaults(Parse(","));
}

TEST_CASE("options: buffer_events sets the ring capacity") {
  CHECK(Parse("buffer_events=1024").buffer_events == 1024);
  CHECK(Parse("buffer_events=16").buffer_events == 16);
  CHECK(Parse("buffer_events=67108864").buffer_events == 67108864u);
}

TEST_CASE("options: buffer_events rounds up to a power of two") {
  CHECK(Parse("buffer_events=100").buffer_events == 128);
  CHECK(Parse("buffer_events=17").buffer_events == 32);
  CHECK(Parse("buffer_events=65537").buffer_events == 131072);
  CHECK(Parse("buffer_events=67108863").buffer_events == 67108864u);
}

TEST_CASE("options: buffer_events outside [16, 2^26] is rejected") {
  const std::string too_small = ErrorOf("buffer_events=15");
  CHECK(Contains(too_small, "buffer_events"));
  CHECK(Contains(too_small, "'15'"));
  CHECK(Contains(too_small, "[16, 67108864]"));
  const std::string too_large = ErrorOf("buffer_events=67108865");
  CHECK(Contains(too_large, "buffer_events"));
  CHECK(Contains(too_large, "'67108865'"));
  ErrorOf("buffer_events=0");
  ErrorOf("buffer_events=-64");
  ErrorOf("buffer_events=abc");
  ErrorOf("buffer_events=64k");
  ErrorOf("buffer_events=");
  ErrorOf("buffer_events=99999999999999999999999");
}

TEST_CASE("options: output sets the export path") {
  CHECK(Parse("output=/tmp/trace.json").output == "/tmp/trace.json");
  CHECK(Parse("output=trace.json.gz").output == "trace.json.gz");
  // Only the first '=' separates key from value.
  CHECK(Parse("output=a=b.json").output == "a=b.json");
  const std::string empty = ErrorOf("output=");
  CHECK(Contains(empty, "'output'"));
  CHECK(Contains(empty, "empty path"));
}

TEST_CASE("options: flush_interval_ms accepts [0, 60000]") {
  CHECK(Parse("flush_interval_ms=0").flush_interval_ms == 0);
  CHECK(Parse("flush_interval_ms=250").flush_interval_ms == 250);
  CHECK(Parse("flush_interval_ms=60000").flush_interval_ms == 60000);
  const std::string too_large = ErrorOf("flush_interval_ms=60001");
  CHECK(Contains(too_large, "flush_interval_ms"));
  CHECK(Contains(too_large, "'60001'"));
  ErrorOf("flush_interval_ms=-1");
  ErrorOf("flush_interval_ms=ten");
}

TEST_CASE("options: clock accepts monotonic, auto and tsc") {
  CHECK(Parse("clock=monotonic").clock == tfprof::ClockSource::kMonotonic);
  CHECK(Parse("clock=auto").clock == AutoClock());
#if defined(__x86_64__) || defined(__i386__)
  CHECK(Parse("clock=tsc").clock == tfprof::ClockSource::kTsc);
#endif
}

TEST_CASE("options: an unknown clock is rejected with the choices named") {
  const std::string error = ErrorOf("clock=sundial");
  CHECK(Contains(error, "'clock'"));
  CHECK(Contains(error, "'sundial'"));
  CHECK(Contains(error, "auto, tsc, monotonic"));
  ErrorOf("clock=Monotonic");
  ErrorOf("clock=");
}

TEST_CASE("options: all keys together") {
  const Options options =
      Parse("buffer_events=4096,output=/tmp/x.json,flush_interval_ms=5,clock=monotonic");
  CHECK(options.buffer_events == 4096);
  CHECK(options.output == "/tmp/x.json");
  CHECK(options.flush_interval_ms == 5);
  CHECK(options.clock == tfprof::ClockSource::kMonotonic);
}

TEST_CASE("options: an unknown key is rejected with its name and offset") {
  const std::string error = ErrorOf("bogus=1");
  CHECK(error.rfind("option 'bogus' at offset 0: unknown key", 0) == 0);
  CHECK(Contains(error, "buffer_events, output, format, flush_interval_ms, full_ring_wait_ms, clock"));
}

TEST_CASE("options: the error for the second option gives its exact byte offset") {
  CHECK(Contains(ErrorOf("buffer_events=64,bogus=1"), "option 'bogus' at offset 17:"));
  CHECK(Contains(ErrorOf("clock=monotonic,buffer_events=3"),
                 "option 'buffer_events' at offset 16:"));
  // Offsets count the original text, escapes included.
  CHECK(Contains(ErrorOf("output=a\\,b,bogus=1"), "option 'bogus' at offset 12:"));
  // Empty items still advance the offset.
  CHECK(Contains(ErrorOf("clock=auto,,bogus=1"), "option 'bogus' at offset 12:"));
}

TEST_CASE("options: an item without '=' is rejected") {
  const std::string error = ErrorOf("buffer_events=64,verbose");
  CHECK(Contains(error, "'verbose'"));
  CHECK(Contains(error, "offset 17"));
  CHECK(Contains(error, "expected key=value"));
  CHECK(Contains(ErrorOf("justtext"), "option 'justtext' at offset 0: expected key=value"));
}

TEST_CASE("options: an empty key is rejected") {
  CHECK(ErrorOf("=5") == "option at offset 0: empty key before '='");
  CHECK(ErrorOf("clock=auto,=5") == "option at offset 11: empty key before '='");
}

TEST_CASE("options: a key given twice is rejected") {
  const std::string error = ErrorOf("flush_interval_ms=5,flush_interval_ms=6");
  CHECK(error == "option 'flush_interval_ms' at offset 20: given twice");
  CHECK(Contains(ErrorOf("output=a,clock=auto,output=a"),
                 "option 'output' at offset 20: given twice"));
}

TEST_CASE("options: escaped comma and backslash in the output path") {
  CHECK(Parse("output=/tmp/a\\,b.json").output == "/tmp/a,b.json");
  CHECK(Parse("output=/tmp/a\\\\b.json").output == "/tmp/a\\b.json");
  CHECK(Parse("output=x\\,y\\,z,flush_interval_ms=3").output == "x,y,z");
  CHECK(Parse("output=x\\,y\\,z,flush_interval_ms=3").flush_interval_ms == 3);
  // `\\,` is an escaped backslash followed by a real separator.
  const Options split = Parse("output=dir\\\\,clock=monotonic");
  CHECK(split.output == "dir\\");
  CHECK(split.clock == tfprof::ClockSource::kMonotonic);
  // A backslash before any other character is kept as is.
  CHECK(Parse("output=a\\nb").output == "a\\nb");
  // A trailing lone backslash is kept.
  CHECK(Parse("output=a\\").output == "a\\");
}

TEST_CASE("options: spaces and tabs around keys, values and items are trimmed") {
  const Options options =
      Parse("  buffer_events = 256 ,\toutput=\t/tmp/t.json\t, clock = monotonic ");
  CHECK(options.buffer_events == 256);
  CHECK(options.output == "/tmp/t.json");
  CHECK(options.clock == tfprof::ClockSource::kMonotonic);
  // Inner spaces of a value stay.
  CHECK(Parse("output= my trace.json ").output == "my trace.json");
}

TEST_CASE("options: a trailing comma and empty items are tolerated") {
  const Options options = Parse("buffer_events=32,");
  CHECK(options.buffer_events == 32);
  const Options empties = Parse(",flush_interval_ms=7,, ,output=o.json,");
  CHECK(empties.flush_interval_ms == 7);
  CHECK(empties.output == "o.json");
}

TEST_CASE("options: an escaped comma does not split an item") {
  // "buffer_events=64\,bogus=1" is one item whose value is "64,bogus=1", which is no integer.
  const std::string error = ErrorOf("buffer_events=64\\,bogus=1");
  CHECK(Contains(error, "option 'buffer_events' at offset 0"));
  CHECK(Contains(error, "'64,bogus=1'"));
}

TEST_CASE("options: the offset in an error is where the key starts, after leading spaces") {
  // options.h: "Errors name the key, its byte offset in `text`"; RawOption::offset is "where
  // the key starts". With a space after the comma the key starts one byte after the item.
  const std::string after_space = ErrorOf("buffer_events=64, bogus=1");
  CAPTURE(after_space);
  CHECK(after_space.rfind("option 'bogus' at offset 18:", 0) == 0);
  const std::string leading = ErrorOf("  bogus=1");
  CAPTURE(leading);
  CHECK(leading.rfind("option 'bogus' at offset 2:", 0) == 0);
  const std::string after_tab = ErrorOf("clock=auto,\tclock=auto");
  CAPTURE(after_tab);
  CHECK(after_tab.rfind("option 'clock' at offset 12:", 0) == 0);
}

TEST_CASE("options: memory limit, keep window and slow-step dumps") {
  const Options defaults = Parse("");
  CHECK(defaults.max_memory_mb == 48);
  CHECK(defaults.keep.mode == tfprof::KeepWindow::Mode::kAll);
  CHECK(defaults.dump_on_slow_step == 0);

  const Options set = Parse("max_memory_mb=0,keep=last:100,output=t.json,dump_on_slow_step=2.5");
  CHECK(set.max_memory_mb == 0);
  CHECK(set.keep.mode == tfprof::KeepWindow::Mode::kLastSteps);
  CHECK(set.keep.count == 100);
  CHECK(set.dump_on_slow_step == 2.5);
  CHECK(Parse("spill_dir=/var/tmp").spill_dir == "/var/tmp");
  CHECK(Contains(ErrorOf("spill_dir="), "empty path"));
  const Options seconds = Parse("keep=last:30s");
  CHECK(seconds.keep.mode == tfprof::KeepWindow::Mode::kLastSeconds);
  CHECK(seconds.keep.count == 30);

  CHECK(Contains(ErrorOf("keep=last:0"), "last:N (steps), last:Ns (seconds)"));
  CHECK(Contains(ErrorOf("keep=last"), "'last' is not one of all"));
  CHECK(Contains(ErrorOf("keep=last:5m"), "'last:5m'"));
  CHECK(Contains(ErrorOf("max_memory_mb=-1"), "max_memory_mb"));
  CHECK(Contains(ErrorOf("dump_on_slow_step=1,output=t.json"), "(1, 1000000]"));
  CHECK(Contains(ErrorOf("dump_on_slow_step=3"), "needs option 'output'"));
}

TEST_CASE("options: a log directory's profile for TensorBoard's Profile tab, on by default") {
  CHECK(Parse("").tensorboard_profile);
  CHECK(!Parse("output=logs/,tensorboard_profile=off").tensorboard_profile);
  CHECK(Contains(ErrorOf("tensorboard_profile=sometimes"), "'sometimes' is not one of on, off"));
  CHECK(Contains(ErrorOf("bogus=1"), "tensorboard_profile"));  // listed among the known keys
}

TEST_CASE("options: back-pressure waits only where a collector empties the rings") {
  CHECK(Parse("").full_ring_wait_ms == 0);
  CHECK(Parse("full_ring_wait_ms=250").full_ring_wait_ms == 250);
  CHECK(Contains(ErrorOf("full_ring_wait_ms=10001"), "full_ring_wait_ms"));
  CHECK(Contains(ErrorOf("full_ring_wait_ms=5,flush_interval_ms=0"),
                 "needs the collector thread (flush_interval_ms > 0)"));
}

TEST_CASE("options: slow-step dumps go next to the output, in its format") {
  using tfprof::Format;
  using tfprof::SlowStepDumpPath;
  CHECK(SlowStepDumpPath("trace.json", Format::kChromeJson, 57) == "trace.slow-step-57.json");
  CHECK(SlowStepDumpPath("out/run.1/trace.json.gz", Format::kChromeJsonGzip, 3) ==
        "out/run.1/trace.slow-step-3.json.gz");
  CHECK(SlowStepDumpPath("run.tfrecord", Format::kTfRecord, -2) == "run.slow-step--2.tfrecord");
  CHECK(SlowStepDumpPath("dir/trace", Format::kChromeJson, 1) == "dir/trace.slow-step-1");
  CHECK(SlowStepDumpPath(".hidden.pb", Format::kRunMetadata, 1) == ".hidden.slow-step-1.pb");
  CHECK(SlowStepDumpPath("logs/", Format::kTensorBoard, 9) == "logs/slow-step-9/");
  CHECK(SlowStepDumpPath("logs", Format::kTensorBoard, 9) == "logs/slow-step-9/");
}

TEST_CASE("options: cuda_sync and cuda_queries are off unless asked for") {
  const Options defaults = Parse("");
  CHECK_FALSE(defaults.gpu.sync);
  CHECK_FALSE(defaults.gpu.queries);
  const Options both = Parse("cuda_sync=on,cuda_queries=on");
  CHECK(both.gpu.sync);
  CHECK(both.gpu.queries);
  CHECK(Contains(ErrorOf("cuda_queries=1x"), "cuda_queries"));
}
