// The time sets measured window by window (MeasureTimeSets) and the union built as intervals
// arrive (UnionBuilder), on inputs with known answers.
#include <algorithm>
#include <random>
#include <span>
#include <vector>

#include "doctest/doctest.h"
#include "tools/tfprof/analysis/intervals.h"
#include "tools/tfprof/analysis/median.h"
#include "tools/tfprof/analysis/op_classes.h"
#include "tools/tfprof/analysis/summary_test_trace.h"
#include "tools/tfprof/analysis/time_sets.h"
#include "tools/tfprof/analysis/trace_summary.h"

namespace tfprof::cli {
namespace {

bool SameIntervals(const std::vector<Interval> &a, const std::vector<Interval> &b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const Interval &x, const Interval &y) {
           return x.begin == y.begin && x.end == y.end;
         });
}

std::vector<Interval> BuiltUnion(const std::vector<Interval> &intervals) {
  UnionBuilder builder;
  for (const Interval &interval : intervals) builder.Add(interval);
  return builder.Take();
}

}  // namespace

TEST_CASE("tools/intervals: a union built as spans arrive holds only the union so far") {
  // Nested and touching spans in begin order, an empty one among them: one entry, then a second.
  UnionBuilder builder;
  for (const Interval &span : std::vector<Interval>{{0, 10}, {1, 2}, {3, 3}, {3, 4}, {10, 12}}) {
    builder.Add(span);
  }
  builder.Add({20, 25});
  const std::vector<Interval> built = builder.Take();
  REQUIRE(built.size() == 2);
  CHECK(built[0].begin == 0);
  CHECK(built[0].end == 12);
  CHECK(built[1].begin == 20);
  CHECK(built[1].end == 25);
  CHECK(built.capacity() <= 2);  // nested spans took no room of their own

  // Nested spans listed parents first (a step, its phases, then the calls inside them): the
  // calls come out of order but inside an entry, and take no room.
  UnionBuilder nested;
  for (const Interval &span : std::vector<Interval>{
           {300, 990}, {301, 601}, {602, 902}, {302, 305}, {610, 612}, {995, 999}, {996, 997}}) {
    nested.Add(span);
  }
  const std::vector<Interval> nested_union = nested.Take();
  REQUIRE(nested_union.size() == 2);
  CHECK(nested_union[0].begin == 300);
  CHECK(nested_union[0].end == 990);
  CHECK(nested_union[1].begin == 995);
  CHECK(nested_union.capacity() <= 2);

  // A span out of order: what is left is sorted at the end, to the same union.
  const std::vector<Interval> shuffled = {{5, 8}, {0, 3}, {2, 4}, {8, 9}, {7, 7}};
  CHECK(SameIntervals(BuiltUnion(shuffled), Union(shuffled)));

  // Random lists, in begin order and as they come: always Union's answer.
  std::mt19937 random(36);
  std::uniform_int_distribution<int64_t> start(0, 1000), length(0, 40);
  for (int round = 0; round < 200; ++round) {
    std::vector<Interval> intervals(static_cast<size_t>(round % 50));
    for (Interval &interval : intervals) {
      interval.begin = start(random);
      interval.end = interval.begin + length(random);
    }
    const std::vector<Interval> expected = Union(intervals);
    CHECK(SameIntervals(BuiltUnion(intervals), expected));
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval &a, const Interval &b) { return a.begin < b.begin; });
    CHECK(SameIntervals(BuiltUnion(intervals), expected));
  }
}

