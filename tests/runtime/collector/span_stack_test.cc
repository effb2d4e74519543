// SpanStack: a thread's open-span depth and which spans are dropped because their begin was.
#include <doctest/doctest.h>

#include <cstdint>

#include "runtime/collector/thread_buffer.h"

using tfprof::SpanStack;

TEST_CASE("span stack: starts empty and outside any dropped span") {
  SpanStack stack;
  CHECK(stack.depth() == 0);
  CHECK_FALSE(stack.InsideDroppedSpan());
}

TEST_CASE("span stack: nesting without drops records every end") {
  SpanStack stack;
  for (uint32_t depth = 0; depth < 10; ++depth) {
    CHECK(stack.depth() == depth);
    CHECK_FALSE(stack.InsideDroppedSpan());
    stack.Open(true);
  }
  CHECK(stack.depth() == 10);
  for (uint32_t depth = 10; depth > 0; --depth) {
    CHECK(stack.Close());
    CHECK(stack.depth() == depth - 1);
    CHECK_FALSE(stack.InsideDroppedSpan());
  }
}

TEST_CASE("span stack: a dropped begin drops everything nested until it closes") {
  SpanStack stack;
  stack.Open(true);   // depth 1: recorded
  stack.Open(true);   // depth 2: recorded
  CHECK_FALSE(stack.InsideDroppedSpan());
  stack.Open(false);  // depth 3: its begin was dropped
  CHECK(stack.depth() == 3);
  CHECK(stack.InsideDroppedSpan());
  // Children of a dropped span are dropped, whatever the caller says.
  stack.Open(false);
  CHECK(stack.InsideDroppedSpan());
  stack.Open(true);
  CHECK(stack.depth() == 5);
  CHECK(stack.InsideDroppedSpan());

  CHECK_FALSE(stack.Close());  // closes depth 5
  CHECK(stack.InsideDroppedSpan());
  CHECK_FALSE(stack.Close());  // closes depth 4
  CHECK(stack.InsideDroppedSpan());
  CHECK_FALSE(stack.Close());  // closes the dropped span itself
  CHECK(stack.depth() == 2);
  CHECK_FALSE(stack.InsideDroppedSpan());

  // Recording resumes for siblings of the dropped span and for its parents.
  stack.Open(true);
  CHECK_FALSE(stack.InsideDroppedSpan());
  CHECK(stack.Close());
  CHECK(stack.Close());
  CHECK(stack.Close());
  CHECK(stack.depth() == 0);
  CHECK_FALSE(stack.InsideDroppedSpan());
}

TEST_CASE("span stack: a dropped top-level span and recovery") {
  SpanStack stack;
  stack.Open(false);
  CHECK(stack.InsideDroppedSpan());
  stack.Open(true);
  CHECK_FALSE(stack.Close());
  CHECK_FALSE(stack.Close());
  CHECK(stack.depth() == 0);
  CHECK_FALSE(stack.InsideDroppedSpan());
  stack.Open(true);
  CHECK(stack.Close());
}

TEST_CASE("span stack: the outermost drop wins until it closes") {
  SpanStack stack;
  stack.Open(true);   // depth 1
  stack.Open(false);  // depth 2: first drop
  stack.Open(true);   // depth 3
  stack.Open(false);  // depth 4: a second, nested drop does not move the drop point
  CHECK_FALSE(stack.Close());  // 4
  CHECK(stack.InsideDroppedSpan());  // still inside the depth-2 drop
  CHECK_FALSE(stack.Close());  // 3
  CHECK(stack.InsideDroppedSpan());
  CHECK_FALSE(stack.Close());  // 2: the dropped span closes
  CHECK_FALSE(stack.InsideDroppedSpan());
  CHECK(stack.Close());        // 1 was recorded
}

TEST_CASE("span stack: sequences of drops and recoveries at the same depth") {
  SpanStack stack;
  stack.Open(true);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    stack.Open(false);
    CHECK(stack.InsideDroppedSpan());
    CHECK_FALSE(stack.Close());
    CHECK_FALSE(stack.InsideDroppedSpan());
    stack.Open(true);
    CHECK_FALSE(stack.InsideDroppedSpan());
    CHECK(stack.Close());
  }
  CHECK(stack.depth() == 1);
  CHECK(stack.Close());
}

