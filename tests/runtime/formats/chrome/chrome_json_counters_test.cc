// Counter values JSON cannot spell as numbers (NaN, the infinities) survive a Chrome trace: the
// writer quotes them, a JSON parser still reads the file, and tfprof's reader takes them back as
// the same values. The TensorFlow formats hold no counters at all (docs/api.md says so).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/formats/trace_reader.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/model/trace.h"
#include "runtime/common/string_view_bridge.h"
#include "support/model_builders.h"
#include "support/test_files.h"

namespace {

using tfprof::CounterSample;
using tfprof::Format;
using tfprof::Trace;

const std::vector<double> kValues = {1.5, std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(), -0.25,
                                     std::numeric_limits<double>::max()};

bool SameValue(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

TEST_CASE("counters: NaN and infinities written to JSON read back as themselves") {
  Trace trace;
  trace.wall_offset_ns = int64_t{1700000000} * 1000000000;
  trace.processes.push_back(tfprof_test::ProcessOf(42, "trainer"));
  trace.tracks.push_back(
      tfprof_test::TrackOf(0, 42, "main", tfprof::TrackKind::kHostThread, -1, -1));
  const uint32_t name = trace.names.Intern("loss");
  const uint32_t series = trace.names.Intern("value");
  for (size_t index = 0; index < kValues.size(); ++index) {
    trace.counters.push_back(
        CounterSample{1000 + static_cast<int64_t>(index) * 1000, kValues[index], name, 0, series});
  }
  trace.end_ns = 10000;

  tfprof_test::TempDir dir;
  const absl::StatusOr<tfprof::WrittenTrace> written = tfprof::WriteTrace(
      trace, dir.File("counters.json"), Format::kChromeJson);
  REQUIRE(written.ok());

  // A standard JSON parser reads the file: the values JSON cannot spell are strings.
  const nlohmann::json parsed = nlohmann::json::parse(tfprof_test::ReadFile(written->path));
  std::vector<nlohmann::json> written_values;
  for (const nlohmann::json &event : parsed["traceEvents"]) {
    if (event.value("ph", "") == "C") written_values.push_back(event["args"]["value"]);
  }
  REQUIRE(written_values.size() == kValues.size());
  CHECK(written_values[0] == 1.5);
  CHECK(written_values[1] == "NaN");
  CHECK(written_values[2] == "Infinity");
  CHECK(written_values[3] == "-Infinity");
  CHECK(written_values[4] == -0.25);

  const absl::StatusOr<Trace> read = tfprof::LoadTrace(written->path, tfprof::LoadOptions{});
  INFO(std::string(tfprof::ToStd(read.status().message())));
  REQUIRE(read.ok());
  REQUIRE(read->counters.size() == kValues.size());
  for (size_t index = 0; index < kValues.size(); ++index) {
    CAPTURE(index);
    CHECK(SameValue(read->counters[index].value, kValues[index]));
    CHECK(read->names.Get(read->counters[index].name) == "loss");
  }
}
