// EventRing: the per-thread single-producer single-consumer ring of Event records.
#include "runtime/collector/ring.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/collector/event.h"

namespace {

using tfprof::Event;
using tfprof::EventKind;
using tfprof::EventRing;

Event Numbered(uint64_t n) {
  return Event{n, n * 3 + 1, static_cast<uint32_t>(n * 7), EventKind::kInstant, 0};
}

struct Drained {
  Event record;
  std::string inline_name;
};

std::vector<Drained> DrainAll(EventRing &ring, uint64_t *visited = nullptr) {
  std::vector<Drained> out;
  std::string scratch;
  const uint64_t count = ring.Drain(scratch, [&](const Event &record, std::string_view name) {
    out.push_back(Drained{record, std::string(name)});
  });
  if (visited != nullptr) *visited = count;
  return out;
}

// Bytes that differ at every position, so a misplaced chunk shows.
std::string PatternBytes(uint32_t length, uint32_t seed) {
  std::string bytes(length, '\0');
  for (uint32_t i = 0; i < length; ++i) {
    bytes[i] = static_cast<char>((i * 31 + seed * 17 + 5) & 0xff);
  }
  return bytes;
}

Event InlineHeader(uint64_t ticks, uint32_t length) {
  return Event{ticks, 0, length, tfprof::WithInlineName(EventKind::kSpanBegin), 0};
}

}  // namespace

TEST_CASE("event ring: InlineNameSlots rounds up to whole records") {
  CHECK(tfprof::InlineNameSlots(0) == 0);
  CHECK(tfprof::InlineNameSlots(1) == 1);
  CHECK(tfprof::InlineNameSlots(23) == 1);
  CHECK(tfprof::InlineNameSlots(24) == 1);
  CHECK(tfprof::InlineNameSlots(25) == 2);
  CHECK(tfprof::InlineNameSlots(48) == 2);
  CHECK(tfprof::InlineNameSlots(49) == 3);
  CHECK(tfprof::InlineNameSlots(100) == 5);
}

TEST_CASE("event ring: records drain in push order with every field intact") {
  EventRing ring(8);
  CHECK(ring.capacity() == 8);
  CHECK(ring.Pending() == 0);
  for (uint64_t n = 0; n < 5; ++n) REQUIRE(ring.TryPush(Numbered(n)));
  CHECK(ring.Pending() == 5);

  uint64_t visited = 0;
  const std::vector<Drained> drained = DrainAll(ring, &visited);
  CHECK(visited == 5);
  REQUIRE(drained.size() == 5);
  for (uint64_t n = 0; n < 5; ++n) {
    CAPTURE(n);
    CHECK(drained[n].record.ticks == n);
    CHECK(drained[n].record.arg == n * 3 + 1);
    CHECK(drained[n].record.name == n * 7);
    CHECK(drained[n].record.kind == EventKind::kInstant);
    CHECK(drained[n].inline_name.empty());
  }
  CHECK(ring.Pending() == 0);
  CHECK(DrainAll(ring).empty());
}

TEST_CASE("event ring: holds exactly capacity records") {
  for (uint32_t capacity : {1u, 2u, 16u, 1024u}) {
    CAPTURE(capacity);
    EventRing ring(capacity);
    CHECK(ring.capacity() == capacity);
    for (uint32_t n = 0; n < capacity; ++n) CHECK(ring.TryPush(Numbered(n)));
    CHECK(ring.Pending() == capacity);
    CHECK_FALSE(ring.TryPush(Numbered(capacity)));
    CHECK_FALSE(ring.TryPush(Numbered(capacity + 1)));
    CHECK(ring.Pending() == capacity);

    // The failed pushes wrote nothing: exactly the first `capacity` records come out.
    const std::vector<Drained> drained = DrainAll(ring);
    REQUIRE(drained.size() == capacity);
    for (uint32_t n = 0; n < capacity; ++n) CHECK(drained[n].record.ticks == n);
  }
}

TEST_CASE("event ring: draining frees room for new records") {
  EventRing ring(4);
  for (uint64_t n = 0; n < 4; ++n) REQUIRE(ring.TryPush(Numbered(n)));
  REQUIRE_FALSE(ring.TryPush(Numbered(99)));
  CHECK(DrainAll(ring).size() == 4);
  for (uint64_t n = 4; n < 8; ++n) CHECK(ring.TryPush(Numbered(n)));
  CHECK_FALSE(ring.TryPush(Numbered(99)));
  const std::vector<Drained> drained = DrainAll(ring);
  REQUIRE(drained.size() == 4);
  for (uint64_t n = 0; n < 4; ++n) CHECK(drained[n].record.ticks == n + 4);
}

