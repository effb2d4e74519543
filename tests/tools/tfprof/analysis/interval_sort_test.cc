// SortByBegin on the orders traces come in: sorted runs one after another (a device's streams),
// nearly in order, in no order; lists longer than its merge buffer.
#include "tools/tfprof/analysis/interval_sort.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "doctest/doctest.h"

namespace tfprof::cli {
namespace {

// Sorts a copy of `list` with SortByBegin and checks it is in begin order and holds the same
// intervals (equal begins may come in any order).
void CheckSorted(const std::vector<Interval> &list) {
  std::vector<Interval> sorted = list;
  SortByBegin(sorted);
  CHECK(std::is_sorted(sorted.begin(), sorted.end(),
                       [](const Interval &a, const Interval &b) { return a.begin < b.begin; }));
  const auto by_both = [](const Interval &a, const Interval &b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  };
  std::vector<Interval> expected = list;
  std::sort(expected.begin(), expected.end(), by_both);
  std::sort(sorted.begin(), sorted.end(), by_both);
  CHECK(std::equal(sorted.begin(), sorted.end(), expected.begin(), expected.end(),
                   [](const Interval &a, const Interval &b) {
                     return a.begin == b.begin && a.end == b.end;
                   }));
}

// `streams` runs of evenly spaced kernels whose times interleave, each run after the other.
std::vector<Interval> StreamsOneAfterAnother(int streams, int64_t per_stream) {
  std::vector<Interval> list;
  for (int stream = 0; stream < streams; ++stream) {
    for (int64_t kernel = 0; kernel < per_stream; ++kernel) {
      const int64_t begin = kernel * 10 * streams + stream * 10;
      list.push_back({begin, begin + 8});
    }
  }
  return list;
}

TEST_CASE("tools/interval sort: a device's streams one after another, longer than the buffer") {
  CheckSorted(StreamsOneAfterAnother(2, 200'000));  // each run three times the 65,536 buffer
  CheckSorted(StreamsOneAfterAnother(3, 70'001));
  CheckSorted(StreamsOneAfterAnother(17, 5'000));
  CheckSorted(StreamsOneAfterAnother(64, 3'000));   // as many runs as are merged
  CheckSorted(StreamsOneAfterAnother(65, 1'000));   // one more: sorted the other way
  // Runs of very different lengths, with equal begins across them.
  std::vector<Interval> uneven = StreamsOneAfterAnother(1, 150'000);
  for (int64_t index = 0; index < 7; ++index) uneven.push_back({index * 1000, index * 1000 + 5});
  for (int64_t index = 0; index < 90'000; ++index) uneven.push_back({index * 3, index * 3 + 1});
  CheckSorted(uneven);
}

TEST_CASE("tools/interval sort: nearly in order, in no order, and the small cases") {
  CheckSorted({});
  CheckSorted({{5, 6}});
  CheckSorted({{5, 6}, {1, 2}});
  CheckSorted({{1, 2}, {1, 3}, {1, 1}});
  // A step's copy listed after its kernels: thousands of short runs.
  std::vector<Interval> copies_late;
  for (int64_t step = 0; step < 5'000; ++step) {
    for (int64_t kernel = 0; kernel < 40; ++kernel) {
      copies_late.push_back({step * 1000 + 20 + kernel * 20, step * 1000 + 30 + kernel * 20});
    }
    copies_late.push_back({step * 1000, step * 1000 + 15});
  }
  CheckSorted(copies_late);
  std::mt19937_64 random(36);
  std::vector<Interval> shuffled;
  for (int index = 0; index < 100'000; ++index) {
    const auto begin = static_cast<int64_t>(random() % 50'000);
    shuffled.push_back({begin, begin + static_cast<int64_t>(random() % 100)});
  }
  CheckSorted(shuffled);
}

TEST_CASE("tools/interval sort: the union over streams listed one after another") {
  // Two streams whose kernels touch end to begin across the streams: one busy stretch.
  std::vector<Interval> list;
  for (int64_t kernel = 0; kernel < 100'000; ++kernel) list.push_back({kernel * 20, kernel * 20 + 10});
  for (int64_t kernel = 0; kernel < 100'000; ++kernel) {
    list.push_back({kernel * 20 + 10, kernel * 20 + 20});
  }
  const std::vector<Interval> busy = Union(list);
  REQUIRE(busy.size() == 1);
  CHECK(busy[0].begin == 0);
  CHECK(busy[0].end == 2'000'000);
}

}  // namespace
}  // namespace tfprof::cli
