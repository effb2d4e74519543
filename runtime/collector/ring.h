// A fixed-capacity single-producer single-consumer ring of Event records.
//
// The owning thread is the only producer; the collector (holding the drain lock) is the only
// consumer. Pushing never blocks, allocates or makes a system call: when the ring is full the
// push fails and the caller counts a drop (the newest event is the one lost). The one exception
// is opt-in back-pressure (option full_ring_wait_ms): a full ring then waits, sleeping, for the
// collector to empty it, up to that bound, before it drops.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/collector/event.h"

namespace tfprof {

// How long a full ring waits for the collector to make room before the event is dropped (option
// full_ring_wait_ms; 0: drop at once). Set by prof_start(); read only when a ring is full.
extern std::atomic<uint32_t> g_full_ring_wait_ms;

// Sleeps until `ring_has_room()` or `wait_ms` have passed; whether there is room (recorder.cc).
bool WaitForRingRoom(uint32_t wait_ms, bool (*ring_has_room)(void *), void *ring);

class EventRing {
 public:
  // `capacity` must be a power of two.
  explicit EventRing(uint32_t capacity)
      : slots_(new Event[capacity]), mask_(capacity - 1), room_(capacity) {}
  ~EventRing() { delete[] slots_; }

  EventRing(const EventRing &) = delete;
  EventRing &operator=(const EventRing &) = delete;

  uint32_t capacity() const { return mask_ + 1; }

  // Producer side. A span's or step's end must never find the ring full, so the begin that
  // opens it reserves the end's slot: TryPushReserving() needs room for two records and keeps one
  // of them, and the end is then written with PushReserved(), which cannot fail. `room_` counts
  // the free slots not reserved, as of the last look at the consumer's index, so the common push
  // is one compare and one subtract; the consumer's index is read again only when it runs out.

  // Returns false (and writes nothing) when no unreserved slot is free.
  bool TryPush(const Event &event) {
    if (!TakeRoom(1)) return false;
    Write(event.ticks, event.arg, event.name, event.kind);
    return true;
  }

  // Writes `event` and reserves one slot for a later PushReserved(); false (and writes and
  // reserves nothing) without two unreserved slots.
  bool TryPushReserving(const Event &event) {
    if (!TakeRoom(2)) return false;
    Write(event.ticks, event.arg, event.name, event.kind);
    return true;
  }

  // For a fast path with a slower one behind it: whether TryPushReserving() would succeed
  // without looking at the consumer's index (a false answer may be wrong; the slow path looks),
  // and the push itself after a true answer. Neither calls anything.
  bool HasRoomToReserve() const { return room_ >= 2; }
  void PushReservingInRoom(uint64_t ticks, uint32_t name, EventKind kind) {
    room_ -= 2;
    Write(ticks, 0, name, kind);
  }

  // Writes a record into a slot an earlier TryPushReserving() reserved (one must be held).
  void PushReserved(const Event &event) { Write(event.ticks, event.arg, event.name, event.kind); }

  // Gives back a reservation whose record will never be written.
  void CancelReservation() { room_ += 1; }

  // Writes `header` followed by `length` bytes spread over InlineNameSlots(length) records, all
  // or nothing; with `reserving`, also reserves a slot as TryPushReserving() does.
  bool TryPushWithBytes(const Event &header, const char *bytes, uint32_t length,
                        bool reserving = false) {
    const uint32_t extra = InlineNameSlots(length);
    if (!TakeRoom(uint64_t{1} + extra + (reserving ? 1 : 0))) return false;
    uint64_t index = published_.load(std::memory_order_relaxed);
    slots_[index++ & mask_] = header;
    for (uint32_t slot = 0; slot < extra; ++slot, ++index) {
      const uint32_t offset = slot * static_cast<uint32_t>(sizeof(Event));
      const uint32_t chunk = length - offset < sizeof(Event) ? length - offset : sizeof(Event);
      Event &target = slots_[index & mask_];
      target = Event{};
      std::memcpy(&target, bytes + offset, chunk);
    }
    published_.store(index, std::memory_order_release);
    return true;
  }

