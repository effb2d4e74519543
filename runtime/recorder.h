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

#include "runtime/clock.h"
#include "runtime/event.h"
#include "runtime/thread_buffer.h"

namespace tfprof {

// Bit 0: a session is running. Bits 1..63: the session's generation (incremented per start).
extern std::atomic<uint64_t> g_session_word;

inline bool SessionRunning(uint64_t word) { return (word & 1) != 0; }

// The calling thread's buffer. initial-exec: one %fs-relative load, no __tls_get_addr call, even
// when libtfprof.so is dlopen()ed (one pointer fits glibc's static TLS reserve).
extern __thread ThreadBuffer *t_buffer __attribute__((tls_model("initial-exec")));

// Slow path, once per thread per session: attaches a fresh buffer (null if out of memory).
__attribute__((cold)) ThreadBuffer *AttachCurrentThread(uint64_t word);

// Called by the thread-exit hook after it retired the calling thread's buffer.
void ForgetCurrentThreadBuffer();

// prof_set_thread_name(): not a hot-path call (it takes the buffer's name lock).
void SetCurrentThreadName(uint64_t word, const char *name);

inline ThreadBuffer *BufferFor(uint64_t word) {
  ThreadBuffer *buffer = t_buffer;
  if (__builtin_expect(buffer != nullptr && buffer->generation == word, 1)) return buffer;
  return AttachCurrentThread(word);
}


// Writes one named record; returns whether it reached the ring. The timestamp is taken after the
// name lookup so that a span's begin excludes tfprof's own work.
// Writes a record whose name's bytes follow it in the ring: for when the thread's name table is
// full. Returns whether it reached the ring.
__attribute__((cold)) bool PushInlineName(ThreadBuffer *buffer, EventKind kind, const char *name,
                                          uint64_t arg, uint32_t reserve);

// A NULL name is recorded as "(unnamed)" (and so is "", see ThreadNameCache).
// `reserve`: records that must stay free after this one (the ends of recorded open spans and
// steps, plus this record's own end if it opens a span).
inline bool PushNamed(ThreadBuffer *buffer, EventKind kind, const char *name, uint64_t arg,
                      uint32_t reserve) {
  if (__builtin_expect(name == nullptr, 0)) name = kUnnamed;
  const uint32_t id = buffer->names.LookupCString(name);
  if (__builtin_expect(id == ThreadNameCache::kNotFound, 0)) {
    return PushInlineName(buffer, kind, name, arg, reserve);
  }
  const bool pushed = buffer->ring.TryPush(Event{ReadTicks(), arg, id, kind, 0}, reserve);
  if (!pushed) BumpSingleWriter(buffer->dropped);
  return pushed;
}

// `reserve`: records that must stay free after this one (0 for ends, which use the reserve).
inline bool PushPlain(ThreadBuffer *buffer, EventKind kind, uint64_t ticks, uint64_t arg,
                      uint32_t reserve) {
  const bool pushed = buffer->ring.TryPush(Event{ticks, arg, 0, kind, 0}, reserve);
  if (!pushed) BumpSingleWriter(buffer->dropped);
  return pushed;
}

// GPU tracing: the span's external id, pushed to CUPTI so the GPU work launched inside the span
// names it. Every begin pushes (dropped spans too) and every matched end pops, keeping CUPTI's
// per-thread stack in step with the span stack.
__attribute__((cold, noinline)) uint64_t PushSpanCorrelation(ThreadBuffer *buffer);
__attribute__((cold, noinline)) void PopSpanCorrelation();

inline void RecordSpanBegin(uint64_t word, const char *name) {
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
  buffer->spans.Open(PushNamed(buffer, EventKind::kSpanBegin, name, external_id,
                               buffer->ReservedForEnds() + 1));
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
    PushPlain(buffer, EventKind::kSpanEnd, ticks, 0, 0);
  } else {
    BumpSingleWriter(buffer->dropped);  // its begin (or an enclosing one) was dropped
  }
}

inline void RecordInstant(uint64_t word, const char *name) {
  if (ThreadBuffer *buffer = BufferFor(word)) {
    PushNamed(buffer, EventKind::kInstant, name, 0, buffer->ReservedForEnds());
  }
}

inline void RecordCounter(uint64_t word, const char *name, double value) {
  if (ThreadBuffer *buffer = BufferFor(word)) {
    PushNamed(buffer, EventKind::kCounter, name, DoubleBits(value), buffer->ReservedForEnds());
  }
}

// Ranges need no reserved end slot: their end may come on any thread, and a range whose end
// was dropped is shown as incomplete.
inline void RecordRangeStart(uint64_t word, const char *name, uint64_t range_id) {
  if (ThreadBuffer *buffer = BufferFor(word)) {
    PushNamed(buffer, EventKind::kRangeStart, name, range_id, buffer->ReservedForEnds());
  }
}

// A range end that finds the ring full goes to the shared overflow queue (range_end_overflow.h):
// its start, on whichever thread, is kept and must not lose it.
__attribute__((cold, noinline)) void PushRangeEndElsewhere(ThreadBuffer *buffer, uint64_t ticks,
                                                           uint64_t range_id);

inline void RecordRangeEnd(uint64_t word, uint64_t range_id) {
  const uint64_t ticks = ReadTicks();
  if (ThreadBuffer *buffer = BufferFor(word)) {
    if (!buffer->ring.TryPush(Event{ticks, range_id, 0, EventKind::kRangeEnd, 0},
                              buffer->ReservedForEnds())) {
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
  buffer->step_end_reserved = 0;
  const bool recorded = PushPlain(buffer, EventKind::kStepBegin, ReadTicks(),
                                  static_cast<uint64_t>(step), buffer->ReservedForEnds() + 1);
  buffer->step_open = true;
  buffer->step_end_reserved = recorded ? 1 : 0;
}

inline void RecordStepEnd(uint64_t word) {
  const uint64_t ticks = ReadTicks();
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  if (!buffer->step_open) {
    BumpSingleWriter(buffer->unmatched_step_ends);
    return;
  }
  buffer->step_open = false;
  if (buffer->step_end_reserved != 0) {
    buffer->step_end_reserved = 0;
    PushPlain(buffer, EventKind::kStepEnd, ticks, 0, buffer->ReservedForEnds());
  } else {
    BumpSingleWriter(buffer->dropped);  // its begin was dropped
  }
}

}  // namespace tfprof
