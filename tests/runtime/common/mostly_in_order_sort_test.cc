// StableSortMostlyInOrder and SortMostlyInOrder: std::stable_sort's and std::sort's results, in a
// few moves per element when the list is nearly sorted, and their own work when it is not.
#include "runtime/common/mostly_in_order_sort.h"

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "doctest/doctest.h"

namespace tfprof {
namespace {

struct Keyed {
  int key;
  int id;  // the position in the original list: ties must keep it in order
};

bool operator==(const Keyed &a, const Keyed &b) { return a.key == b.key && a.id == b.id; }

std::vector<Keyed> Numbered(const std::vector<int> &keys) {
  std::vector<Keyed> list;
  for (size_t index = 0; index < keys.size(); ++index) {
    list.push_back({keys[index], static_cast<int>(index)});
  }
  return list;
}

// Sorts `list` both ways; returns how many comparisons StableSortMostlyInOrder made.
size_t CheckSameAsStableSort(const std::vector<Keyed> &list) {
  std::vector<Keyed> expected = list;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Keyed &a, const Keyed &b) { return a.key < b.key; });
  std::vector<Keyed> sorted = list;
  size_t comparisons = 0;
  StableSortMostlyInOrder(sorted.begin(), sorted.end(), [&](const Keyed &a, const Keyed &b) {
    ++comparisons;
    return a.key < b.key;
  });
  CHECK(sorted == expected);
  return comparisons;
}

TEST_CASE("mostly in order sort: a list with a few late elements takes a few moves each") {
  // A PyTorch-shaped thread: per step, 4 annotations listed before the 40 launches inside them.
  std::vector<int> keys;
  for (int step = 0; step < 2000; ++step) {
    const int base = step * 1000;
    for (int annotation : {0, 1, 500, 900}) keys.push_back(base + annotation);
    for (int launch = 0; launch < 40; ++launch) keys.push_back(base + 2 + launch * 20);
  }
  const size_t size = keys.size();
  const size_t comparisons = CheckSameAsStableSort(Numbered(keys));
  CHECK(comparisons < 4 * size);  // a merge sort makes about size * log2(size) = 17 * size
  // A parent listed after 100,000 of its children moves back past all of them.
  std::vector<int> parent_last;
  for (int child = 1; child <= 100'000; ++child) parent_last.push_back(child);
  parent_last.push_back(0);
  CHECK(CheckSameAsStableSort(Numbered(parent_last)) < 3 * parent_last.size());
}

TEST_CASE("mostly in order sort: ties keep their order, sorted or not, long or short") {
  CheckSameAsStableSort({});
  CheckSameAsStableSort(Numbered({7}));
  CheckSameAsStableSort(Numbered({3, 1, 3, 1, 2, 2, 1, 3}));
  std::vector<int> sorted(1000);
  for (size_t index = 0; index < sorted.size(); ++index) sorted[index] = static_cast<int>(index / 3);
  CHECK(CheckSameAsStableSort(Numbered(sorted)) == sorted.size() - 1);  // one look at each pair
}

TEST_CASE("mostly in order sort: a list in no order is handed to stable_sort, still stable") {
  std::mt19937 random(36);
  std::vector<int> keys(50'000);
  for (int &key : keys) key = static_cast<int>(random() % 1000);  // many ties
  CheckSameAsStableSort(Numbered(keys));
  std::vector<int> reversed(20'000);
  for (size_t index = 0; index < reversed.size(); ++index) {
    reversed[index] = static_cast<int>(reversed.size() - index) / 2;
  }
  // The insertion sort gives up within its first few hundred elements (the moves it earns run
  // out), not after size^2 / 2 moves: stable_sort's own comparisons are about size * log2(size).
  const size_t comparisons = CheckSameAsStableSort(Numbered(reversed));
  CHECK(comparisons < 16 * reversed.size());

  // Where it gives up, the list is a permutation with ties still in their first order.
  std::vector<Keyed> list = Numbered(reversed);
  CHECK_FALSE(InsertionSortIfMostlyInOrder(
      list.begin(), list.end(), [](const Keyed &a, const Keyed &b) { return a.key < b.key; }));
  std::vector<Keyed> by_id = list;
  std::sort(by_id.begin(), by_id.end(), [](const Keyed &a, const Keyed &b) { return a.id < b.id; });
  CHECK(by_id == Numbered(reversed));
  for (size_t a = 0; a + 1 < list.size(); ++a) {
    if (list[a].key == list[a + 1].key) CHECK(list[a].id < list[a + 1].id);
  }
}

TEST_CASE("mostly in order sort: the unstable one sorts, nearly in order or in none") {
  std::mt19937 random(36);
  for (const bool nearly : {true, false}) {
    std::vector<int> keys(30'000);
    for (size_t index = 0; index < keys.size(); ++index) {
      keys[index] = nearly ? static_cast<int>(index) - static_cast<int>(random() % 5) * 3
                           : static_cast<int>(random() % 10'000);
    }
    std::vector<int> expected = keys;
    std::sort(expected.begin(), expected.end());
    size_t comparisons = 0;
    SortMostlyInOrder(keys.begin(), keys.end(), [&](int a, int b) {
      ++comparisons;
      return a < b;
    });
    CHECK(keys == expected);
    if (nearly) CHECK(comparisons < 6 * keys.size());
  }
}

}  // namespace
}  // namespace tfprof