TEST_CASE("event ring: wraps around many times without losing or reordering records") {
  EventRing ring(16);
  uint64_t next_push = 0;
  uint64_t next_expected = 0;
  // Batches of varying size so that the wrap point falls everywhere in the slot array.
  for (int round = 0; round < 500; ++round) {
    const uint64_t batch = 1 + static_cast<uint64_t>(round * 7) % 16;
    for (uint64_t i = 0; i < batch; ++i) REQUIRE(ring.TryPush(Numbered(next_push++)));
    CHECK(ring.Pending() == batch);
    for (const Drained &item : DrainAll(ring)) {
      CHECK(item.record.ticks == next_expected);
      CHECK(item.record.arg == next_expected * 3 + 1);
      ++next_expected;
    }
  }
  CHECK(next_expected == next_push);
  CHECK(next_push > 16 * 100);
}

TEST_CASE("event ring: a partial drain keeps the producer going at the right place") {
  EventRing ring(8);
  uint64_t next_push = 0;
  uint64_t next_expected = 0;
  for (int round = 0; round < 200; ++round) {
    // Fill to the brim, then drain; the ring is full at every wrap.
    while (ring.TryPush(Numbered(next_push))) ++next_push;
    CHECK(ring.Pending() == 8);
    for (const Drained &item : DrainAll(ring)) CHECK(item.record.ticks == next_expected++);
  }
  CHECK(next_expected == 8 * 200);
  CHECK(next_push == next_expected);
}

TEST_CASE("event ring: an inline name is reassembled exactly") {
  for (uint32_t length : {0u, 1u, 23u, 24u, 25u, 47u, 48u, 49u, 100u}) {
    CAPTURE(length);
    EventRing ring(16);
    const std::string bytes = PatternBytes(length, length);
    REQUIRE(ring.TryPushWithBytes(InlineHeader(42, length), bytes.data(), length));
    CHECK(ring.Pending() == 1 + tfprof::InlineNameSlots(length));

    uint64_t visited = 0;
    const std::vector<Drained> drained = DrainAll(ring, &visited);
    CHECK(visited == 1);  // the name's slots are not records of their own
    REQUIRE(drained.size() == 1);
    CHECK(drained[0].record.ticks == 42);
    CHECK(drained[0].record.name == length);
    CHECK(tfprof::HasInlineName(drained[0].record.kind));
    CHECK(tfprof::BaseKind(drained[0].record.kind) == EventKind::kSpanBegin);
    CHECK(drained[0].inline_name == bytes);
    CHECK(ring.Pending() == 0);
  }
}

TEST_CASE("event ring: inline names straddling the wrap point are reassembled exactly") {
  const uint32_t capacity = 8;
  for (uint32_t length : {1u, 23u, 24u, 25u, 100u, 160u}) {
    const uint32_t slots = 1 + tfprof::InlineNameSlots(length);
    REQUIRE(slots <= capacity);
    // Start the inline record at every slot of the ring, so its bytes wrap at every offset.
    for (uint32_t start = 0; start < capacity; ++start) {
      CAPTURE(length);
      CAPTURE(start);
      EventRing ring(capacity);
      for (uint32_t n = 0; n < start; ++n) REQUIRE(ring.TryPush(Numbered(n)));
      DrainAll(ring);
      const std::string bytes = PatternBytes(length, start);
      REQUIRE(ring.TryPush(Numbered(1000)));
      DrainAll(ring);  // the header now starts at slot (start + 1) % capacity
      REQUIRE(ring.TryPushWithBytes(InlineHeader(7, length), bytes.data(), length));
      const bool room_for_one_more = slots < capacity;
      CHECK(ring.TryPush(Numbered(2000)) == room_for_one_more);

      const std::vector<Drained> drained = DrainAll(ring);
      REQUIRE(drained.size() == (room_for_one_more ? 2u : 1u));
      CHECK(drained[0].record.ticks == 7);
      CHECK(drained[0].inline_name == bytes);
      if (room_for_one_more) {
        CHECK(drained[1].record.ticks == 2000);
        CHECK(drained[1].inline_name.empty());
      }
    }
  }
}

