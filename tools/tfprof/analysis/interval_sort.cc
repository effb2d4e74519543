#include "tools/tfprof/analysis/interval_sort.h"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "runtime/common/mostly_in_order_sort.h"

namespace tfprof::cli {
namespace {

// More runs than this are not merged run by run: the list is sorted another way.
constexpr size_t kMostRunsMerged = 64;
// The merge's buffer, in intervals (1 MiB): a list of millions of kernels is merged through it
// in pieces rather than through a copy of half the list.
constexpr size_t kMergeBufferIntervals = size_t{1} << 16;

// A function object, not a function: the sorts it is passed to inline it.
constexpr auto BeginsEarlier = [](const Interval &a, const Interval &b) { return a.begin < b.begin; };

// Merges the sorted [first, middle) and [middle, last) into one sorted range, through `buffer`,
// which grows to at most kMergeBufferIntervals. When neither side fits in that, the two are cut
// so that each side's front part belongs before both back parts, the middle parts swapped by a
// rotation, and the two smaller merges done the same way.
void MergeAdjacent(Interval *first, Interval *middle, Interval *last,
                   std::vector<Interval> &buffer) {
  while (first != middle && middle != last && BeginsEarlier(*middle, *(middle - 1))) {
    const auto left = static_cast<size_t>(middle - first);
    const auto right = static_cast<size_t>(last - middle);
    const size_t smaller = std::min(left, right);
    if (smaller <= kMergeBufferIntervals && buffer.size() < smaller) buffer.resize(smaller);
    if (left == smaller && left <= buffer.size()) {  // the left side aside, merged forward
      std::copy(first, middle, buffer.begin());
      const Interval *from_left = buffer.data();
      const Interval *const left_end = buffer.data() + left;
      Interval *from_right = middle;
      Interval *out = first;
      while (from_left != left_end) {
        *out++ = (from_right != last && BeginsEarlier(*from_right, *from_left)) ? *from_right++
                                                                                : *from_left++;
      }
      return;
    }
    if (right <= buffer.size()) {  // the right side aside, merged backward
      std::copy(middle, last, buffer.begin());
      const Interval *from_right = buffer.data() + right;
      Interval *from_left = middle;
      Interval *out = last;
      while (from_right != buffer.data()) {
        *--out = (from_left != first && BeginsEarlier(*(from_right - 1), *(from_left - 1)))
                     ? *--from_left
                     : *--from_right;
      }
      return;
    }
    Interval *left_cut;
    Interval *right_cut;
    if (left >= right) {
      left_cut = first + left / 2;
      right_cut = std::lower_bound(middle, last, *left_cut, BeginsEarlier);
    } else {
      right_cut = middle + right / 2;
      left_cut = std::upper_bound(first, middle, *right_cut, BeginsEarlier);
    }
    Interval *const cut = std::rotate(left_cut, middle, right_cut);
    MergeAdjacent(first, left_cut, cut, buffer);
    first = cut;  // and the back parts, in this loop
    middle = right_cut;
  }
}

// Merges the sorted runs that begin at `starts` (the first at 0), pairwise, until one is left.
void MergeRuns(std::span<Interval> intervals, std::vector<size_t> starts) {
  // Room reserved once (capacity only: a page is touched when a merge first needs it).
  std::vector<Interval> buffer;
  buffer.reserve(std::min(kMergeBufferIntervals, intervals.size() / 2 + 1));
  starts.push_back(intervals.size());
  while (starts.size() > 2) {
    size_t kept = 1;  // starts[0] stays 0
    for (size_t run = 0; run + 1 < starts.size(); run += 2) {
      if (run + 2 < starts.size()) {
        MergeAdjacent(intervals.data() + starts[run], intervals.data() + starts[run + 1],
                      intervals.data() + starts[run + 2], buffer);
        starts[kept++] = starts[run + 2];
      } else {
        starts[kept++] = starts[run + 1];
      }
    }
    starts.resize(kept);
  }
}

}  // namespace

void SortByBegin(std::span<Interval> intervals) {
  std::vector<size_t> run_starts = {0};
  for (size_t index = 1; index < intervals.size(); ++index) {
    if (!BeginsEarlier(intervals[index], intervals[index - 1])) continue;
    if (run_starts.size() > kMostRunsMerged) break;
    run_starts.push_back(index);
  }
  if (run_starts.size() == 1) return;
  if (run_starts.size() <= kMostRunsMerged) {
    MergeRuns(intervals, std::move(run_starts));
    return;
  }
  SortMostlyInOrder(intervals.begin(), intervals.end(), BeginsEarlier);
}

}  // namespace tfprof::cli
