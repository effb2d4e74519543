// Sets of time intervals as sorted, disjoint [begin, end) lists: the arithmetic behind "how long
// was the GPU busy in this step".
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tfprof::cli {

struct Interval {
  int64_t begin = 0;
  int64_t end = 0;
};

// Sorts `intervals` and merges overlapping or touching ones; empty intervals are dropped.
std::vector<Interval> Union(std::vector<Interval> intervals);
// The same in place: the union is the first n of `intervals`, n returned; the rest is left over.
size_t UnionInPlace(std::span<Interval> intervals);

// Union's result built as the intervals arrive. While each one begins at or after the last
// entry's begin, or lies inside an entry (a thread's nested spans, in whatever order the file
// lists them), the list holds the union so far rather than every interval: a thread's millions
// of spans inside its steps take a few entries. Once one does neither, the rest are kept as they
// come, and Take() sorts.
class UnionBuilder {
 public:
  // `storage` lends its capacity (a buffer reused from list to list); its contents are dropped.
  explicit UnionBuilder(std::vector<Interval> storage = {}) : list_(std::move(storage)) {
    list_.clear();
  }
  void Add(Interval interval) {
    if (interval.end <= interval.begin) return;
    if (in_order_ && !list_.empty()) {
      Interval &last = list_.back();
      if (interval.begin >= last.begin) {
        if (interval.begin <= last.end) {  // overlaps or touches the last entry
          if (interval.end > last.end) last.end = interval.end;
          return;
        }
      } else {
        // Inside an entry changes nothing; else the list is no longer the union in order.
        const auto after = std::upper_bound(
            list_.begin(), list_.end(), interval.begin,
            [](int64_t begin, const Interval &entry) { return begin < entry.begin; });
        if (after != list_.begin() && interval.end <= (after - 1)->end) return;
        in_order_ = false;
      }
    }
    list_.push_back(interval);
  }
  std::vector<Interval> Take() { return in_order_ ? std::move(list_) : Union(std::move(list_)); }

 private:
  std::vector<Interval> list_;
  bool in_order_ = true;
};

// Total length of a sorted, disjoint list.
int64_t TotalLength(const std::vector<Interval> &disjoint);

// Length of the part of a sorted, disjoint list inside [begin, end): binary search, then a walk
// over the intervals that overlap.
int64_t LengthWithin(std::span<const Interval> disjoint, int64_t begin, int64_t end);

// `a` minus `b`, both sorted and disjoint.
std::vector<Interval> Subtract(const std::vector<Interval> &a, const std::vector<Interval> &b);

// Subtract's pieces handed to `fn` one at a time, in time order, without listing them (what is
// only measured need not be held: host time less a GPU busy in millions of kernels is millions
// of pieces).
template <typename Fn>
void ForEachDifference(const std::vector<Interval> &a, const std::vector<Interval> &b, Fn fn) {
  size_t j = 0;
  for (Interval piece : a) {
    while (j < b.size() && b[j].end <= piece.begin) ++j;
    for (size_t k = j; k < b.size() && b[k].begin < piece.end; ++k) {
      if (b[k].begin > piece.begin) fn(Interval{piece.begin, b[k].begin});
      piece.begin = std::max(piece.begin, b[k].end);
      if (piece.begin >= piece.end) break;
    }
    if (piece.begin < piece.end) fn(piece);
  }
}

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
