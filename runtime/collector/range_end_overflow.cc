#include "runtime/collector/range_end_overflow.h"

#include <cstring>
#include <new>

namespace tfprof {

namespace {

// A bounded multi-producer queue with one sequence number per cell (D. Vyukov's design). A
// cell's sequence is kept as an offset from its index, so the all-zero static state is the
// initial state (cell i expects position i) without a constructor.
constexpr uint64_t kCapacity = 8192;  // a power of two
constexpr uint64_t kMask = kCapacity - 1;

struct Cell {
  std::atomic<uint64_t> sequence_offset{0};
  OverflowRangeEnd end;
};

Cell g_cells[kCapacity];
std::atomic<uint64_t> g_enqueue_position{0};
uint64_t g_dequeue_position = 0;  // the collector's own

uint64_t SequenceOf(const Cell &cell, uint64_t index, std::memory_order order) {
  return cell.sequence_offset.load(order) + index;
}

}  // namespace

bool PushOverflowRangeEnd(const OverflowRangeEnd &end) {
  uint64_t position = g_enqueue_position.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t index = position & kMask;
    Cell &cell = g_cells[index];
    const int64_t lag =
        static_cast<int64_t>(SequenceOf(cell, index, std::memory_order_acquire) - position);
    if (lag == 0) {
      if (g_enqueue_position.compare_exchange_weak(position, position + 1,
                                                   std::memory_order_relaxed)) {
        cell.end = end;
        cell.sequence_offset.store(position + 1 - index, std::memory_order_release);
        return true;
      }
    } else if (lag < 0) {
      return false;  // full: the cell still holds an end from one lap before
    } else {
      position = g_enqueue_position.load(std::memory_order_relaxed);
    }
  }
}

bool PopOverflowRangeEnd(OverflowRangeEnd *end) {
  const uint64_t position = g_dequeue_position;
  const uint64_t index = position & kMask;
  Cell &cell = g_cells[index];
  if (SequenceOf(cell, index, std::memory_order_acquire) != position + 1) return false;
  *end = cell.end;
  cell.sequence_offset.store(position + kCapacity - index, std::memory_order_release);
  g_dequeue_position = position + 1;
  return true;
}

void ResetOverflowRangeEndsAfterFork() {
  for (Cell &cell : g_cells) cell.sequence_offset.store(0, std::memory_order_relaxed);
  g_enqueue_position.store(0, std::memory_order_relaxed);
  g_dequeue_position = 0;
}

}  // namespace tfprof
