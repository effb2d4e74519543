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

}  // namespace tfprof::cli
