// The nesting state of a thread's spans when some begins may be lost: a lost begin drops its
// whole subtree, begins and ends alike, so the output never shows an end without its begin.
#pragma once

#include <cstdint>

namespace tfprof {

// Tracks the depth of a thread's open spans and whether their begins reached the ring. When a
// begin is dropped (ring full), that span and every span opened inside it are dropped, begins and
// ends alike, until it closes: the output never shows an end without its begin, nor a child
// whose parent is missing.
class SpanStack {
 public:
  static constexpr uint32_t kNoDrop = UINT32_MAX;

  uint32_t depth() const { return depth_; }

  // How many open spans have their begin in the ring: their ends must always find room.
  uint32_t RecordedOpen() const { return recorded_open_; }

  // Whether a span opened now must be dropped because an enclosing span was.
  bool InsideDroppedSpan() const { return depth_ >= drop_depth_; }

  // `recorded` must be false while InsideDroppedSpan(): a span inside a dropped one is dropped.
  void Open(bool recorded) {
    if (recorded && depth_ < drop_depth_) {
      ++recorded_open_;
    } else if (drop_depth_ == kNoDrop) {
      drop_depth_ = depth_;
    }
    ++depth_;
  }

  // Requires depth() > 0. Returns whether the closing span's begin was recorded.
  bool Close() {
    --depth_;
    if (depth_ < drop_depth_) {
      --recorded_open_;
      return true;
    }
    if (depth_ == drop_depth_) drop_depth_ = kNoDrop;
    return false;
  }

 private:
  uint32_t depth_ = 0;
  uint32_t drop_depth_ = kNoDrop;
  uint32_t recorded_open_ = 0;  // == min(depth_, drop_depth_), kept to save the hot path a branch
};

}  // namespace tfprof
