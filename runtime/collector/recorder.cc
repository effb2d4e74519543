#include "runtime/collector/recorder.h"

#include <time.h>

#include "runtime/gpu/gpu_trace.h"
#include "runtime/gpu/gpu_tracer.h"
#include "runtime/collector/range_end_overflow.h"
#include "runtime/collector/thread_registry.h"

namespace tfprof {

std::atomic<uint64_t> g_session_word{0};
std::atomic<uint64_t> g_events_without_buffer{0};
std::atomic<uint32_t> g_full_ring_wait_ms{0};

bool WaitForRingRoom(uint32_t wait_ms, bool (*ring_has_room)(void *), void *ring) {
  // The collector empties every ring each flush interval: polling every 50 us finds the room
  // soon after, with no lock shared with it (this may run in a signal handler).
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t deadline_ns = now.tv_sec * 1000000000LL + now.tv_nsec + int64_t{wait_ms} * 1000000;
  for (;;) {
    const timespec pause{0, 50000};
    nanosleep(&pause, nullptr);
    if (ring_has_room(ring)) return true;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec * 1000000000LL + now.tv_nsec >= deadline_ns) return false;
  }
}

__thread CurrentThread t_current __attribute__((tls_model("initial-exec"))) = {kNoFastKey, nullptr};

ThreadBuffer *AttachCurrentThread(uint64_t word) {
  ThreadBuffer *buffer = ThreadRegistry::Get().AttachCurrentThread(word, t_current.buffer);
  t_current.buffer = buffer;
  if (buffer != nullptr) {
    UpdateFastKey(buffer);
  } else {
    t_current.fast_key = kNoFastKey;
    // The caller drops the event it was recording: counted, and tried again with the next one.
    g_events_without_buffer.fetch_add(1, std::memory_order_relaxed);
  }
  return buffer;
}

void PushRangeEndElsewhere(ThreadBuffer *buffer, uint64_t ticks, uint64_t range_id) {
  if (!PushOverflowRangeEnd(OverflowRangeEnd{buffer->generation, ticks, range_id, buffer->os_tid})) {
    BumpSingleWriter(buffer->dropped);
  }
}

bool PushInlineName(ThreadBuffer *buffer, EventKind kind, const char *name, uint64_t arg,
                    bool reserving) {
  if (name[0] == '\0') name = kUnnamed;
  const uint32_t length = static_cast<uint32_t>(std::strlen(name));
  const bool pushed = buffer->ring.TryPushWithBytes(
      Event{ReadTicks(), arg, length, WithInlineName(kind), 0}, name, length, reserving);
  if (!pushed) BumpSingleWriter(buffer->dropped);
  return pushed;
}

void ForgetCurrentThreadBuffer() {
  t_current.fast_key = kNoFastKey;
  t_current.buffer = nullptr;
}

uint64_t PushSpanCorrelation(ThreadBuffer *buffer) {
  const uint64_t external_id = SpanExternalId(buffer->gpu_thread_serial, ++buffer->gpu_span_serial);
  PushGpuCorrelation(external_id);
  return external_id;
}

void PopSpanCorrelation() { PopGpuCorrelation(); }

void SetCurrentThreadName(uint64_t word, const char *name) {
  // Naming a thread before its first event still counts: attach it now.
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(buffer->name_mutex);
  buffer->explicit_name = name == nullptr ? "" : name;
}

}  // namespace tfprof
