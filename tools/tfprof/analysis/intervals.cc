#include "tools/tfprof/analysis/intervals.h"

#include <algorithm>

#include "tools/tfprof/analysis/interval_sort.h"

namespace tfprof::cli {

std::vector<Interval> Union(std::vector<Interval> intervals) {
  intervals.resize(UnionInPlace(std::span<Interval>(intervals)));
  return intervals;
}

size_t UnionInPlace(std::span<Interval> intervals) {
  const auto end = std::remove_if(intervals.begin(), intervals.end(),
                                  [](const Interval &i) { return i.end <= i.begin; });
  SortByBegin(intervals.first(static_cast<size_t>(end - intervals.begin())));
  // Merged in place: a second list would double the peak for the millions of kernels of a
  // large trace. `kept` intervals are merged; the next one extends the last or follows it.
  size_t kept = 0;
  for (auto at = intervals.begin(); at != end; ++at) {
    const Interval interval = *at;
    if (kept > 0 && interval.begin <= intervals[kept - 1].end) {
      intervals[kept - 1].end = std::max(intervals[kept - 1].end, interval.end);
    } else {
      intervals[kept++] = interval;
    }
  }
  return kept;
}

int64_t TotalLength(const std::vector<Interval> &disjoint) {
  int64_t total = 0;
  for (const Interval &interval : disjoint) total += interval.end - interval.begin;
  return total;
}

int64_t LengthWithin(std::span<const Interval> disjoint, int64_t begin, int64_t end) {
  // The first interval that ends after `begin`.
  auto it = std::upper_bound(disjoint.begin(), disjoint.end(), begin,
                             [](int64_t t, const Interval &i) { return t < i.end; });
  int64_t total = 0;
  for (; it != disjoint.end() && it->begin < end; ++it) {
    total += std::min(end, it->end) - std::max(begin, it->begin);
  }
  return total;
}

std::vector<Interval> Subtract(const std::vector<Interval> &a, const std::vector<Interval> &b) {
  std::vector<Interval> result;
  // At most one piece per interval of `a` and one more per cut by `b`: reserved, so the list is
  // not copied while it grows (capacity never written to is never mapped in).
  result.reserve(a.size() + b.size());
  ForEachDifference(a, b, [&](const Interval &piece) { result.push_back(piece); });
  return result;
}

std::vector<Interval> Gaps(const std::vector<Interval> &disjoint, int64_t begin, int64_t end) {
  std::vector<Interval> gaps;
  ForEachGap(disjoint, begin, end, [&](const Interval &gap) { gaps.push_back(gap); });
  return gaps;
}

}  // namespace tfprof::cli
