// The hot path: what prof_span_begin() and friends do on the calling thread.
//
// One relaxed load of the session word decides everything when no session runs. With a session
// running, a call reads the thread's buffer pointer from initial-exec TLS, looks the name up in
// the thread's cache, reads the clock once and writes one record into the thread's ring. These
// are inline so that the C entry points compile to one function each.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "runtime/collector/clock.h"
#include "runtime/collector/event.h"
#include "runtime/collector/thread_buffer.h"

namespace tfprof {

// Bit 0: a session is running. Bits 1..63: the session's generation (incremented per start).
// Hidden, as it is defined: the hot path then reads it with one PC-relative load, not through
// the GOT.
extern std::atomic<uint64_t> g_session_word __attribute__((visibility("hidden")));

inline bool SessionRunning(uint64_t word) { return (word & 1) != 0; }

// The fast path's key: equal to the session word exactly when the thread's buffer belongs to the
// running session and a span may take the fast path (SpanBeginFast/SpanEndFast): no open span was
// dropped, the GPU is not traced (no CUPTI correlation to push) and the clock is the TSC. Any
// other state holds kNoFastKey (odd like a running word, but never one), so one compare with the
// session word replaces the checks of the running bit, the buffer, its generation and the rest.
inline constexpr uint64_t kNoFastKey = ~uint64_t{0};

// The calling thread's recording state. initial-exec: %fs-relative loads, no __tls_get_addr
// call, even when libtfprof.so is dlopen()ed (16 bytes fit glibc's static TLS reserve); one
// struct so that both fields come from one TLS offset.
struct CurrentThread {
  uint64_t fast_key;
  ThreadBuffer *buffer;
};
extern __thread CurrentThread t_current __attribute__((tls_model("initial-exec")));

// Events whose thread could get no buffer (out of memory), over the process's life: each
// session counts what it adds among its memory-dropped records.
extern std::atomic<uint64_t> g_events_without_buffer;

// Slow path, once per thread per session: attaches a fresh buffer (null if out of memory).
__attribute__((cold)) ThreadBuffer *AttachCurrentThread(uint64_t word);

// Called by the thread-exit hook after it retired the calling thread's buffer.
void ForgetCurrentThreadBuffer();

// prof_set_thread_name(): not a hot-path call (it takes the buffer's name lock).
void SetCurrentThreadName(uint64_t word, const char *name);

inline ThreadBuffer *BufferFor(uint64_t word) {
  ThreadBuffer *buffer = t_current.buffer;
  if (__builtin_expect(buffer != nullptr && buffer->generation == word, 1)) return buffer;
  return AttachCurrentThread(word);
}

// Sets t_current.fast_key from `buffer`'s state; called wherever that state may change.
inline void UpdateFastKey(const ThreadBuffer *buffer) {
  t_current.fast_key = buffer->gpu_thread_serial == 0 && !buffer->spans.InsideDroppedSpan() &&
                       FastTicksMatchClock()
                   ? buffer->generation
                   : kNoFastKey;
}

// Writes a record whose name's bytes follow it in the ring: for when the thread's name table is
// full. Returns whether it reached the ring.
__attribute__((cold)) bool PushInlineName(ThreadBuffer *buffer, EventKind kind, const char *name,
                                          uint64_t arg, bool reserving);

// Writes one named record; returns whether it reached the ring. The timestamp is taken after the
// name lookup so that a span's begin excludes tfprof's own work. A NULL name is recorded as
// "(unnamed)" (and so is "", see ThreadNameCache). `reserving`: the record opens a span or step
// whose end's slot it reserves (EventRing::TryPushReserving).
inline bool PushNamed(ThreadBuffer *buffer, EventKind kind, const char *name, uint64_t arg,
                      bool reserving) {
  if (__builtin_expect(name == nullptr, 0)) name = kUnnamed;
  const uint32_t id = buffer->names.LookupCString(name);
  if (__builtin_expect(id == ThreadNameCache::kNotFound, 0)) {
    return PushInlineName(buffer, kind, name, arg, reserving);
  }
  const Event event{ReadTicks(), arg, id, kind, 0};
  const bool pushed =
      reserving ? buffer->ring.TryPushReserving(event) : buffer->ring.TryPush(event);
  if (!pushed) BumpSingleWriter(buffer->dropped);
  return pushed;
}

// ---- spans: the fast path ------------------------------------------------------------------
// Taken when t_current.fast_key equals the session word: then t_current.buffer is this session's
// buffer and no other check is needed. A begin whose name is not in the pointer cache, or that
// finds no room without looking at the consumer, returns false and the caller takes the general
// path (RecordSpanBegin), which handles both; so does an end with no open span. Neither calls
// anything, so they compile to leaf code without a stack frame.

// The fast begin's outcome. kLongName: the name's first words matched its cached copy and `*id`
// is its id if the rest matches too (SpanBeginLongName, out of line so that this path needs no
// stack frame).
enum class FastBegin { kDone, kLongName, kNo };

// A recorded begin, its room already checked: `name` is the thread's name id, or a registered
// name's id with `kind` WithRegisteredName(kSpanBegin).
inline void WriteSpanBegin(ThreadBuffer *buffer, uint32_t name,
                           EventKind kind = EventKind::kSpanBegin) {
  buffer->ring.PushReservingInRoom(FastTicks(), name, kind);
  buffer->spans.OpenRecorded();
}

inline FastBegin SpanBeginFast(ThreadBuffer *buffer, const char *name, uint32_t *id) {
  const ThreadNameCache::PointerMatch match = buffer->names.MatchCachedPointer(name, id);
  if (__builtin_expect(match == ThreadNameCache::PointerMatch::kNo, 0)) return FastBegin::kNo;
  if (__builtin_expect(!buffer->ring.HasRoomToReserve(), 0)) return FastBegin::kNo;
  if (__builtin_expect(match == ThreadNameCache::PointerMatch::kCheckTail, 0)) {
    return FastBegin::kLongName;
  }
  WriteSpanBegin(buffer, *id);
  return FastBegin::kDone;
}

// After kLongName (room checked): records the span if the rest of the name matches; false if not
// (the caller then takes the general path).
inline bool SpanBeginLongName(ThreadBuffer *buffer, const char *name, uint32_t id) {
  if (!buffer->names.TailMatches(name)) return false;
  WriteSpanBegin(buffer, id);
  return true;
}

// prof_span_begin_id(): a registered name's id needs no lookup at all.
inline bool SpanBeginIdFast(ThreadBuffer *buffer, uint32_t registered_id) {
  if (__builtin_expect(!buffer->ring.HasRoomToReserve(), 0)) return false;
  WriteSpanBegin(buffer, registered_id, WithRegisteredName(EventKind::kSpanBegin));
  return true;
}

inline bool SpanEndFast(ThreadBuffer *buffer) {
  const uint64_t ticks = FastTicks();  // first, so the span excludes tfprof's own work
  if (__builtin_expect(!buffer->spans.TryCloseRecorded(), 0)) return false;
  buffer->ring.PushReserved(Event{ticks, 0, 0, EventKind::kSpanEnd, 0});
  return true;
}

// ---- the general path ------------------------------------------------------------------------

// GPU tracing: the span's external id, pushed to CUPTI so the GPU work launched inside the span
// names it. Every begin pushes (dropped spans too) and every matched end pops, keeping CUPTI's
// per-thread stack in step with the span stack.
__attribute__((cold, noinline)) uint64_t PushSpanCorrelation(ThreadBuffer *buffer);
__attribute__((cold, noinline)) void PopSpanCorrelation();

// A span begin, whatever names it: `push(buffer, external_id)` writes the begin record
// (reserving its end's slot) and returns whether it reached the ring.
template <typename PushBegin>
inline void RecordSpanBeginWith(uint64_t word, PushBegin push) {
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  const uint64_t external_id = __builtin_expect(buffer->gpu_thread_serial != 0, 0)
                                   ? PushSpanCorrelation(buffer)
                                   : 0;
  if (__builtin_expect(buffer->spans.InsideDroppedSpan(), 0)) {
    BumpSingleWriter(buffer->dropped);
    buffer->spans.Open(false);
    return;
  }
  buffer->spans.Open(push(buffer, external_id));
  UpdateFastKey(buffer);
}

inline void RecordSpanBegin(uint64_t word, const char *name) {
  RecordSpanBeginWith(word, [name](ThreadBuffer *buffer, uint64_t external_id) {
    return PushNamed(buffer, EventKind::kSpanBegin, name, external_id, true);
  });
}

inline void RecordSpanBeginId(uint64_t word, uint32_t registered_id) {
  RecordSpanBeginWith(word, [registered_id](ThreadBuffer *buffer, uint64_t external_id) {
    const bool pushed = buffer->ring.TryPushReserving(Event{
        ReadTicks(), external_id, registered_id, WithRegisteredName(EventKind::kSpanBegin), 0});
    if (!pushed) BumpSingleWriter(buffer->dropped);
    return pushed;
  });
}

inline void RecordSpanEnd(uint64_t word) {
  const uint64_t ticks = ReadTicks();  // first, so the span excludes tfprof's own work
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  if (buffer->spans.depth() == 0) {
    BumpSingleWriter(buffer->unmatched_span_ends);
    return;
  }
  if (__builtin_expect(buffer->gpu_thread_serial != 0, 0)) PopSpanCorrelation();
  if (buffer->spans.Close()) {
    buffer->ring.PushReserved(Event{ticks, 0, 0, EventKind::kSpanEnd, 0});
  } else {
    BumpSingleWriter(buffer->dropped);  // its begin (or an enclosing one) was dropped
  }
  UpdateFastKey(buffer);
}

inline void RecordInstant(uint64_t word, const char *name) {
  if (ThreadBuffer *buffer = BufferFor(word)) {
    PushNamed(buffer, EventKind::kInstant, name, 0, false);
  }
}

inline void RecordCounter(uint64_t word, const char *name, double value) {
  if (ThreadBuffer *buffer = BufferFor(word)) {
    PushNamed(buffer, EventKind::kCounter, name, DoubleBits(value), false);
  }
}

// Ranges need no reserved end slot: their end may come on any thread, and a range whose end
// was dropped is shown as incomplete.
inline void RecordRangeStart(uint64_t word, const char *name, uint64_t range_id) {
  if (ThreadBuffer *buffer = BufferFor(word)) {
    PushNamed(buffer, EventKind::kRangeStart, name, range_id, false);
  }
}

// A range end that finds the ring full goes to the shared overflow queue (range_end_overflow.h):
// its start, on whichever thread, is kept and must not lose it.
__attribute__((cold, noinline)) void PushRangeEndElsewhere(ThreadBuffer *buffer, uint64_t ticks,
                                                           uint64_t range_id);

inline void RecordRangeEnd(uint64_t word, uint64_t range_id) {
  const uint64_t ticks = ReadTicks();
  if (ThreadBuffer *buffer = BufferFor(word)) {
    if (!buffer->ring.TryPush(Event{ticks, range_id, 0, EventKind::kRangeEnd, 0})) {
      PushRangeEndElsewhere(buffer, ticks, range_id);
    }
  }
}

inline void RecordStepBegin(uint64_t word, int64_t step) {
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  // A begin while a step is open implicitly ends it: exporters close a step at the next step
  // begin of the same thread, so no separate end record is written and the open step's reserved
  // slot passes to this one.
  const Event event{ReadTicks(), static_cast<uint64_t>(step), 0, EventKind::kStepBegin, 0};
  bool recorded;
  if (buffer->step_end_reserved) {
    recorded = buffer->ring.TryPush(event);
    if (!recorded) buffer->ring.CancelReservation();
  } else {
    recorded = buffer->ring.TryPushReserving(event);
  }
  if (!recorded) BumpSingleWriter(buffer->dropped);
  buffer->step_open = true;
  buffer->step_end_reserved = recorded;
}

inline void RecordStepEnd(uint64_t word, StepEndKind kind = StepEndKind::kEnded) {
  const uint64_t ticks = ReadTicks();
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  if (!buffer->step_open) {
    BumpSingleWriter(buffer->unmatched_step_ends);
    return;
  }
  buffer->step_open = false;
  if (buffer->step_end_reserved) {
    buffer->step_end_reserved = false;
    buffer->ring.PushReserved(Event{ticks, static_cast<uint64_t>(kind), 0, EventKind::kStepEnd, 0});
  } else {
    BumpSingleWriter(buffer->dropped);  // its begin was dropped
  }
}

}  // namespace tfprof