TEST_CASE("event ring: plain and inline records interleave in order") {
  EventRing ring(64);
  const std::string first = PatternBytes(30, 1);
  const std::string second = PatternBytes(5, 2);
  REQUIRE(ring.TryPush(Numbered(1)));
  REQUIRE(ring.TryPushWithBytes(InlineHeader(2, 30), first.data(), 30));
  REQUIRE(ring.TryPush(Numbered(3)));
  REQUIRE(ring.TryPushWithBytes(InlineHeader(4, 5), second.data(), 5));
  REQUIRE(ring.TryPush(Numbered(5)));
  CHECK(ring.Pending() == 1 + 3 + 1 + 2 + 1);

  const std::vector<Drained> drained = DrainAll(ring);
  REQUIRE(drained.size() == 5);
  for (uint64_t i = 0; i < 5; ++i) CHECK(drained[i].record.ticks == i + 1);
  CHECK(drained[0].inline_name.empty());
  CHECK(drained[1].inline_name == first);
  CHECK(drained[2].inline_name.empty());
  CHECK(drained[3].inline_name == second);
  CHECK(drained[4].inline_name.empty());
}

TEST_CASE("event ring: TryPushWithBytes is all or nothing") {
  EventRing ring(8);
  for (uint64_t n = 0; n < 5; ++n) REQUIRE(ring.TryPush(Numbered(n)));
  // 3 free slots: a header plus 25..48 bytes (3 slots) fits, a header plus 49 bytes (4) does not.
  const std::string too_long = PatternBytes(49, 9);
  CHECK_FALSE(ring.TryPushWithBytes(InlineHeader(50, 49), too_long.data(), 49));
  CHECK(ring.Pending() == 5);
  const std::string fits = PatternBytes(48, 10);
  CHECK(ring.TryPushWithBytes(InlineHeader(60, 48), fits.data(), 48));
  CHECK(ring.Pending() == 8);
  CHECK_FALSE(ring.TryPush(Numbered(99)));

  const std::vector<Drained> drained = DrainAll(ring);
  REQUIRE(drained.size() == 6);
  for (uint64_t n = 0; n < 5; ++n) CHECK(drained[n].record.ticks == n);
  CHECK(drained[5].record.ticks == 60);
  CHECK(drained[5].inline_name == fits);
}

TEST_CASE("event ring: a name larger than the whole ring never fits") {
  EventRing ring(4);
  const std::string bytes = PatternBytes(100, 3);  // 1 + 5 slots
  CHECK_FALSE(ring.TryPushWithBytes(InlineHeader(1, 100), bytes.data(), 100));
  CHECK(ring.Pending() == 0);
  // The failed push left the ring usable.
  CHECK(ring.TryPush(Numbered(1)));
  CHECK(DrainAll(ring).size() == 1);
}

TEST_CASE("event ring: the drain scratch buffer is reused across inline names") {
  EventRing ring(32);
  const std::string long_name = PatternBytes(100, 4);
  const std::string short_name = PatternBytes(3, 5);
  REQUIRE(ring.TryPushWithBytes(InlineHeader(1, 100), long_name.data(), 100));
  REQUIRE(ring.TryPushWithBytes(InlineHeader(2, 3), short_name.data(), 3));
  std::string scratch = "left over from before";
  std::vector<std::string> names;
  ring.Drain(scratch, [&](const Event &, std::string_view name) { names.emplace_back(name); });
  REQUIRE(names.size() == 2);
  CHECK(names[0] == long_name);
  CHECK(names[1] == short_name);  // not a prefix of the long one plus stale bytes
}

TEST_CASE("event ring: Pending counts slots published and not yet drained") {
  EventRing ring(16);
  CHECK(ring.Pending() == 0);
  REQUIRE(ring.TryPush(Numbered(0)));
  CHECK(ring.Pending() == 1);
  const std::string bytes = PatternBytes(50, 1);
  REQUIRE(ring.TryPushWithBytes(InlineHeader(1, 50), bytes.data(), 50));
  CHECK(ring.Pending() == 1 + 1 + 3);
  DrainAll(ring);
  CHECK(ring.Pending() == 0);
}

