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

// Gaps' gaps handed to `fn` one at a time, in time order, without listing them (a GPU's busy
// time has a gap between most of its millions of kernels).
template <typename Fn>
void ForEachGap(const std::vector<Interval> &disjoint, int64_t begin, int64_t end, Fn fn) {
  int64_t cursor = begin;
  for (const Interval &interval : disjoint) {
    if (interval.end <= begin) continue;
    if (interval.begin >= end) break;
    if (interval.begin > cursor) fn(Interval{cursor, interval.begin});
    cursor = interval.end > cursor ? interval.end : cursor;
  }
  if (cursor < end) fn(Interval{cursor, end});
}

}  // namespace tfprof::cli
