#include "runtime/collector/clock.h"

#include <time.h>

#include <cstdio>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tfprof {

std::atomic<ClockSource> g_clock_source{ClockSource::kMonotonic};

int64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t WallNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {

bool CpuSaysTscInvariant() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, eax, ebx, ecx, edx);
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

bool KernelUsesTsc() {
  FILE *file = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (file == nullptr) return false;
  char name[64] = {};
  const bool read = std::fgets(name, sizeof(name), file) != nullptr;
  std::fclose(file);
  return read && std::strncmp(name, "tsc", 3) == 0;
}

}  // namespace

bool TscIsReliable() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool reliable = CpuSaysTscInvariant() || KernelUsesTsc();
  return reliable;
#else
  return false;
#endif
}

bool ResolveClockSource(std::string_view text, ClockSource *out) {
  if (text == "auto") {
    *out = TscIsReliable() ? ClockSource::kTsc : ClockSource::kMonotonic;
    return true;
  }
  if (text == "tsc") {
#if defined(__x86_64__) || defined(__i386__)
    *out = ClockSource::kTsc;
    return true;
#else
    return false;
#endif
  }
  if (text == "monotonic") {
    *out = ClockSource::kMonotonic;
    return true;
  }
  return false;
}

std::string_view ClockSourceName(ClockSource source) {
  return source == ClockSource::kTsc ? "tsc" : "monotonic";
}

void ReadAnchor(ClockSource source, uint64_t *ticks, int64_t *ns) {
  if (source == ClockSource::kMonotonic) {
    *ns = MonotonicNowNs();
    *ticks = static_cast<uint64_t>(*ns);
    return;
  }
  // Bracket the monotonic read between two tick reads and keep the tightest bracket, so a
  // preemption in the middle of one try does not skew the anchor.
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const uint64_t before = ReadTicksFrom(source);
    const int64_t now = MonotonicNowNs();
    const uint64_t after = ReadTicksFrom(source);
    if (after - before < best_width) {
      best_width = after - before;
      *ticks = before + (after - before) / 2;
      *ns = now;
    }
  }
}

TickConverter TickConverter::Start(ClockSource source) {
  TickConverter converter;
  converter.source_ = source;
  ReadAnchor(source, &converter.start_ticks_, &converter.start_ns_);
  if (source == ClockSource::kTsc) {
    // A first slope from a 2 ms window; every Refined() call measures over a longer one.
    const int64_t until = converter.start_ns_ + 2000000;
    while (MonotonicNowNs() < until) {
    }
    converter.ns_per_tick_ = converter.Refined().ns_per_tick_;
  }
  return converter;
}

TickConverter TickConverter::Refined() const {
  if (source_ == ClockSource::kMonotonic) return *this;
  uint64_t ticks = 0;
  int64_t ns = 0;
  ReadAnchor(source_, &ticks, &ns);
  TickConverter refined = *this;
  if (ticks > start_ticks_ && ns > start_ns_) {
    refined.ns_per_tick_ =
        static_cast<double>(ns - start_ns_) / static_cast<double>(ticks - start_ticks_);
  }
  return refined;
}

}  // namespace tfprof
