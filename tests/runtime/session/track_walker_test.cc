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
// its anchor so the conversion is exact whatever the machine's uptime. Every case walks one
// thread's track, track 0.
struct Fixture {
  Fixture() { model.AddTrack(100); }

  TickConverter converter = TickConverter::Start(ClockSource::kMonotonic);
  int64_t base = converter.start_ns();
  SessionLog model;

  uint64_t Ticks(int64_t offset) const { return static_cast<uint64_t>(base + offset); }

  void StepBegin(int64_t offset, int64_t step) {
    model.tracks[0].events.Append(
        Event{Ticks(offset), static_cast<uint64_t>(step), 0, EventKind::kStepBegin, 0});
  }
  void StepEnd(int64_t offset) {
    model.tracks[0].events.Append(Event{Ticks(offset), 0, 0, EventKind::kStepEnd, 0});
  }
  void SpanBegin(int64_t offset, uint32_t name) {
    model.tracks[0].events.Append(Event{Ticks(offset), 0, name, EventKind::kSpanBegin, 0});
  }
  void SpanEnd(int64_t offset) {
    model.tracks[0].events.Append(Event{Ticks(offset), 0, 0, EventKind::kSpanEnd, 0});
  }

  // The steps of track 0, in the order the walk reports them.
  std::vector<StepSeen> Collect(int64_t end_offset) const {
    StepCollector collector;
    tfprof::WalkTrack(model.tracks[0], converter, base + end_offset, collector);
    return collector.steps;
  }

  // The walk up to `end_offset` reports exactly `expected`, whose times are offsets from base.
  void CheckSteps(int64_t end_offset, const std::vector<StepSeen> &expected) const {
    const std::vector<StepSeen> steps = Collect(end_offset);
    REQUIRE(steps.size() == expected.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      CAPTURE(i);
      CHECK(steps[i].step == expected[i].step);
      CHECK(steps[i].begin_ns == base + expected[i].begin_ns);
      CHECK(steps[i].end_ns == base + expected[i].end_ns);
      CHECK(steps[i].incomplete == expected[i].incomplete);
    }
  }
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "track walker: a model without steps yields none") {
  SpanBegin(10, 0);
  SpanEnd(20);
  CHECK(Collect(1000).empty());
}

TEST_CASE_FIXTURE(Fixture, "track walker: begin/end pairs become closed steps") {
  StepBegin(1000, 1);
  SpanBegin(1100, 0);
  SpanEnd(1900);
  StepEnd(2000);
  StepBegin(2500, 2);
  StepEnd(4000);
  CheckSteps(10000, {{1, 1000, 2000, false}, {2, 2500, 4000, false}});
}

TEST_CASE_FIXTURE(Fixture, "track walker: a step begin ends the open step implicitly") {
  StepBegin(1000, 7);
  StepBegin(3000, 8);
  StepBegin(3500, 9);
  StepEnd(5000);
  CheckSteps(10000, {{7, 1000, 3000, false}, {8, 3000, 3500, false}, {9, 3500, 5000, false}});
}

TEST_CASE_FIXTURE(Fixture,
                  "track walker: a step still open at the end is incomplete and ends at end_ns") {
  StepBegin(1000, 1);
  StepEnd(2000);
  StepBegin(3000, 2);
  CheckSteps(9000, {{1, 1000, 2000, false}, {2, 3000, 9000, true}});
}

TEST_CASE_FIXTURE(Fixture, "track walker: an open step never ends before it begins") {
  StepBegin(5000, 3);
  CheckSteps(4000, {{3, 5000, 5000, true}});  // end_ns earlier than the begin
}

TEST_CASE_FIXTURE(Fixture, "track walker: an end without an open step is ignored") {
  StepEnd(500);
  StepBegin(1000, 4);
  StepEnd(2000);
  StepEnd(2500);
  CheckSteps(9000, {{4, 1000, 2000, false}});
}

TEST_CASE_FIXTURE(Fixture, "track walker: step numbers keep their full int64 value") {
  StepBegin(100, -5);
  StepBegin(200, INT64_MAX);
  StepBegin(300, 0);
  StepEnd(400);
  const std::vector<StepSeen> steps = Collect(1000);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].step == -5);
  CHECK(steps[1].step == INT64_MAX);
  CHECK(steps[2].step == 0);
}
