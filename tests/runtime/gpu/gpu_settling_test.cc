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

// A clock, its "now" to place records after, an empty trace and its settling. With the
// monotonic source one tick is one nanosecond, so expected times are easy to state: records
// and times are given as nanoseconds after `base`.
struct Settling {
  const tfprof::TickConverter converter =
      tfprof::TickConverter::Start(tfprof::ClockSource::kMonotonic);
  const uint64_t base = static_cast<uint64_t>(tfprof::MonotonicNowNs());
  GpuTrace trace;
  GpuSettling settling;

  int64_t NsAt(uint64_t offset) const { return converter.ToNs(base + offset); }

  // A launch call (or, with `launches` false, a call that starts no work) lasting 10 ns.
  void Launch(uint32_t correlation, uint64_t offset, bool launches = true) {
    GpuApiCall call;
    call.correlation = correlation;
    call.start_ticks = base + offset;
    call.end_ticks = base + offset + 10;
    call.launches_work = launches;
    trace.api_calls.Append(call);
  }

  // The GPU work of a launch, lasting 100 ns.
  void Work(uint32_t correlation, uint64_t offset) {
    GpuActivity activity;
    activity.correlation = correlation;
    activity.start_ticks = base + offset;
    activity.end_ticks = base + offset + 100;
    trace.activities.Append(activity);
  }

  void Advance() { settling.Advance(trace, converter); }
};

TEST_CASE_FIXTURE(Settling,
                  "a launch still waiting for its kernel holds completeness at its start") {
  Launch(1, 1000);
  Launch(2, 2000);
  Launch(3, 2500, /*launches=*/false);  // cudaStreamSynchronize: no work follows
  Work(1, 5000);
  Advance();
  CHECK(settling.waiting() == 1);
  const int64_t flushed = NsAt(9000);
  const int64_t now = NsAt(9500);
  CHECK(settling.CompleteThroughNs(flushed, now, 1000000) == NsAt(2000));

  Work(2, 6000);  // the late kernel arrives
  Advance();
  CHECK(settling.waiting() == 0);
  // Nothing waits: complete up to the last forced flush.
  CHECK(settling.CompleteThroughNs(flushed, now, 1000000) == flushed);
}

TEST_CASE_FIXTURE(Settling,
                  "work delivered before its launch call settles the call when it arrives") {
  Work(7, 3000);
  Advance();
  Launch(7, 1000);
  Advance();
  CHECK(settling.waiting() == 0);
}

TEST_CASE_FIXTURE(Settling,
                  "a graph launch is settled by its first kernel - the others change nothing") {
  Launch(9, 1000);
  Work(9, 2000);
  Advance();
  CHECK(settling.waiting() == 0);
  Work(9, 2100);
  Work(9, 2200);
  Advance();
  CHECK(settling.waiting() == 0);
}

TEST_CASE_FIXTURE(Settling,
                  "a launch whose work never comes stops holding steps back after the wait limit") {
  Launch(4, 1000);
  Advance();
  const int64_t flushed = NsAt(50000);
  const int64_t wait = 10000;
  CHECK(settling.CompleteThroughNs(flushed, NsAt(5000), wait) == NsAt(1000));
  CHECK(settling.CompleteThroughNs(flushed, NsAt(20000), wait) == flushed);
  CHECK(settling.waiting() == 0);
}

}  // namespace