TEST_CASE("tools/time sets: every set measured in every window, counts at the windows' edges") {
  // One thread in train_step for 100 ms, with an input wait in its last 20 ms; three launches;
  // kernels 11-30, 30-40 (touching) and 60-70 ms; a copy 70-75 ms.
  SummaryTestTrace builder;
  builder.Host("train_step", 0, 100 * kMs)
      .Launch("cudaLaunchKernel", 10 * kMs, 11 * kMs, 1)
      .Launch("cudaLaunchKernel", 20 * kMs, 21 * kMs, 2)
      .Launch("cudaLaunchKernel", 50 * kMs, 51 * kMs, 3)
      .Host("IteratorGetNext", 80 * kMs, 100 * kMs)
      .LaunchedKernel("gemm", 11 * kMs, 30 * kMs, 1)
      .LaunchedKernel("gemm", 30 * kMs, 40 * kMs, 2)
      .LaunchedKernel("gemm", 60 * kMs, 70 * kMs, 3)
      .Copy(70 * kMs, 75 * kMs, 1000, CopyKind::kHostToDevice);
  const Trace &trace = builder.linked();
  const std::vector<uint8_t> classes = ClassifyNames(trace.names, DefaultInputOpPatterns());
  const GroupMembers members(trace, {0, 0}, 1);
  // The whole window, overlapping ones, an empty one and a repeated one.
  const std::vector<Interval> windows = {{0, 100 * kMs},      {30 * kMs, 60 * kMs},
                                         {0, 30 * kMs},       {60 * kMs, 70 * kMs},
                                         {11 * kMs, 11 * kMs}, {30 * kMs, 60 * kMs}};
  std::vector<NamedInterval> input_spans;
  const TimeSetMeasures measured = MeasureTimeSets(
      trace, classes, members, 0, std::vector<bool>(trace.tracks.size(), false), false, windows,
      &input_spans);
  REQUIRE(measured.windows.size() == windows.size());
  REQUIRE(input_spans.size() == 1);
  CHECK(input_spans[0].interval.begin == 80 * kMs);

  const StepBreakdown &whole = measured.windows[0];
  CHECK(whole.begin_ns == 0);
  CHECK(whole.duration_ns == 100 * kMs);
  CHECK(whole.gpu_compute_ns == 39 * kMs);
  CHECK(whole.memcpy_ns == 5 * kMs);
  CHECK(whole.gpu_idle_ns == 56 * kMs);  // 100 - (11-40 and 60-75)
  CHECK(whole.input_wait_ns == 20 * kMs);
  CHECK(whole.host_compute_ns == 36 * kMs);  // 0-11, 40-60, 75-80
  CHECK(whole.idle_ns == 0);
  CHECK(whole.launch_ns == 3 * kMs);
  CHECK(whole.kernels == 3);
  CHECK(whole.launches == 3);
  CHECK(measured.launches.calls == 3);

  for (const size_t index : {size_t{1}, size_t{5}}) {  // 30-60 ms, twice
    const StepBreakdown &middle = measured.windows[index];
    CHECK(middle.gpu_compute_ns == 10 * kMs);
    CHECK(middle.host_compute_ns == 20 * kMs);
    CHECK(middle.gpu_idle_ns == 20 * kMs);
    CHECK(middle.launch_ns == 1 * kMs);
    CHECK(middle.kernels == 1);   // the kernel at 30 ms counts, the one at 60 ms does not
    CHECK(middle.launches == 1);  // 50 ms
  }
  const StepBreakdown &first = measured.windows[2];  // 0-30 ms
  CHECK(first.gpu_compute_ns == 19 * kMs);
  CHECK(first.kernels == 1);
  CHECK(first.launches == 2);
  const StepBreakdown &last_kernel = measured.windows[3];  // 60-70 ms
  CHECK(last_kernel.gpu_compute_ns == 10 * kMs);
  CHECK(last_kernel.kernels == 1);
  CHECK(last_kernel.launches == 0);
  const StepBreakdown &empty = measured.windows[4];  // 11-11 ms: a kernel begins there
  CHECK(empty.duration_ns == 0);
  CHECK(empty.gpu_compute_ns == 0);
  CHECK(empty.kernels == 0);
}

}  // namespace tfprof::cli

namespace tfprof::cli {

// The median taken without listing the values (radix selection over a stream that can be walked
// again) is MedianNs's, on lists of every parity, with repeats and with values past 32 bits.
TEST_CASE("tools/median: taken from a stream, the list's median") {
  std::mt19937_64 random(7);
  for (size_t count : {1u, 2u, 3u, 10u, 1001u, 4096u}) {
    for (int spread = 0; spread < 3; ++spread) {
      std::vector<int64_t> values(count);
      for (int64_t &value : values) {
        const uint64_t draw = random();
        value = spread == 0   ? static_cast<int64_t>(draw % 5)          // many repeats
                : spread == 1 ? static_cast<int64_t>(draw % 1'000'000)  // gap-like
                              : static_cast<int64_t>(draw >> 2);        // past 32 bits
      }
      const int64_t streamed = MedianNsOf(
          [&](auto visit) {
            for (const int64_t value : values) visit(value);
          },
          values.size());
      std::vector<int64_t> copy = values;
      CHECK(streamed == MedianNs(copy));
      std::vector<int64_t> sorted = values;
      std::sort(sorted.begin(), sorted.end());
      const size_t rank = count / 3;
      const auto walk = [&](auto visit) {
        for (const int64_t value : values) visit(value);
      };
      CHECK(NthSmallest(walk, rank) == sorted[rank]);
    }
  }
  CHECK(MedianNsOf([](auto) {}, 0) == 0);
}

// The union of part of a list, in place: its first entries, the rest untouched.
TEST_CASE("tools/intervals: a union in place within a stretch of a list") {
  std::vector<Interval> list = {{0, 1}, {50, 60}, {10, 20}, {15, 30}, {40, 40}, {30, 35}, {7, 8}};
  const std::span<Interval> stretch = std::span<Interval>(list).subspan(1, 5);
  const size_t kept = UnionInPlace(stretch);
  REQUIRE(kept == 2);
  CHECK(SameIntervals({stretch.begin(), stretch.begin() + 2}, {{10, 35}, {50, 60}}));
  CHECK((list.front().begin == 0 && list.front().end == 1));
  CHECK((list.back().begin == 7 && list.back().end == 8));
  CHECK(LengthWithin(stretch.first(kept), 20, 55) == 15 + 5);
  std::vector<Interval> pieces;
  ForEachDifference({{0, 100}}, {{10, 20}, {30, 40}},
                    [&](const Interval &piece) { pieces.push_back(piece); });
  CHECK(SameIntervals(pieces, Subtract({{0, 100}}, {{10, 20}, {30, 40}})));
  CHECK(SameIntervals(pieces, {{0, 10}, {20, 30}, {40, 100}}));
}

}  // namespace tfprof::cli
