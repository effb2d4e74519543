// Sets of time intervals as sorted, disjoint [begin, end) lists: the arithmetic behind "how long
// was the GPU busy in this step".
#pragma once

#include <cstdint>
#include <vector>

namespace tfprof::cli {

struct Interval {
  int64_t begin = 0;
  int64_t end = 0;
};

// Sorts `intervals` and merges overlapping or touching ones; empty intervals are dropped.
std::vector<Interval> Union(std::vector<Interval> intervals);

// Total length of a sorted, disjoint list.
int64_t TotalLength(const std::vector<Interval> &disjoint);

// Length of the part of a sorted, disjoint list inside [begin, end): binary search, then a walk
// over the intervals that overlap.
int64_t LengthWithin(const std::vector<Interval> &disjoint, int64_t begin, int64_t end);

// `a` minus `b`, both sorted and disjoint.
std::vector<Interval> Subtract(const std::vector<Interval> &a, const std::vector<Interval> &b);

// The gaps between the intervals of a sorted, disjoint list, inside [begin, end) (including the
// stretch before the first and after the last interval).
std::vector<Interval> Gaps(const std::vector<Interval> &disjoint, int64_t begin, int64_t end);

}  // namespace tfprof::cli
