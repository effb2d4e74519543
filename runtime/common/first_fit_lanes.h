// Finds the first lane a slice fits in, in O(log lanes), for the writers that spread the
// overlapping slices of one row over extra lanes (Perfetto's extra tracks, timeline.py's lanes).
// Scanning the lanes instead made 100,000 events 1 ms long and 1 ns apart (100,000 lanes) cost
// 10^10 steps (issue 32).
//
// Each lane has two keys: `free_from`, the earliest start a slice may have to go on it as the
// only open slice (INT64_MAX: never, a slice is open there), and `open_until`, the end of its open
// slice that a new one may nest in (INT64_MIN: none open).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tfprof {

class FirstFitLanes {
 public:
  size_t size() const { return size_; }

  // Appends a lane with the given keys; returns its index.
  size_t Add(int64_t free_from, int64_t open_until) {
    if (size_ == capacity_) Grow();
    Set(size_++, free_from, open_until);
    return size_ - 1;
  }

  void Set(size_t lane, int64_t free_from, int64_t open_until) {
    size_t node = capacity_ + lane;
    nodes_[node] = Node{free_from, open_until};
    for (node /= 2; node >= 1; node /= 2) {
      nodes_[node] = Merge(nodes_[2 * node], nodes_[2 * node + 1]);
    }
  }

  // The first lane with free_from <= begin_ns or open_until >= end_ns; size() when none.
  size_t Find(int64_t begin_ns, int64_t end_ns) const {
    if (size_ == 0 || !Fits(nodes_[1], begin_ns, end_ns)) return size_;
    size_t node = 1;
    while (node < capacity_) {
      node *= 2;
      if (!Fits(nodes_[node], begin_ns, end_ns)) ++node;
    }
    return node - capacity_;
  }

  void Clear() {
    size_ = 0;
    capacity_ = 0;
    nodes_.clear();
  }

 private:
  // A subtree's smallest free_from and largest open_until: it holds a fitting lane exactly when
  // one of them passes.
  struct Node {
    int64_t free_from = std::numeric_limits<int64_t>::max();
    int64_t open_until = std::numeric_limits<int64_t>::min();
  };

  static Node Merge(const Node &a, const Node &b) {
    return Node{std::min(a.free_from, b.free_from), std::max(a.open_until, b.open_until)};
  }
  static bool Fits(const Node &node, int64_t begin_ns, int64_t end_ns) {
    return node.free_from <= begin_ns || node.open_until >= end_ns;
  }

  // Doubles the leaves and rebuilds the inner nodes: O(1) a lane, amortized.
  void Grow() {
    const size_t capacity = std::max<size_t>(1, capacity_ * 2);
    std::vector<Node> nodes(2 * capacity);
    for (size_t lane = 0; lane < size_; ++lane) nodes[capacity + lane] = nodes_[capacity_ + lane];
    for (size_t node = capacity - 1; node >= 1; --node) {
      nodes[node] = Merge(nodes[2 * node], nodes[2 * node + 1]);
    }
    nodes_.swap(nodes);
    capacity_ = capacity;
  }

  size_t size_ = 0;
  size_t capacity_ = 0;      // leaves, a power of two
  std::vector<Node> nodes_;  // a heap-ordered segment tree: node i's children are 2i and 2i+1
};

}  // namespace tfprof