TEST_CASE("span stack: counts of recorded and dropped ends match their begins") {
  // Model a recorder: a begin is dropped when the (simulated) ring is full or when inside a
  // dropped span; an end is written exactly when Close() says the begin was recorded.
  SpanStack stack;
  uint32_t begins_recorded = 0;
  uint32_t ends_recorded = 0;
  uint32_t unique = 0;
  for (int iteration = 0; iteration < 200; ++iteration) {
    const bool ring_full = iteration % 7 == 3;
    const int children = iteration % 4;
    const bool recorded = !stack.InsideDroppedSpan() && !ring_full;
    stack.Open(recorded);
    begins_recorded += recorded ? 1 : 0;
    for (int child = 0; child < children; ++child) {
      const bool child_recorded = !stack.InsideDroppedSpan() && (++unique % 5 != 0);
      stack.Open(child_recorded);
      begins_recorded += child_recorded ? 1 : 0;
      ends_recorded += stack.Close() ? 1 : 0;
    }
    ends_recorded += stack.Close() ? 1 : 0;
    CHECK(stack.depth() == 0);
  }
  CHECK(ends_recorded == begins_recorded);
  CHECK(begins_recorded > 0);
}

TEST_CASE("span stack: RecordedOpen counts open spans whose begin reached the ring") {
  // Driven as the recorder drives it: inside a dropped span every begin is dropped.
  SpanStack stack;
  auto open = [&](bool ring_has_room) { stack.Open(!stack.InsideDroppedSpan() && ring_has_room); };
  CHECK(stack.RecordedOpen() == 0);
  open(true);
  open(true);
  CHECK(stack.RecordedOpen() == 2);
  open(false);  // dropped at depth 2
  CHECK(stack.RecordedOpen() == 2);
  open(true);   // inside the dropped span: dropped too
  open(true);
  CHECK(stack.depth() == 5);
  CHECK(stack.RecordedOpen() == 2);
  CHECK_FALSE(stack.Close());
  CHECK_FALSE(stack.Close());
  CHECK(stack.RecordedOpen() == 2);
  CHECK_FALSE(stack.Close());  // the dropped span closes
  CHECK(stack.RecordedOpen() == 2);
  open(true);
  CHECK(stack.RecordedOpen() == 3);
  CHECK(stack.Close());
  CHECK(stack.RecordedOpen() == 2);
  CHECK(stack.Close());
  CHECK(stack.RecordedOpen() == 1);
  CHECK(stack.Close());
  CHECK(stack.RecordedOpen() == 0);
  CHECK(stack.depth() == 0);
}

TEST_CASE("span stack: RecordedOpen equals min(depth, drop depth) through a long sequence") {
  SpanStack stack;
  uint32_t expected_recorded = 0;
  uint32_t drop_depth = SpanStack::kNoDrop;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    CAPTURE(iteration);
    const bool open_more = stack.depth() == 0 || (iteration * 7919) % 5 < 3;
    if (open_more && stack.depth() < 40) {
      const bool recorded = !stack.InsideDroppedSpan() && (iteration * 104729) % 11 != 0;
      if (!recorded && drop_depth == SpanStack::kNoDrop) drop_depth = stack.depth();
      if (recorded) ++expected_recorded;
      stack.Open(recorded);
    } else if (stack.depth() > 0) {
      const bool closing_recorded = stack.depth() - 1 < drop_depth;
      CHECK(stack.Close() == closing_recorded);
      if (closing_recorded) --expected_recorded;
      if (stack.depth() == drop_depth) drop_depth = SpanStack::kNoDrop;
    }
    const uint32_t minimum = stack.depth() < drop_depth ? stack.depth() : drop_depth;
    CHECK(stack.RecordedOpen() == expected_recorded);
    CHECK(stack.RecordedOpen() == minimum);
    CHECK(stack.InsideDroppedSpan() == (drop_depth != SpanStack::kNoDrop));
  }
}
