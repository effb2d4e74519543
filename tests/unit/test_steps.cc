// CollectSteps and StepLookup: the session's training steps and which step a moment falls in.
#include "runtime/session/steps.h"

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
using tfprof::StepInterval;
using tfprof::StepLookup;
using tfprof::TickConverter;
using tfprof::SessionLog;

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

  std::vector<StepInterval> Collect(int64_t end_offset) const {
    return tfprof::CollectSteps(model, converter, base + end_offset);
  }
};

void CheckStep(const StepInterval &step, int64_t number, int64_t begin_ns, int64_t end_ns,
               size_t track, bool incomplete) {
  CHECK(step.step == number);
  CHECK(step.begin_ns == begin_ns);
  CHECK(step.end_ns == end_ns);
  CHECK(step.track == track);
  CHECK(step.incomplete == incomplete);
}

StepInterval Interval(int64_t step, int64_t begin_ns, int64_t end_ns) {
  return StepInterval{step, begin_ns, end_ns, 0, false};
}

// The step number found at `ns`, or -1 when none.
int64_t StepAt(const StepLookup &lookup, int64_t ns) {
  const StepInterval *found = lookup.Find(ns);
  return found == nullptr ? -1 : found->step;
}

}  // namespace

TEST_CASE("steps: a model without steps yields none") {
  Fixture f;
  f.model.AddTrack(100);
  f.SpanBegin(0, 10, 0);
  f.SpanEnd(0, 20);
  CHECK(f.Collect(1000).empty());
  SessionLog empty;
  CHECK(tfprof::CollectSteps(empty, f.converter, 0).empty());
}

TEST_CASE("steps: begin/end pairs become closed steps") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 1000, 1);
  f.SpanBegin(0, 1100, 0);
  f.SpanEnd(0, 1900);
  f.StepEnd(0, 2000);
  f.StepBegin(0, 2500, 2);
  f.StepEnd(0, 4000);
  const std::vector<StepInterval> steps = f.Collect(10000);
  REQUIRE(steps.size() == 2);
  CheckStep(steps[0], 1, f.base + 1000, f.base + 2000, 0, false);
  CheckStep(steps[1], 2, f.base + 2500, f.base + 4000, 0, false);
}

TEST_CASE("steps: a step begin ends the open step implicitly") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 1000, 7);
  f.StepBegin(0, 3000, 8);
  f.StepBegin(0, 3500, 9);
  f.StepEnd(0, 5000);
  const std::vector<StepInterval> steps = f.Collect(10000);
  REQUIRE(steps.size() == 3);
  CheckStep(steps[0], 7, f.base + 1000, f.base + 3000, 0, false);
  CheckStep(steps[1], 8, f.base + 3000, f.base + 3500, 0, false);
  CheckStep(steps[2], 9, f.base + 3500, f.base + 5000, 0, false);
}

TEST_CASE("steps: a step still open at the end is incomplete and ends at end_ns") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 1000, 1);
  f.StepEnd(0, 2000);
  f.StepBegin(0, 3000, 2);
  const std::vector<StepInterval> steps = f.Collect(9000);
  REQUIRE(steps.size() == 2);
  CheckStep(steps[0], 1, f.base + 1000, f.base + 2000, 0, false);
  CheckStep(steps[1], 2, f.base + 3000, f.base + 9000, 0, true);
}

TEST_CASE("steps: an open step never ends before it begins") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 5000, 3);
  const std::vector<StepInterval> steps = f.Collect(4000);  // end_ns earlier than the begin
  REQUIRE(steps.size() == 1);
  CheckStep(steps[0], 3, f.base + 5000, f.base + 5000, 0, true);
}

TEST_CASE("steps: an end without an open step is ignored") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepEnd(0, 500);
  f.StepBegin(0, 1000, 4);
  f.StepEnd(0, 2000);
  f.StepEnd(0, 2500);
  const std::vector<StepInterval> steps = f.Collect(9000);
  REQUIRE(steps.size() == 1);
  CheckStep(steps[0], 4, f.base + 1000, f.base + 2000, 0, false);
}

TEST_CASE("steps: step numbers keep their full int64 value") {
  Fixture f;
  f.model.AddTrack(100);
  f.StepBegin(0, 100, -5);
  f.StepBegin(0, 200, INT64_MAX);
  f.StepBegin(0, 300, 0);
  f.StepEnd(0, 400);
  const std::vector<StepInterval> steps = f.Collect(1000);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].step == -5);
  CHECK(steps[1].step == INT64_MAX);
  CHECK(steps[2].step == 0);
}

TEST_CASE("steps: steps from several tracks are merged and sorted by begin") {
  Fixture f;
  f.model.AddTrack(100);
  f.model.AddTrack(200);
  f.StepBegin(0, 1000, 1);
  f.StepEnd(0, 2000);
  f.StepBegin(0, 3000, 2);
  f.StepEnd(0, 4000);
  f.StepBegin(1, 500, 10);
  f.StepEnd(1, 1500);
  f.StepBegin(1, 2500, 11);  // still open at the end
  const std::vector<StepInterval> steps = f.Collect(6000);
  REQUIRE(steps.size() == 4);
  CheckStep(steps[0], 10, f.base + 500, f.base + 1500, 1, false);
  CheckStep(steps[1], 1, f.base + 1000, f.base + 2000, 0, false);
  CheckStep(steps[2], 11, f.base + 2500, f.base + 6000, 1, true);
  CheckStep(steps[3], 2, f.base + 3000, f.base + 4000, 0, false);
}

