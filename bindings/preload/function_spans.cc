// Spans for programs built with -finstrument-functions: the compiler calls these two hooks at
// every function's entry and exit. Each function's name is looked up once (Symbolizer) and kept
// in a lock-free table keyed by address, so after a function's first call its spans cost a hash
// probe more than prof_span_begin/end.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>

#include "bindings/preload/preload_session.h"
#include "bindings/preload/symbolizer.h"
#include "tfprof/tfprof.h"

namespace tfprof::preload {
namespace {

constexpr size_t kSlots = 1 << 16;  // functions named; more fall back to one shared name
constexpr char kTooManyFunctions[] = "(function: name table full)";

struct Slot {
  std::atomic<const void *> function{nullptr};
  std::atomic<const char *> name{nullptr};
};
Slot g_slots[kSlots];
std::mutex g_insert_mutex;  // taken only the first time a function is seen

size_t SlotOf(const void *function) {
  const uintptr_t bits = reinterpret_cast<uintptr_t>(function);
  return static_cast<size_t>((bits >> 4) ^ (bits >> 20)) & (kSlots - 1);
}

__attribute__((noinline, cold)) const char *NameFirstSeen(const void *function) {
  try {
    std::lock_guard<std::mutex> lock(g_insert_mutex);
    static Symbolizer *symbolizer = new Symbolizer();
    for (size_t probe = 0, slot = SlotOf(function); probe < kSlots;
         ++probe, slot = (slot + 1) & (kSlots - 1)) {
      const void *held = g_slots[slot].function.load(std::memory_order_acquire);
      if (held == function) return g_slots[slot].name.load(std::memory_order_acquire);
      if (held != nullptr) continue;
      const char *name = strdup(symbolizer->NameOf(function).c_str());
      if (name == nullptr) return kTooManyFunctions;
      // The name first, so a reader that sees the key also sees its name.
      g_slots[slot].name.store(name, std::memory_order_release);
      g_slots[slot].function.store(function, std::memory_order_release);
      return name;
    }
  } catch (const std::exception &error) {
    DisableAfterFailure(error.what());
  }
  return kTooManyFunctions;
}

inline const char *NameOf(const void *function) {
  for (size_t probe = 0, slot = SlotOf(function); probe < 8; ++probe, slot = (slot + 1) & (kSlots - 1)) {
    const void *held = g_slots[slot].function.load(std::memory_order_acquire);
    if (held == function) return g_slots[slot].name.load(std::memory_order_relaxed);
    if (held == nullptr) break;
  }
  return NameFirstSeen(function);
}

}  // namespace
}  // namespace tfprof::preload

extern "C" {

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(
    void *function, void * /*call_site*/) {
  if (prof_session_active == 0 || !tfprof::preload::HooksEnabled()) return;
  prof_span_begin(tfprof::preload::NameOf(function));
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(
    void * /*function*/, void * /*call_site*/) {
  if (prof_session_active == 0 || !tfprof::preload::HooksEnabled()) return;
  prof_span_end();
}

}  // extern "C"
