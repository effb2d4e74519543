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

  // How many open spans have their begin in the ring (each holds a reserved slot for its end).
  uint32_t RecordedOpen() const { return depth_ < drop_depth_ ? depth_ : drop_depth_; }

  // Whether a span opened now must be dropped because an enclosing span was.
  bool InsideDroppedSpan() const { return depth_ >= drop_depth_; }

  // `recorded` must be false while InsideDroppedSpan(): a span inside a dropped one is dropped.
  void Open(bool recorded) {
    if (!recorded && drop_depth_ == kNoDrop) drop_depth_ = depth_;
    ++depth_;
  }

  // Requires depth() > 0. Returns whether the closing span's begin was recorded.
  bool Close() {
    --depth_;
    if (depth_ < drop_depth_) return true;
    if (depth_ == drop_depth_) drop_depth_ = kNoDrop;
    return false;
  }

  // Open(true) and Close() for callers that know !InsideDroppedSpan(), when every open span is
  // recorded (the recorder's fast path).
  void OpenRecorded() { ++depth_; }
  // Close() of a recorded span; false (and nothing changed) when no span is open.
  bool TryCloseRecorded() {
    uint32_t depth;
    if (__builtin_sub_overflow(depth_, 1u, &depth)) return false;
    depth_ = depth;
    return true;
  }

 private:
  uint32_t depth_ = 0;
  uint32_t drop_depth_ = kNoDrop;
};

}  // namespace tfprof