TEST_CASE("steps: steps beginning at the same time keep track order") {
  Fixture f;
  f.model.AddTrack(100);
  f.model.AddTrack(200);
  f.model.AddTrack(300);
  f.StepBegin(2, 1000, 30);
  f.StepEnd(2, 2000);
  f.StepBegin(0, 1000, 10);
  f.StepEnd(0, 2000);
  f.StepBegin(1, 1000, 20);
  f.StepEnd(1, 2000);
  const std::vector<StepInterval> steps = f.Collect(6000);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].track == 0);
  CHECK(steps[1].track == 1);
  CHECK(steps[2].track == 2);
  CHECK(steps[0].step == 10);
  CHECK(steps[1].step == 20);
  CHECK(steps[2].step == 30);
}

TEST_CASE("steps: StepLookup begin is inclusive, end exclusive") {
  const std::vector<StepInterval> steps = {Interval(1, 100, 200), Interval(2, 200, 300)};
  const StepLookup lookup(steps);
  CHECK(StepAt(lookup, 99) == -1);
  CHECK(StepAt(lookup, 100) == 1);
  CHECK(StepAt(lookup, 150) == 1);
  CHECK(StepAt(lookup, 199) == 1);
  CHECK(StepAt(lookup, 200) == 2);  // the next step's begin, not the previous step's end
  CHECK(StepAt(lookup, 299) == 2);
  CHECK(StepAt(lookup, 300) == -1);
  CHECK(StepAt(lookup, INT64_MIN) == -1);
  CHECK(StepAt(lookup, INT64_MAX) == -1);
  // Find returns a pointer into the vector it was built from.
  CHECK(lookup.Find(150) == &steps[0]);
  CHECK(lookup.Find(250) == &steps[1]);
}

TEST_CASE("steps: StepLookup finds nothing in gaps between steps") {
  const std::vector<StepInterval> steps = {Interval(1, 100, 200), Interval(2, 400, 500),
                                           Interval(3, 900, 1000)};
  const StepLookup lookup(steps);
  CHECK(StepAt(lookup, 200) == -1);
  CHECK(StepAt(lookup, 300) == -1);
  CHECK(StepAt(lookup, 399) == -1);
  CHECK(StepAt(lookup, 400) == 2);
  CHECK(StepAt(lookup, 700) == -1);
  CHECK(StepAt(lookup, 950) == 3);
  CHECK(StepAt(lookup, 1000) == -1);
}

TEST_CASE("steps: StepLookup on no steps") {
  const std::vector<StepInterval> steps;
  const StepLookup lookup(steps);
  CHECK(lookup.Find(0) == nullptr);
  CHECK(lookup.Find(INT64_MAX) == nullptr);
}

TEST_CASE("steps: with overlapping steps the latest-begun containing step wins") {
  // Two threads mark overlapping steps; a long one contains two shorter ones.
  const std::vector<StepInterval> steps = {Interval(1, 0, 1000), Interval(2, 100, 300),
                                           Interval(3, 200, 400), Interval(4, 600, 700)};
  const StepLookup lookup(steps);
  CHECK(StepAt(lookup, 0) == 1);
  CHECK(StepAt(lookup, 99) == 1);
  CHECK(StepAt(lookup, 100) == 2);
  CHECK(StepAt(lookup, 199) == 2);
  CHECK(StepAt(lookup, 200) == 3);  // 2 and 3 both contain 200: 3 began later
  CHECK(StepAt(lookup, 299) == 3);
  CHECK(StepAt(lookup, 300) == 3);
  CHECK(StepAt(lookup, 399) == 3);
  CHECK(StepAt(lookup, 400) == 1);  // 3 ended: back to the enclosing long step
  CHECK(StepAt(lookup, 650) == 4);
  CHECK(StepAt(lookup, 700) == 1);
  CHECK(StepAt(lookup, 999) == 1);
  CHECK(StepAt(lookup, 1000) == -1);
}

TEST_CASE("steps: StepLookup searches past later steps that ended early") {
  // A long step followed by many short ones that end before t: the long one is still found.
  std::vector<StepInterval> steps = {Interval(0, 0, 100000)};
  for (int64_t i = 1; i <= 50; ++i) steps.push_back(Interval(i, i * 100, i * 100 + 10));
  const StepLookup lookup(steps);
  CHECK(StepAt(lookup, 99999) == 0);
  CHECK(StepAt(lookup, 5005) == 50);
  CHECK(StepAt(lookup, 5010) == 0);
  CHECK(StepAt(lookup, 150) == 0);
  CHECK(StepAt(lookup, 100) == 1);
}

TEST_CASE("steps: zero-length steps contain no instant") {
  const std::vector<StepInterval> steps = {Interval(1, 100, 200), Interval(2, 150, 150)};
  const StepLookup lookup(steps);
  CHECK(StepAt(lookup, 150) == 1);
  CHECK(StepAt(lookup, 149) == 1);
}

TEST_CASE("steps: lookup over collected steps of two tracks") {
  Fixture f;
  f.model.AddTrack(100);
  f.model.AddTrack(200);
  f.StepBegin(0, 1000, 1);
  f.StepEnd(0, 5000);
  f.StepBegin(1, 2000, 100);
  f.StepEnd(1, 3000);
  const std::vector<StepInterval> steps = f.Collect(9000);
  const StepLookup lookup(steps);
  CHECK(StepAt(lookup, f.base + 999) == -1);
  CHECK(StepAt(lookup, f.base + 1000) == 1);
  CHECK(StepAt(lookup, f.base + 2000) == 100);
  CHECK(StepAt(lookup, f.base + 2999) == 100);
  CHECK(StepAt(lookup, f.base + 3000) == 1);
  CHECK(StepAt(lookup, f.base + 5000) == -1);
}