  // Consumer only. Calls `visit(const Event &record, std::string_view inline_name)` for every
  // record published so far, in order, then frees their slots; `inline_name` holds the bytes of
  // an inline-name record (empty otherwise). Returns how many records were visited. `scratch`
  // is reused for inline names to avoid allocating per record.
  template <typename Visitor>
  uint64_t Drain(std::string &scratch, Visitor &&visit) {
    const uint64_t end = published_.load(std::memory_order_acquire);
    uint64_t index = consumed_.load(std::memory_order_relaxed);
    uint64_t visited = 0;
    while (index < end) {
      const Event &record = slots_[index++ & mask_];
      ++visited;
      if (!HasInlineName(record.kind)) {
        visit(record, std::string_view());
        continue;
      }
      const uint32_t length = record.name;
      scratch.resize(length);
      for (uint32_t offset = 0; offset < length; offset += sizeof(Event)) {
        const uint32_t chunk = length - offset < sizeof(Event) ? length - offset : sizeof(Event);
        std::memcpy(scratch.data() + offset, &slots_[index++ & mask_], chunk);
      }
      visit(record, std::string_view(scratch));
    }
    consumed_.store(end, std::memory_order_release);
    return visited;
  }

  // Consumer only: how many records wait to be drained.
  uint64_t Pending() const {
    return published_.load(std::memory_order_acquire) - consumed_.load(std::memory_order_relaxed);
  }

 private:
  // Takes `records` unreserved slots if free, looking at the consumer's index only when the
  // known room is short.
  bool TakeRoom(uint64_t records) {
    if (__builtin_expect(room_ < records, 0) && !Refill(records)) return false;
    room_ -= records;
    return true;
  }

  // Takes in the slots the consumer freed since the last look; whether `records` are now free
  // (with back-pressure on, once the collector has made room or the wait is over).
  __attribute__((noinline, cold)) bool Refill(uint64_t records) {
    if (TakeInConsumed(records)) return true;
    const uint32_t wait_ms = g_full_ring_wait_ms.load(std::memory_order_relaxed);
    if (wait_ms == 0) return false;
    wanted_ = records;
    return WaitForRingRoom(wait_ms, [](void *ring) {
      auto *self = static_cast<EventRing *>(ring);
      return self->TakeInConsumed(self->wanted_);
    }, this);
  }

  bool TakeInConsumed(uint64_t records) {
    const uint64_t consumed = consumed_.load(std::memory_order_acquire);
    room_ += consumed - cached_consumed_;
    cached_consumed_ = consumed;
    return room_ >= records;
  }

  // The producer is the only writer of `published_`, so it reads its own last store relaxed.
  // Field by field, so that constant fields become immediate stores.
  void Write(uint64_t ticks, uint64_t arg, uint32_t name, EventKind kind) {
    const uint64_t index = published_.load(std::memory_order_relaxed);
    Event &slot = slots_[index & mask_];
    slot.ticks = ticks;
    slot.arg = arg;
    slot.name = name;
    // `kind` and a zero `reserved` as one 32-bit store (little and big endian alike: the field
    // pair is written from a value whose layout matches it). GCC otherwise merges the two 16-bit
    // stores into a 32-bit one of a value loaded from memory.
    const uint16_t kind_and_reserved[2] = {static_cast<uint16_t>(kind), 0};
    uint32_t bits;
    std::memcpy(&bits, kind_and_reserved, sizeof bits);
    std::memcpy(&slot.kind, &bits, sizeof bits);
    published_.store(index + 1, std::memory_order_release);
  }

  // Producer's fields first: they share a cache line with the owner's other hot state.
  Event *const slots_;
  const uint32_t mask_;
  uint64_t room_;
  uint64_t cached_consumed_ = 0;
  uint64_t wanted_ = 0;  // the records a waiting Refill() needs room for
  std::atomic<uint64_t> published_{0};
  // Consumer's cache line.
  alignas(64) std::atomic<uint64_t> consumed_{0};
};

}  // namespace tfprof
