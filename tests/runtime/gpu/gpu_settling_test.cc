// GpuSettling: when the GPU side of a stretch of time is complete, so a step's output can wait
// for kernels that run after the step ended, but never forever.
#include "runtime/gpu/gpu_settling.h"

#include <doctest/doctest.h>

#include <cstdint>

#include "runtime/collector/clock.h"
#include "runtime/gpu/gpu_trace.h"

namespace {

using tfprof::GpuActivity;
using tfprof::GpuApiCall;
using tfprof::GpuSettling;
using tfprof::GpuTrace;

// With the monotonic source one tick is one nanosecond, so expected times are easy to state.
int64_t Ns(const tfprof::TickConverter &converter, uint64_t ticks) { return converter.ToNs(ticks); }

void AddLaunch(GpuTrace &trace, uint32_t correlation, uint64_t start, bool launches = true) {
  GpuApiCall call;
  call.correlation = correlation;
  call.start_ticks = start;
  call.end_ticks = start + 10;
  call.launches_work = launches;
  trace.api_calls.Append(call);
}

void AddWork(GpuTrace &trace, uint32_t correlation, uint64_t start) {
  GpuActivity activity;
  activity.correlation = correlation;
  activity.start_ticks = start;
  activity.end_ticks = start + 100;
  trace.activities.Append(activity);
}

// What every case starts from: a clock, its "now" to place records after, an empty trace.
struct Settling {
  const tfprof::TickConverter converter =
      tfprof::TickConverter::Start(tfprof::ClockSource::kMonotonic);
  const uint64_t base = static_cast<uint64_t>(tfprof::MonotonicNowNs());
  GpuTrace trace;
  GpuSettling settling;
};

TEST_CASE_FIXTURE(Settling,
                  "a launch still waiting for its kernel holds completeness at its start") {
  AddLaunch(trace, 1, base + 1000);
  AddLaunch(trace, 2, base + 2000);
  AddLaunch(trace, 3, base + 2500, /*launches=*/false);  // cudaStreamSynchronize: no work follows
  AddWork(trace, 1, base + 5000);
  settling.Advance(trace, converter);
  CHECK(settling.waiting() == 1);
  const int64_t flushed = Ns(converter, base + 9000);
  const int64_t now = Ns(converter, base + 9500);
  CHECK(settling.CompleteThroughNs(flushed, now, 1000000) == Ns(converter, base + 2000));

  AddWork(trace, 2, base + 6000);  // the late kernel arrives
  settling.Advance(trace, converter);
  CHECK(settling.waiting() == 0);
  // Nothing waits: complete up to the last forced flush.
  CHECK(settling.CompleteThroughNs(flushed, now, 1000000) == flushed);
}

TEST_CASE_FIXTURE(Settling,
                  "work delivered before its launch call settles the call when it arrives") {
  AddWork(trace, 7, base + 3000);
  settling.Advance(trace, converter);
  AddLaunch(trace, 7, base + 1000);
  settling.Advance(trace, converter);
  CHECK(settling.waiting() == 0);
}

TEST_CASE_FIXTURE(Settling,
                  "a graph launch is settled by its first kernel - the others change nothing") {
  AddLaunch(trace, 9, base + 1000);
  AddWork(trace, 9, base + 2000);
  settling.Advance(trace, converter);
  CHECK(settling.waiting() == 0);
  AddWork(trace, 9, base + 2100);
  AddWork(trace, 9, base + 2200);
  settling.Advance(trace, converter);
  CHECK(settling.waiting() == 0);
}

TEST_CASE_FIXTURE(Settling,
                  "a launch whose work never comes stops holding steps back after the wait limit") {
  AddLaunch(trace, 4, base + 1000);
  settling.Advance(trace, converter);
  const int64_t flushed = Ns(converter, base + 50000);
  const int64_t wait = 10000;
  CHECK(settling.CompleteThroughNs(flushed, Ns(converter, base + 5000), wait) ==
        Ns(converter, base + 1000));
  CHECK(settling.CompleteThroughNs(flushed, Ns(converter, base + 20000), wait) == flushed);
  CHECK(settling.waiting() == 0);
}

}  // namespace
