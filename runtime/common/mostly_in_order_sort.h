// A stable sort for lists that are nearly in order already, as traces' lists are: a thread's spans
// arrive in begin order except for a few that a file lists late (PyTorch writes a step's
// annotations before the launch calls inside them). An insertion sort puts such a list in order
// in a few moves per element, where std::stable_sort compares each element log n times and
// copies the list through a buffer of half its size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>

namespace tfprof {

// The moves the insertion sort earns with each element it passes, and those it may run ahead of
// them: a parent span listed after thousands of its children moves back past all of them, while a
// list in no order is given up on within its first few hundred elements.
inline constexpr std::ptrdiff_t kInOrderMovesPerElement = 8;
inline constexpr std::ptrdiff_t kInOrderSpareMoves = 4096;

// Insertion-sorts [first, last) by `less` while the moves it makes stay within what it has
// earned (kInOrderMovesPerElement per element passed, plus kInOrderSpareMoves). Returns false
// when it gave up: the range is then a sorted front and the untouched rest, in which equal
// elements keep their first order (so a stable sort of it gives what a stable sort of the
// original would). Giving up costs at most the moves earned so far plus one element's.
template <typename RandomIt, typename Less>
bool InsertionSortIfMostlyInOrder(RandomIt first, RandomIt last, Less less) {
  if (last - first < 2) return true;
  std::ptrdiff_t moves_left = kInOrderSpareMoves;
  for (RandomIt at = first + 1; at != last; ++at) {
    moves_left += kInOrderMovesPerElement;
    if (!less(*at, *(at - 1))) continue;
    auto value = std::move(*at);
    RandomIt hole = at;
    do {
      *hole = std::move(*(hole - 1));
      --hole;
      --moves_left;
    } while (hole != first && less(value, *(hole - 1)));
    *hole = std::move(value);
    if (moves_left < 0 && at + 1 != last) return false;
  }
  return true;
}

// Sorts [first, last) by `less`, stably, like std::stable_sort (same result): by insertion while
// that stays cheap, else std::stable_sort, so a list in no order costs little more than before.
template <typename RandomIt, typename Less>
void StableSortMostlyInOrder(RandomIt first, RandomIt last, Less less) {
  if (!InsertionSortIfMostlyInOrder(first, last, less)) std::stable_sort(first, last, less);
}

// Sorts [first, last) by `less` like std::sort (equal elements in no set order): by insertion
// while that stays cheap, else std::sort, which needs no buffer.
template <typename RandomIt, typename Less>
void SortMostlyInOrder(RandomIt first, RandomIt last, Less less) {
  if (!InsertionSortIfMostlyInOrder(first, last, less)) std::sort(first, last, less);
}

}  // namespace tfprof
