// The summary's memory figures on traces with known answers: the peak per device and when, each
// step's peak, the ops holding the most at the peak, the buckets for charts, the text, the JSON
// and the report's chart.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "doctest/doctest.h"
#include "runtime/model/memory_test_trace.h"
#include "tools/tfprof/analysis/memory_usage.h"
#include "tools/tfprof/analysis/summary_json.h"
#include "tools/tfprof/analysis/summary_text.h"
#include "tools/tfprof/analysis/trace_summary.h"
#include "tools/tfprof/report/svg_charts.h"

namespace tfprof::cli {
namespace {

using tfprof_test::MemoryTestTrace;

size_t Count(const std::string &text, const std::string &part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

// Steps 1 [0, 100 us), 2 [100, 300 us), 3 [300, 400 us). GPU 0 starts at 1000 bytes in use and
// peaks at 1500 at 250 us, inside step 2, with blocks B (300 bytes, from "forward") and C (200,
// from "backward") live; A (100) was released before. GPU 1 holds 64 bytes from 30 us. The CPU
// events give no totals: 16, 24 (the peak, at 120 us in step 2, outside any op), then 16.
MemoryTestTrace PeakInStepTwo() {
  MemoryTestTrace builder;
  builder.StepAt(1, 0, 100'000).StepAt(2, 100'000, 300'000).StepAt(3, 300'000, 400'000);
  builder.Op("forward", 0, 100'000).Op("aten::empty", 10'000, 20'000).Op("backward", 200'000,
                                                                          300'000);
  builder.Memory(15'000, 1, 0, 100, 1100, 0xA000)
      .Memory(50'000, 1, 0, 300, 1400, 0xB000)
      .Memory(150'000, 1, 0, -100, 1300, 0xA000)
      .Memory(250'000, 1, 0, 200, 1500, 0xC000)
      .Memory(350'000, 1, 0, -300, 1200, 0xB000)
      .Memory(30'000, 1, 1, 64, 64, 0xD000)
      .Memory(40'000, 0, -1, 16)
      .Memory(120'000, 0, -1, 8)
      .Memory(130'000, 0, -1, -8);
  return builder;
}

}  // namespace

TEST_CASE("tools/memory: the peak, each step's peak and the live blocks at the peak by op") {
  MemoryTestTrace builder = PeakInStepTwo();
  const Trace &trace = builder.trace();
  const std::vector<DeviceMemory> devices =
      AnalyseMemory(trace, MemoryInUse(trace), 0, 400'000);
  REQUIRE(devices.size() == 3);

  const DeviceMemory &gpu0 = devices[1];
  CHECK(gpu0.label == "GPU 0");
  CHECK(gpu0.events == 5);
  CHECK(gpu0.peak_bytes == 1500);
  CHECK(gpu0.peak_ns == 250'000);
  REQUIRE(gpu0.peak_step.has_value());
  CHECK(*gpu0.peak_step == 2);
  REQUIRE(gpu0.steps.size() == 3);
  CHECK(gpu0.steps[0].number == 1);
  CHECK(gpu0.steps[0].peak_bytes == 1400);
  CHECK(gpu0.steps[1].peak_bytes == 1500);
  CHECK(gpu0.steps[2].peak_bytes == 1500);  // in use as step 3 began, until 350 us
  CHECK(gpu0.top_ops_basis == PeakOpsBasis::kLiveBlocks);
  REQUIRE(gpu0.top_ops_at_peak.size() == 2);
  CHECK(gpu0.top_ops_at_peak[0].name == "forward");
  CHECK(gpu0.top_ops_at_peak[0].bytes == 300);
  CHECK(gpu0.top_ops_at_peak[1].name == "backward");
  CHECK(gpu0.top_ops_at_peak[1].bytes == 200);

  // 400,001 ns in 200 buckets of 2,001 ns; each bucket holds the most in use during it.
  REQUIRE(gpu0.timeline.size() == kMemoryTimelineBuckets);
  CHECK(gpu0.timeline[0].ns == 0);
  CHECK(gpu0.timeline[0].bytes == 1000);  // before the first event: 1100 less its 100
  CHECK(gpu0.timeline[1].ns == 2001);
  CHECK(gpu0.timeline[7].bytes == 1100);   // [14,007, 16,008) holds the event at 15 us
  CHECK(gpu0.timeline[124].bytes == 1500);  // [248,124, 250,125)
  CHECK(gpu0.timeline[199].bytes == 1200);
  const auto most = std::max_element(
      gpu0.timeline.begin(), gpu0.timeline.end(),
      [](const MemoryPoint &a, const MemoryPoint &b) { return a.bytes < b.bytes; });
  CHECK(most->bytes == gpu0.peak_bytes);

  const DeviceMemory &gpu1 = devices[2];
  CHECK(gpu1.peak_bytes == 64);
  CHECK(*gpu1.peak_step == 1);
  REQUIRE(gpu1.steps.size() == 3);
  CHECK(gpu1.steps[0].peak_bytes == 64);
  CHECK(gpu1.steps[2].peak_bytes == 64);

  // No addresses: the ops that allocated most in the peak's step.
  const DeviceMemory &cpu = devices[0];
  CHECK(cpu.relative);
  CHECK(cpu.peak_bytes == 24);
  CHECK(cpu.peak_ns == 120'000);
  CHECK(*cpu.peak_step == 2);
  CHECK(cpu.steps[0].peak_bytes == 16);
  CHECK(cpu.steps[1].peak_bytes == 24);
  CHECK(cpu.steps[2].peak_bytes == 16);
  CHECK(cpu.top_ops_basis == PeakOpsBasis::kAllocatedInStep);
  REQUIRE(cpu.top_ops_at_peak.size() == 1);
  CHECK(cpu.top_ops_at_peak[0].name == "(no op)");
  CHECK(cpu.top_ops_at_peak[0].bytes == 8);
}

TEST_CASE("tools/memory: the summary's text and JSON say the memory figures") {
  MemoryTestTrace builder = PeakInStepTwo();
  const TraceSummary summary = Summarize(builder.trace(), {});
  REQUIRE(summary.memory.size() == 3);
  const std::string text = SummaryToText(summary, {});
  CHECK(text.find("\nMemory (bytes in use)\n") != std::string::npos);
  CHECK(text.find("GPU 0: top-level ops holding the most at the peak") != std::string::npos);
  CHECK(text.find("memory events ([memory])") == std::string::npos);

  const nlohmann::json json = nlohmann::json::parse(SummariesToJson({summary}, {}));
  const nlohmann::json &devices = json["traces"][0]["memory"]["devices"];
  REQUIRE(devices.size() == 3);
  const nlohmann::json &gpu0 = devices[1];
  CHECK(gpu0["label"] == "GPU 0");
  CHECK(gpu0["source"] == "[memory] events");
  CHECK(gpu0["device"] == 0);
  CHECK(gpu0["peak_bytes"] == 1500);
  CHECK(gpu0["peak_ns"] == 250'000);
  CHECK(gpu0["peak_step"] == 2);
  CHECK(gpu0["steps"][1]["number"] == 2);
  CHECK(gpu0["steps"][1]["peak_bytes"] == 1500);
  CHECK(gpu0["top_ops_basis"] == "live at the peak");
  CHECK(gpu0["top_ops_at_peak"][0]["name"] == "forward");
  CHECK(gpu0["top_ops_at_peak"][0]["bytes"] == 300);
  CHECK(gpu0["timeline"].size() == kMemoryTimelineBuckets);
  CHECK(devices[0]["relative"] == true);
}

TEST_CASE("tools/memory: a trace without memory has no memory figures") {
  MemoryTestTrace builder;
  builder.Op("forward", 0, 100);
  const TraceSummary summary = Summarize(builder.trace(), {});
  CHECK(summary.memory.empty());
  CHECK(SummaryToText(summary, {}).find("Memory (bytes") == std::string::npos);
}

TEST_CASE("tools/memory: memory counters are Memory's, other counters are Counters'") {
  MemoryTestTrace builder;
  builder.Op("forward", 0, 100)
      .Counter(10, 4096, "GPU memory", "bytes in use", 0)
      .Counter(20, 2048, "GPU memory", "bytes in use", 0);
  TraceSummary summary = Summarize(builder.trace(), {});
  REQUIRE(summary.memory.size() == 1);
  CHECK(summary.memory[0].source == "CUPTI allocations");
  CHECK(summary.memory[0].peak_bytes == 4096);
  CHECK(SummaryToText(summary, {}).find("Not analysed") == std::string::npos);

  builder.Counter(30, 0.5, "loss", "value", 0);
  summary = Summarize(builder.trace(), {});
  REQUIRE(summary.memory.size() == 1);
  REQUIRE(summary.counters.size() == 1);
  CHECK(summary.counters[0].name == "loss");
  CHECK(summary.counters[0].samples == 1);
  CHECK(summary.counters[0].last == 0.5);
  CHECK(SummaryToText(summary, {}).find("Counters (1;") != std::string::npos);
}

TEST_CASE("tools/report: a line chart has one segment and one hover target per point") {
  LineChart chart;
  chart.id = "line";
  chart.points = {{0, 10}, {50, 30}, {80, -5}};
  chart.end_ns = 100;
  chart.format_value = [](double value) { return std::to_string(static_cast<int>(value)) + " B"; };
  const std::string svg = RenderLineChart(chart);
  const size_t path = svg.find("class=\"line-path\" d=\"");
  REQUIRE(path != std::string::npos);
  const std::string d = svg.substr(path, svg.find('"', path + 21) - path);
  CHECK(Count(d, "H") == 3);
  CHECK(Count(svg, "<rect class=\"point\"") == 3);
  CHECK(svg.find("<title>50 ns: 30 B</title>") != std::string::npos);
  CHECK(svg.find("-10 B") != std::string::npos);  // the axis reaches below 0
}

TEST_CASE("tools/report: a byte axis has ticks round in powers of 1024") {
  LineChart chart;
  chart.points = {{0, 0}, {10, 3.5 * 1024 * 1024}};
  chart.end_ns = 20;
  chart.format_value = [](double value) { return std::to_string(std::lround(value)); };
  chart.binary_ticks = true;
  const std::string svg = RenderLineChart(chart);
  // 0 to 3.5 MiB in steps of 1 MiB: 0, 1, 2, 3 and 4 MiB.
  for (long mib = 0; mib <= 4; ++mib) {
    CAPTURE(mib);
    CHECK(svg.find(">" + std::to_string(mib * 1024 * 1024) + "</text>") != std::string::npos);
  }
  CHECK(svg.find(">5242880</text>") == std::string::npos);
}

}  // namespace tfprof::cli
