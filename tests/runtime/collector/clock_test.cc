// The host clock: source selection, tick reading and conversion to CLOCK_MONOTONIC nanoseconds.
#include "runtime/collector/clock.h"

#include <doctest/doctest.h>

#include <time.h>

#include <cstdint>
#include <memory>
#include <string>

namespace {

using tfprof::ClockSource;
using tfprof::TickConverter;

// Restores the process-wide tick source when a test that changed it ends.
class ClockSourceGuard {
 public:
  explicit ClockSourceGuard(ClockSource source) : saved_(tfprof::g_clock_source.load()) {
    tfprof::g_clock_source.store(source);
  }
  ~ClockSourceGuard() { tfprof::g_clock_source.store(saved_); }
  ClockSourceGuard(const ClockSourceGuard &) = delete;
  ClockSourceGuard &operator=(const ClockSourceGuard &) = delete;

 private:
  ClockSource saved_;
};

constexpr int64_t kTolerance = 5000000;  // 5 ms: a correctness bound, not a speed limit

struct ConversionSample {
  bool monotonic = true;    // each converted reading >= the one before
  int64_t worst_error = 0;  // ns outside [monotonic clock before, after] the reading
};

// Converts fresh TSC readings with `converter`, each bracketed by two CLOCK_MONOTONIC reads,
// starting after `previous_ns`: at least `min_samples` readings over at least `min_duration_ns`.
ConversionSample SampleConversion(const TickConverter &converter, int64_t previous_ns,
                                  int min_samples, int64_t min_duration_ns) {
  ConversionSample sample;
  const int64_t until = tfprof::MonotonicNowNs() + min_duration_ns;
  for (int samples = 0; samples < min_samples || tfprof::MonotonicNowNs() < until; ++samples) {
    const int64_t reference_before = tfprof::MonotonicNowNs();
    const int64_t converted = converter.ToNs(tfprof::ReadTicks());
    const int64_t reference_after = tfprof::MonotonicNowNs();
    if (converted < previous_ns) sample.monotonic = false;
    previous_ns = converted;
    int64_t error = 0;
    if (converted < reference_before) error = reference_before - converted;
    if (converted > reference_after) error = converted - reference_after;
    if (error > sample.worst_error) sample.worst_error = error;
  }
  return sample;
}

// The TSC as the tick source for one test, with a converter started on it; null (and a message
// saying the test is skipped) on a machine whose TSC is not reliable.
struct TscClock {
  ClockSourceGuard guard{ClockSource::kTsc};
  const TickConverter converter = TickConverter::Start(ClockSource::kTsc);
};

std::unique_ptr<TscClock> StartTscClock() {
  if (!tfprof::TscIsReliable()) {
    MESSAGE("skipped: the TSC is not reliable on this machine");
    return nullptr;
  }
  return std::make_unique<TscClock>();
}

// A measured slope is that of a plausible TSC frequency (50 MHz to 20 GHz).
void CheckPlausibleTscSlope(const TickConverter &converter) {
  CHECK(converter.ns_per_tick() > 0.05);
  CHECK(converter.ns_per_tick() < 20.0);
}

}  // namespace

TEST_CASE("clock: ResolveClockSource parses the three names") {
  ClockSource source = ClockSource::kTsc;
  REQUIRE(tfprof::ResolveClockSource("monotonic", &source));
  CHECK(source == ClockSource::kMonotonic);

  source = ClockSource::kMonotonic;
  REQUIRE(tfprof::ResolveClockSource("auto", &source));
  CHECK(source == (tfprof::TscIsReliable() ? ClockSource::kTsc : ClockSource::kMonotonic));

#if defined(__x86_64__) || defined(__i386__)
  source = ClockSource::kMonotonic;
  REQUIRE(tfprof::ResolveClockSource("tsc", &source));
  CHECK(source == ClockSource::kTsc);
#else
  CHECK_FALSE(tfprof::ResolveClockSource("tsc", &source));
#endif
}

TEST_CASE("clock: ResolveClockSource rejects anything else and leaves the output alone") {
  for (const char *text : {"", "garbage", "Monotonic", "TSC", "auto ", " tsc", "monotonic\n",
                           "realtime"}) {
    CAPTURE(text);
    ClockSource source = ClockSource::kMonotonic;
    CHECK_FALSE(tfprof::ResolveClockSource(text, &source));
    CHECK(source == ClockSource::kMonotonic);
    source = ClockSource::kTsc;
    CHECK_FALSE(tfprof::ResolveClockSource(text, &source));
    CHECK(source == ClockSource::kTsc);
  }
}

TEST_CASE("clock: ClockSourceName") {
  CHECK(tfprof::ClockSourceName(ClockSource::kTsc) == "tsc");
  CHECK(tfprof::ClockSourceName(ClockSource::kMonotonic) == "monotonic");
}

