// WalkTrack's step pairing: how one thread's step marks become closed or incomplete steps.
#include "runtime/session/track_walker.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/collector/event.h"
#include "runtime/session/session_log.h"

namespace {

using tfprof::ClockSource;
using tfprof::Event;
using tfprof::EventKind;
using tfprof::TickConverter;
using tfprof::SessionLog;

struct StepSeen {
  int64_t step = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  bool incomplete = false;
};

struct StepCollector : tfprof::TrackVisitor {
  std::vector<StepSeen> steps;
  void OnStep(int64_t step, int64_t begin_ns, int64_t end_ns, bool incomplete) {
    steps.push_back(StepSeen{step, begin_ns, end_ns, incomplete});
  }
};

// A monotonic converter maps ticks to the same nanoseconds. Events are placed at offsets from
// its anchor so the conversion is exact whatever the machine's uptime.
struct Fixture {
  TickConverter converter = TickConverter::Start(ClockSource::kMonotonic);
  int64_t base = converter.start_ns();
  SessionLog model;

  uint64_t Ticks(int64_t offset) const { return static_cast<uint64_t>(base + offset); }

  void StepBegin(size_t track, int64_t offset, int64_t step) {
    model.tracks[track].events.Append(
        Event{Ticks(offset), static_cast<uint64_t>(step), 0, EventKind::kStepBegin, 0});
  }
  void StepEnd(size_t track, int64_t offset) {
    model.tracks[track].events.Append(Event{Ticks(offset), 0, 0, EventKind::kStepEnd, 0});
  }
  void SpanBegin(size_t track, int64_t offset, uint32_t name) {
    model.tracks[track].events.Append(Event{Ticks(offset), 0, name, EventKind::kSpanBegin, 0});
  }
  void SpanEnd(size_t track, int64_t offset) {
    model.tracks[track].events.Append(Event{Ticks(offset), 0, 0, EventKind::kSpanEnd, 0});
  }

  // The steps of track 0, in the order the walk reports them.
  std::vector<StepSeen> Collect(int64_t end_offset) const {
    StepCollector collector;
    tfprof::WalkTrack(model.tracks[0], converter, base + end_offset, collector);
    return collector.steps;
  }
};

void CheckStep(const StepSeen &step, int64_t number, int64_t begin_ns, int64_t end_ns,
               bool incomplete) {
  CHECK(step.step == number);
  CHECK(step.begin_ns == begin_ns);
  CHECK(step.end_ns == end_ns);
  CHECK(step.incomplete == incomplete);
}

}  // namespace

TEST_CASE("track walker: a model without steps yields none") {
  Fixture f;
  f.model.AddTrack(100);
  f.SpanBegin(0, 10, 0);
  f.SpanEnd(0, 20);
  CHECK(f.Collect(1000).empty());
}

TEST_CASE("track walker: begin/end pairs become closed steps") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 1000, 1);
  f.SpanBegin(0, 1100, 0);
  f.SpanEnd(0, 1900);
  f.StepEnd(0, 2000);
  f.StepBegin(0, 2500, 2);
  f.StepEnd(0, 4000);
  const std::vector<StepSeen> steps = f.Collect(10000);
  REQUIRE(steps.size() == 2);
  CheckStep(steps[0], 1, f.base + 1000, f.base + 2000, false);
  CheckStep(steps[1], 2, f.base + 2500, f.base + 4000, false);
}

TEST_CASE("track walker: a step begin ends the open step implicitly") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 1000, 7);
  f.StepBegin(0, 3000, 8);
  f.StepBegin(0, 3500, 9);
  f.StepEnd(0, 5000);
  const std::vector<StepSeen> steps = f.Collect(10000);
  REQUIRE(steps.size() == 3);
  CheckStep(steps[0], 7, f.base + 1000, f.base + 3000, false);
  CheckStep(steps[1], 8, f.base + 3000, f.base + 3500, false);
  CheckStep(steps[2], 9, f.base + 3500, f.base + 5000, false);
}

TEST_CASE("track walker: a step still open at the end is incomplete and ends at end_ns") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 1000, 1);
  f.StepEnd(0, 2000);
  f.StepBegin(0, 3000, 2);
  const std::vector<StepSeen> steps = f.Collect(9000);
  REQUIRE(steps.size() == 2);
  CheckStep(steps[0], 1, f.base + 1000, f.base + 2000, false);
  CheckStep(steps[1], 2, f.base + 3000, f.base + 9000, true);
}

TEST_CASE("track walker: an open step never ends before it begins") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 5000, 3);
  const std::vector<StepSeen> steps = f.Collect(4000);  // end_ns earlier than the begin
  REQUIRE(steps.size() == 1);
  CheckStep(steps[0], 3, f.base + 5000, f.base + 5000, true);
}

TEST_CASE("track walker: an end without an open step is ignored") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepEnd(0, 500);
  f.StepBegin(0, 1000, 4);
  f.StepEnd(0, 2000);
  f.StepEnd(0, 2500);
  const std::vector<StepSeen> steps = f.Collect(9000);
  REQUIRE(steps.size() == 1);
  CheckStep(steps[0], 4, f.base + 1000, f.base + 2000, false);
}

TEST_CASE("track walker: step numbers keep their full int64 value") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 100, -5);
  f.StepBegin(0, 200, INT64_MAX);
  f.StepBegin(0, 300, 0);
  f.StepEnd(0, 400);
  const std::vector<StepSeen> steps = f.Collect(1000);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].step == -5);
  CHECK(steps[1].step == INT64_MAX);
  CHECK(steps[2].step == 0);
}
