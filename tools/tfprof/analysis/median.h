// The median of a list of durations, as the summary reports it everywhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tfprof::cli {

// The middle value; for an even count the mean of the two middle ones (rounded down), not the
// upper one. 0 for an empty list. Reorders `values`.
inline int64_t MedianNs(std::vector<int64_t> &values) {
  if (values.empty()) return 0;
  const auto upper = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), upper, values.end());
  if (values.size() % 2 == 1) return *upper;
  const int64_t lower = *std::max_element(values.begin(), upper);
  return lower + (*upper - lower) / 2;
}

// The `rank`-th smallest (from 0) of the non-negative values `for_each(visit)` hands to `visit`,
// as often as it is called (four times), without listing them: a radix selection, 16 bits at a
// time from the top, each pass counting only the values that share the bits chosen so far.
// `rank` must be below their count.
template <typename ForEach>
int64_t NthSmallest(ForEach &&for_each, uint64_t rank) {
  uint64_t chosen = 0, mask = 0;
  std::vector<uint64_t> counts(uint64_t{1} << 16);
  for (int shift = 48; shift >= 0; shift -= 16) {
    std::fill(counts.begin(), counts.end(), 0);
    for_each([&](int64_t value) {
      const auto bits = static_cast<uint64_t>(value);
      if ((bits & mask) == chosen) ++counts[(bits >> shift) & 0xffff];
    });
    uint64_t digit = 0;
    while (digit + 1 < counts.size() && rank >= counts[digit]) rank -= counts[digit++];
    chosen |= digit << shift;
    mask |= uint64_t{0xffff} << shift;
  }
  return static_cast<int64_t>(chosen);
}

// MedianNs of the `count` non-negative values `for_each(visit)` hands to `visit` (as often as
// it is called), without listing them: for values too many to hold beside what they come from.
template <typename ForEach>
int64_t MedianNsOf(ForEach &&for_each, uint64_t count) {
  if (count == 0) return 0;
  const int64_t upper = NthSmallest(for_each, count / 2);
  if (count % 2 == 1) return upper;
  const int64_t lower = NthSmallest(for_each, count / 2 - 1);
  return lower + (upper - lower) / 2;
}

}  // namespace tfprof::cli
