// The report's Counters section: one chart per counter that is not about memory, its points the
// lowest and highest value of each of the timeline's slices, in the order they were sampled, so
// that a counter of a million samples stays a small chart.
#include "tools/tfprof/report/counter_html.h"

#include <string>
#include <string_view>
#include <vector>

#include "doctest/doctest.h"
#include "runtime/model/memory_test_trace.h"
#include "tools/tfprof/analysis/counter_series.h"

namespace tfprof::cli {
namespace {

using tfprof_test::MemoryTestTrace;

size_t Count(std::string_view text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

std::vector<std::pair<double, double>> Pairs(const std::vector<LinePoint> &points) {
  std::vector<std::pair<double, double>> out;
  for (const LinePoint &point : points) out.emplace_back(point.ns, point.value);
  return out;
}

// 2000 ns cut into 200 slices of 10 ns.
constexpr int64_t kEnd = 2000;

TEST_CASE("report/counters: a chart per counter, each slice's lowest and highest in order") {
  MemoryTestTrace builder;
  builder.Counter(0, 4.0, "loss", "value", 0)
      .Counter(500, 3, "queue", "depth", 0)
      .Counter(502, 0, "queue", "depth", 0)  // the lowest of its slice, before the highest
      .Counter(505, 5, "queue", "depth", 0)
      .Counter(509, 1, "queue", "depth", 0)
      .Counter(700, 1e6, "host memory bytes", "value", 0)  // the Memory section's
      .Counter(1000, 2.0, "loss", "value", 0)
      .Counter(1500, 2, "queue", "depth", 0)  // the highest first, then the lowest
      .Counter(1503, 1, "queue", "depth", 0);
  TraceSummary summary;
  summary.begin_ns = 0;
  summary.end_ns = kEnd;
  summary.counters = SummarizeCounters(builder.trace(), 0, kEnd);
  REQUIRE(summary.counters.size() == 2);
  const CounterSeries &loss = summary.counters[0];
  const CounterSeries &queue = summary.counters[1];
  CHECK(loss.name == "loss");
  CHECK(queue.name == "queue");
  CHECK(queue.series == "depth");
  CHECK(Pairs(CounterLinePoints(loss, 0, kEnd)) ==
        std::vector<std::pair<double, double>>{{0, 4.0}, {1000, 2.0}});
  // Slice [500, 510): 0 then 5, the second at the slice's middle; slice [1500, 1510): 2 then 1.
  CHECK(Pairs(CounterLinePoints(queue, 0, kEnd)) ==
        std::vector<std::pair<double, double>>{{500, 0}, {505, 5}, {1500, 2}, {1505, 1}});

  const std::string html = RenderCounterSection(summary);
  CHECK(Count(html, "class=\"counter-chart\"") == 2);
  CHECK(Count(html, "data-counter=\"loss\" data-series=\"value\" data-samples=\"2\"") == 1);
  CHECK(Count(html, "data-counter=\"queue\" data-series=\"depth\" data-samples=\"6\"") == 1);
  CHECK(Count(html, "host memory") == 0);
  CHECK(Count(html, "<rect class=\"point\"") == 6);
  CHECK(Count(html, "no-counters") == 0);
}

TEST_CASE("report/counters: a million samples stay two points per slice") {
  MemoryTestTrace builder;
  constexpr int64_t kSamples = 1'000'000;
  for (int64_t index = 0; index < kSamples; ++index) {
    builder.Counter(index, static_cast<double>(index % 2), "flag", "value", 0);
  }
  TraceSummary summary;
  summary.begin_ns = 0;
  summary.end_ns = kSamples;
  summary.counters = SummarizeCounters(builder.trace(), 0, kSamples);
  REQUIRE(summary.counters.size() == 1);
  const std::vector<LinePoint> points = CounterLinePoints(summary.counters[0], 0, kSamples);
  REQUIRE(points.size() == 2 * kCounterTimelineBuckets);
  // Every slice starts with a 0 and holds a 1: the dips stay drawn.
  CHECK(points[0].value == 0);
  CHECK(points[1].value == 1);
  CHECK(points[1].ns == 2500);  // half of a slice of 5000 ns
  CHECK(points.back().value == 1);
  const std::string html = RenderCounterSection(summary);
  CHECK(Count(html, "<rect class=\"point\"") == 2 * kCounterTimelineBuckets);
  CHECK(html.size() < 200'000);
}

}  // namespace
}  // namespace tfprof::cli
