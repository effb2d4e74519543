// The fixed-size record that hot-path calls write into a thread's ring.
#pragma once

#include <cstdint>
#include <cstring>

namespace tfprof {

enum class EventKind : uint16_t {
  kSpanBegin = 1,
  kSpanEnd = 2,
  kInstant = 3,
  kCounter = 4,
  kStepBegin = 5,
  kStepEnd = 6,
  // A range that may end on another thread (prof_range_start/end): `arg` holds the range's id,
  // and only the start carries a name.
  kRangeStart = 7,
  kRangeEnd = 8,
  // The name's bytes follow in the next `name_slots` records instead of a name id: used only
  // when the thread's name table is full (see ThreadNameCache).
  kInlineNameFlag = 0x100,
  // `name` is a registered name's id (prof_register_name, RegisteredNames), not the thread's.
  kRegisteredNameFlag = 0x200,
};

inline EventKind BaseKind(EventKind kind) {
  return static_cast<EventKind>(static_cast<uint16_t>(kind) & 0xff);
}
inline bool HasInlineName(EventKind kind) {
  return (static_cast<uint16_t>(kind) & static_cast<uint16_t>(EventKind::kInlineNameFlag)) != 0;
}
inline bool HasRegisteredName(EventKind kind) {
  return (static_cast<uint16_t>(kind) & static_cast<uint16_t>(EventKind::kRegisteredNameFlag)) != 0;
}
inline constexpr EventKind WithRegisteredName(EventKind kind) {
  return static_cast<EventKind>(static_cast<uint16_t>(kind) |
                                static_cast<uint16_t>(EventKind::kRegisteredNameFlag));
}
inline EventKind WithInlineName(EventKind kind) {
  return static_cast<EventKind>(static_cast<uint16_t>(kind) |
                                static_cast<uint16_t>(EventKind::kInlineNameFlag));
}

// A kStepEnd's `arg`: whether the step happened (prof_end_step) or is withdrawn (prof_cancel_step:
// not a step, its events stay outside steps).
enum class StepEndKind : uint64_t { kEnded = 0, kCancelled = 1 };

// 24 bytes. `name` is a thread-local name id while the record sits in a ring (or a registered
// name's id, kRegisteredNameFlag), and a global one (NameTable) once drained. For inline names
// `name` holds the name's length in bytes.
struct Event {
  uint64_t ticks;
  uint64_t arg;  // step number (int64), counter value (double bits) or range id
  uint32_t name;
  EventKind kind;
  uint16_t reserved;
};
static_assert(sizeof(Event) == 24, "Event must stay 24 bytes");

inline bool IsCancelledStepEnd(const Event &event) {
  return event.arg == static_cast<uint64_t>(StepEndKind::kCancelled);
}

inline uint64_t DoubleBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
inline double BitsToDouble(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// How many records an inline name of `length` bytes occupies after its header record.
inline uint32_t InlineNameSlots(uint32_t length) {
  return (length + uint32_t{sizeof(Event)} - 1) / uint32_t{sizeof(Event)};
}

}  // namespace tfprof
