// One host clock for every timestamp tfprof records.
//
// The hot path reads raw ticks (the TSC, or CLOCK_MONOTONIC nanoseconds as a fallback); ticks are
// turned into CLOCK_MONOTONIC nanoseconds off the hot path with a calibration taken at session
// start and refined at every drain, so long sessions convert more precisely, not less.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace tfprof {

enum class ClockSource : uint8_t { kTsc, kMonotonic };

// Reads CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall on common kernels).
int64_t MonotonicNowNs();
// Reads CLOCK_REALTIME in nanoseconds since the Unix epoch.
int64_t WallNowNs();

// Whether the TSC is a trustworthy clock here: the CPU says it is invariant, or the kernel
// chose it as its own clocksource.
bool TscIsReliable();

// Parses "auto", "tsc" or "monotonic"; "auto" resolves to kTsc where TscIsReliable().
// Returns false for any other text.
bool ResolveClockSource(std::string_view text, ClockSource *out);

std::string_view ClockSourceName(ClockSource source);

// The process-wide source that ReadTicks() uses; set by a session before it enables recording.
extern std::atomic<ClockSource> g_clock_source;

inline uint64_t ReadTicksFrom(ClockSource source) {
#if defined(__x86_64__) || defined(__i386__)
  if (source == ClockSource::kTsc) return __rdtsc();
#endif
  return static_cast<uint64_t>(MonotonicNowNs());
}

inline uint64_t ReadTicks() { return ReadTicksFrom(g_clock_source.load(std::memory_order_relaxed)); }

// The span fast path's clock read: ReadTicks() without looking up the source, for when
// FastTicksMatchClock() said they agree (the recorder checks it once per state change).
inline uint64_t FastTicks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(MonotonicNowNs());
#endif
}

inline bool FastTicksMatchClock() {
#if defined(__x86_64__) || defined(__i386__)
  return g_clock_source.load(std::memory_order_relaxed) == ClockSource::kTsc;
#else
  return true;
#endif
}

// Maps ticks to CLOCK_MONOTONIC nanoseconds through two anchor points (ticks, ns) read at the
// same instants. Cheap to copy; immutable once made.
class TickConverter {
 public:
  // Anchors the conversion at the current instant. The slope starts at 1 ns per tick for the
  // monotonic source, or at a short measured estimate for the TSC, until Refine() is called.
  static TickConverter Start(ClockSource source);

  // Returns a converter whose slope is measured between the start anchor and now.
  TickConverter Refined() const;

  int64_t ToNs(uint64_t ticks) const {
    const double delta = static_cast<double>(static_cast<int64_t>(ticks - start_ticks_));
    return start_ns_ + static_cast<int64_t>(delta * ns_per_tick_);
  }

  // The inverse of ToNs(): the tick count that converts to `ns`.
  uint64_t ToTicks(int64_t ns) const {
    return start_ticks_ + static_cast<uint64_t>(static_cast<int64_t>(
                              static_cast<double>(ns - start_ns_) / ns_per_tick_));
  }

  double ns_per_tick() const { return ns_per_tick_; }
  int64_t start_ns() const { return start_ns_; }

 private:
  ClockSource source_ = ClockSource::kMonotonic;
  uint64_t start_ticks_ = 0;
  int64_t start_ns_ = 0;
  double ns_per_tick_ = 1.0;
};

// Reads (ticks, monotonic ns) as close together as possible: the pair whose monotonic read took
// the least time out of a few tries.
void ReadAnchor(ClockSource source, uint64_t *ticks, int64_t *ns);

}  // namespace tfprof