TEST_CASE("event ring: a reserving push keeps its end's slot free") {
  EventRing ring(8);
  for (uint64_t n = 0; n < 5; ++n) REQUIRE(ring.TryPush(Numbered(n)));
  // 3 free slots: a reserving push takes 2 of them (its record and its end's).
  CHECK(ring.TryPushReserving(Numbered(5)));
  // 1 free slot besides the reserved one: no room for another reservation, room for a record.
  CHECK_FALSE(ring.TryPushReserving(Numbered(100)));
  CHECK(ring.Pending() == 6);
  CHECK(ring.TryPush(Numbered(6)));
  // Only the reserved slot is left: no push may take it.
  CHECK_FALSE(ring.TryPush(Numbered(101)));
  CHECK_FALSE(ring.TryPushReserving(Numbered(102)));
  CHECK(ring.Pending() == 7);
  // It is there for the end.
  ring.PushReserved(Numbered(7));
  CHECK(ring.Pending() == 8);
  const std::vector<Drained> drained = DrainAll(ring);
  REQUIRE(drained.size() == 8);
  for (uint64_t n = 0; n < 8; ++n) CHECK(drained[n].record.ticks == n);
}

TEST_CASE("event ring: nested reservations fill the ring to the last slot") {
  EventRing ring(8);
  // Four nested opens hold four records and four reserved ends: the whole ring.
  for (uint64_t n = 0; n < 4; ++n) REQUIRE(ring.TryPushReserving(Numbered(n)));
  CHECK_FALSE(ring.TryPushReserving(Numbered(100)));
  CHECK_FALSE(ring.TryPush(Numbered(101)));
  for (uint64_t n = 4; n < 8; ++n) ring.PushReserved(Numbered(n));
  const std::vector<Drained> drained = DrainAll(ring);
  REQUIRE(drained.size() == 8);
  for (uint64_t n = 0; n < 8; ++n) CHECK(drained[n].record.ticks == n);
  // Drained and with nothing reserved, the ring is whole again.
  for (uint64_t n = 0; n < 8; ++n) CHECK(ring.TryPush(Numbered(n)));
  CHECK_FALSE(ring.TryPush(Numbered(8)));
}

TEST_CASE("event ring: a cancelled reservation frees its slot") {
  EventRing ring(4);
  REQUIRE(ring.TryPushReserving(Numbered(0)));
  REQUIRE(ring.TryPush(Numbered(1)));
  REQUIRE(ring.TryPush(Numbered(2)));
  CHECK_FALSE(ring.TryPush(Numbered(3)));  // the last free slot is reserved
  ring.CancelReservation();
  CHECK(ring.TryPush(Numbered(3)));
  CHECK(ring.Pending() == 4);
  CHECK_FALSE(ring.TryPush(Numbered(4)));
}

TEST_CASE("event ring: a one-slot ring never takes a reserving push") {
  EventRing ring(1);
  CHECK_FALSE(ring.TryPushReserving(Numbered(0)));
  CHECK(ring.TryPush(Numbered(0)));
  CHECK(ring.Pending() == 1);
}

TEST_CASE("event ring: reserving pushes see room freed by a drain") {
  EventRing ring(8);
  uint64_t next = 0;
  // Open and close spans one level deep until full, drain, and repeat across wraps: each round
  // the four begin/end pairs fill the ring exactly.
  for (int round = 0; round < 50; ++round) {
    int pairs = 0;
    while (ring.TryPushReserving(Numbered(next))) {
      ++next;
      ring.PushReserved(Numbered(next++));
      ++pairs;
    }
    CHECK(pairs == 4);
    CHECK(ring.Pending() == 8);
    CHECK(DrainAll(ring).size() == 8);
  }
  CHECK(next == 50 * 8);
}

TEST_CASE("event ring: TryPushWithBytes with a reservation takes one more slot") {
  EventRing ring(8);
  REQUIRE(ring.TryPush(Numbered(0)));
  REQUIRE(ring.TryPushReserving(Numbered(1)));
  // 5 unreserved slots: a header plus 97 bytes would take 6; plus 72 bytes, 4 and its end 5.
  const std::string bytes = PatternBytes(72, 11);
  CHECK_FALSE(ring.TryPushWithBytes(InlineHeader(1, 97), PatternBytes(97, 3).data(), 97));
  CHECK(ring.TryPushWithBytes(InlineHeader(1, 72), bytes.data(), 72, true));
  CHECK(ring.Pending() == 6);
  CHECK_FALSE(ring.TryPush(Numbered(2)));  // both free slots are reserved
  ring.PushReserved(Numbered(2));
  ring.PushReserved(Numbered(3));
  const std::vector<Drained> drained = DrainAll(ring);
  REQUIRE(drained.size() == 5);
  CHECK(drained[2].inline_name == bytes);
  CHECK(drained[4].record.ticks == 3);
}
