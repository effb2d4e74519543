// A fixed-capacity single-producer single-consumer ring of Event records.
//
// The owning thread is the only producer; the collector (holding the drain lock) is the only
// consumer. Pushing never blocks, allocates or makes a system call: when the ring is full the
// push fails and the caller counts a drop (the newest event is the one lost).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/event.h"

namespace tfprof {

class EventRing {
 public:
  // `capacity` must be a power of two.
  explicit EventRing(uint32_t capacity)
      : slots_(new Event[capacity]), mask_(capacity - 1) {}

  EventRing(const EventRing &) = delete;
  EventRing &operator=(const EventRing &) = delete;

  uint32_t capacity() const { return mask_ + 1; }

  // Producer only. Returns false (and writes nothing) unless the ring has room for the event
  // plus `reserve` more records: room kept for the ends of spans already recorded, so that an
  // end never finds the ring full.
  bool TryPush(const Event &event, uint32_t reserve = 0) {
    const uint64_t index = write_index_;
    if (__builtin_expect(index + reserve - cached_consumed_ > mask_, 0) &&
        !HasRoomFor(uint64_t{1} + reserve)) {
      return false;
    }
    slots_[index & mask_] = event;
    Publish(index + 1);
    return true;
  }

  // Producer only. Writes `header` followed by `length` bytes spread over
  // InlineNameSlots(length) records, all or nothing, keeping `reserve` records free.
  bool TryPushWithBytes(const Event &header, const char *bytes, uint32_t length,
                        uint32_t reserve = 0) {
    const uint32_t extra = InlineNameSlots(length);
    if (!HasRoomFor(uint64_t{1} + extra + reserve)) return false;
    uint64_t index = write_index_;
    slots_[index++ & mask_] = header;
    for (uint32_t slot = 0; slot < extra; ++slot, ++index) {
      const uint32_t offset = slot * static_cast<uint32_t>(sizeof(Event));
      const uint32_t chunk = length - offset < sizeof(Event) ? length - offset : sizeof(Event);
      Event &target = slots_[index & mask_];
      target = Event{};
      std::memcpy(&target, bytes + offset, chunk);
    }
    Publish(index);
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
  __attribute__((noinline, cold)) bool HasRoomFor(uint64_t records) {
    if (write_index_ + records - cached_consumed_ <= uint64_t{mask_} + 1) return true;
    cached_consumed_ = consumed_.load(std::memory_order_acquire);
    return write_index_ + records - cached_consumed_ <= uint64_t{mask_} + 1;
  }

  void Publish(uint64_t index) {
    write_index_ = index;
    published_.store(index, std::memory_order_release);
  }

  // Producer's fields first: they share a cache line with the owner's other hot state.
  const std::unique_ptr<Event[]> slots_;
  const uint32_t mask_;
  uint64_t write_index_ = 0;
  uint64_t cached_consumed_ = 0;
  std::atomic<uint64_t> published_{0};
  // Consumer's cache line.
  alignas(64) std::atomic<uint64_t> consumed_{0};
};

}  // namespace tfprof