namespace {

int64_t ReadClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Checks that `read()` falls between two calls of `reference()`, and returns what it read.
template <typename Reference, typename Read>
int64_t CheckReadBetween(Reference reference, Read read) {
  const int64_t before = reference();
  const int64_t value = read();
  const int64_t after = reference();
  CHECK(before <= value);
  CHECK(value <= after);
  return value;
}

}  // namespace

TEST_CASE("clock: MonotonicNowNs reads CLOCK_MONOTONIC") {
  CheckReadBetween([] { return ReadClockNs(CLOCK_MONOTONIC); }, tfprof::MonotonicNowNs);
}

TEST_CASE("clock: WallNowNs reads CLOCK_REALTIME") {
  const int64_t now =
      CheckReadBetween([] { return ReadClockNs(CLOCK_REALTIME); }, tfprof::WallNowNs);
  // Later than 2020-01-01, so it is epoch-based and in nanoseconds.
  CHECK(now > int64_t{1577836800} * 1000000000);
}

TEST_CASE("clock: the monotonic converter is the identity on nanoseconds") {
  const TickConverter converter = TickConverter::Start(ClockSource::kMonotonic);
  CHECK(converter.ns_per_tick() == 1.0);
  const int64_t start = converter.start_ns();
  CHECK(start > 0);
  for (int64_t offset : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1500}, int64_t{-1500},
                         int64_t{3600} * 1000000000}) {
    CAPTURE(offset);
    const uint64_t ticks = static_cast<uint64_t>(start + offset);
    CHECK(converter.ToNs(ticks) == start + offset);
  }
  // Small absolute values (tick counts used by hand-built traces) map to themselves too.
  for (uint64_t ticks : {uint64_t{0}, uint64_t{1}, uint64_t{1500}, uint64_t{123456789}}) {
    CAPTURE(ticks);
    CHECK(converter.ToNs(ticks) == static_cast<int64_t>(ticks));
  }
  // Refining a monotonic converter changes nothing.
  const TickConverter refined = converter.Refined();
  CHECK(refined.ns_per_tick() == 1.0);
  CHECK(refined.start_ns() == start);
  CHECK(refined.ToNs(12345) == 12345);
}

TEST_CASE("clock: ReadTicks on the monotonic source converts to the monotonic clock") {
  ClockSourceGuard guard(ClockSource::kMonotonic);
  const TickConverter converter = TickConverter::Start(ClockSource::kMonotonic);
  CheckReadBetween(tfprof::MonotonicNowNs, [&] { return converter.ToNs(tfprof::ReadTicks()); });
}

TEST_CASE("clock: ReadAnchor for the monotonic source pairs equal values") {
  uint64_t ticks = 0;
  int64_t ns = 0;
  tfprof::ReadAnchor(ClockSource::kMonotonic, &ticks, &ns);
  CHECK(ns > 0);
  CHECK(ticks == static_cast<uint64_t>(ns));
}

TEST_CASE("clock: TSC ticks convert to monotonic, non-decreasing nanoseconds") {
  const std::unique_ptr<TscClock> tsc = StartTscClock();
  if (tsc == nullptr) return;
  const TickConverter &converter = tsc->converter;
  // A first slope was measured.
  CheckPlausibleTscSlope(converter);

  // Sample for about 20 ms.
  const ConversionSample sample =
      SampleConversion(converter, converter.ToNs(tfprof::ReadTicks()), 1000, 20000000);
  CHECK(sample.monotonic);
  CHECK(sample.worst_error <= kTolerance);
}

TEST_CASE("clock: a refined TSC converter stays monotonic and close to the monotonic clock") {
  const std::unique_ptr<TscClock> tsc = StartTscClock();
  if (tsc == nullptr) return;
  const TickConverter &converter = tsc->converter;
  const uint64_t early_ticks = tfprof::ReadTicks();
  // Let some time pass so that the refined slope is measured over a longer window.
  const int64_t until = tfprof::MonotonicNowNs() + 10000000;
  while (tfprof::MonotonicNowNs() < until) {
  }
  const TickConverter refined = converter.Refined();
  CHECK(refined.start_ns() == converter.start_ns());
  CheckPlausibleTscSlope(refined);
  // Both slopes measure the same clock: they agree to well within 1%.
  CHECK(refined.ns_per_tick() == doctest::Approx(converter.ns_per_tick()).epsilon(0.01));

  // Older ticks convert to earlier times than newer ticks under the refined converter.
  const int64_t early = refined.ToNs(early_ticks);
  const ConversionSample sample = SampleConversion(refined, early, 10000, 0);
  CHECK(sample.monotonic);
  CHECK(early >= refined.start_ns());
  CHECK(sample.worst_error <= kTolerance);

  // Refining again keeps the anchor and yields a slope that agrees with the first refinement.
  const TickConverter twice = refined.Refined();
  CHECK(twice.start_ns() == converter.start_ns());
  CHECK(twice.ns_per_tick() == doctest::Approx(refined.ns_per_tick()).epsilon(0.01));
}
