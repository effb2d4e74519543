// FirstFitLanes: the first lane a slice fits in, the same answer as scanning the lanes in order.
#include "runtime/common/first_fit_lanes.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

using tfprof::FirstFitLanes;

namespace {

struct Keys {
  int64_t free_from;
  int64_t open_until;
};

size_t ScanFirstFit(const std::vector<Keys> &lanes, int64_t begin_ns, int64_t end_ns) {
  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    if (lanes[lane].free_from <= begin_ns || lanes[lane].open_until >= end_ns) return lane;
  }
  return lanes.size();
}

}  // namespace

TEST_CASE("first fit lanes: none fits an empty set, a new lane fits what its keys allow") {
  FirstFitLanes lanes;
  CHECK(lanes.Find(0, 10) == 0);
  CHECK(lanes.Add(INT64_MAX, 100) == 0);  // a slice open until 100
  CHECK(lanes.Find(5, 100) == 0);         // nests in it
  CHECK(lanes.Find(5, 101) == 1);         // does not
  CHECK(lanes.Add(50, INT64_MIN) == 1);   // free from 50
  CHECK(lanes.Find(50, 200) == 1);
  CHECK(lanes.Find(49, 200) == 2);
  lanes.Set(0, 10, INT64_MIN);  // lane 0 closed at 10
  CHECK(lanes.Find(49, 200) == 0);
}

TEST_CASE("first fit lanes: the same lane as a scan, through growth and updates") {
  std::mt19937_64 random(32);
  std::uniform_int_distribution<int64_t> time(0, 1000);
  FirstFitLanes lanes;
  std::vector<Keys> scanned;
  for (int round = 0; round < 20'000; ++round) {
    const int64_t begin = time(random);
    const int64_t end = begin + time(random);
    const size_t expected = ScanFirstFit(scanned, begin, end);
    REQUIRE(lanes.Find(begin, end) == expected);
    const Keys keys = random() % 2 == 0 ? Keys{INT64_MAX, end} : Keys{end, INT64_MIN};
    if (expected == scanned.size() || random() % 8 == 0) {
      scanned.push_back(keys);
      lanes.Add(keys.free_from, keys.open_until);
    } else {
      scanned[expected] = keys;
      lanes.Set(expected, keys.free_from, keys.open_until);
    }
    REQUIRE(lanes.size() == scanned.size());
  }
  CHECK(scanned.size() > 100);
}
