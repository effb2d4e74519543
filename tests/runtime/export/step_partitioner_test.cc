// StepPartitioner: spans sorted into the steps that hold them while events still arrive, and the
// TensorFlow names and labels tfprof writes for them.
#include "runtime/export/step_partitioner.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/collector/event.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/session/session_log.h"

namespace {

using tfprof::Event;
using tfprof::EventKind;
using tfprof::StepPartitioner;
using tfprof::StepRecord;

// Monotonic ticks are nanoseconds, placed at offsets from the converter's anchor.
struct Fixture {
  tfprof::TickConverter converter = tfprof::TickConverter::Start(tfprof::ClockSource::kMonotonic);
  int64_t base = converter.start_ns();
  tfprof::SessionLog model;

  Fixture() {
    model.AddTrack(100);
    model.AddTrack(200);
  }
  void Add(size_t track, int64_t offset, EventKind kind, uint64_t arg = 0, const char *name = "") {
    const uint32_t id = model.names.Intern(name);
    model.tracks[track].events.Append(
        Event{static_cast<uint64_t>(base + offset), arg, id, kind, 0});
  }
  void Span(size_t track, int64_t begin, int64_t end, const char *name) {
    Add(track, begin, EventKind::kSpanBegin, 0, name);
    Add(track, end, EventKind::kSpanEnd);
  }
  std::vector<std::string> Names(const StepRecord &record) const {
    std::vector<std::string> names;
    for (const auto &op : record.ops) names.emplace_back(model.names.Get(op.name));
    return names;
  }
};

}  // namespace

TEST_CASE("step partitioner: steps settle only once the caller says their events are in") {
  Fixture f;
  StepPartitioner partitioner;
  f.Add(0, 0, EventKind::kStepBegin, 1);
  f.Span(0, 10, 20, "a");
  f.Span(1, 30, 40, "on_other_thread");
  f.Add(0, 50, EventKind::kStepEnd);
  partitioner.Advance(f.model, f.converter);
  CHECK(partitioner.TakeSettled(f.base + 49).empty());  // the step ended after the settled time

  std::vector<StepRecord> records = partitioner.TakeSettled(f.base + 50);
  REQUIRE(records.size() == 1);
  CHECK(records[0].has_step);
  CHECK(records[0].step.step == 1);
  CHECK(f.Names(records[0]) == std::vector<std::string>{"a", "on_other_thread"});
  CHECK(records[0].ops[1].track == 1);
  CHECK(partitioner.TakeSettled(f.base + 1000).empty());  // taken once
}

TEST_CASE("step partitioner: spans across step boundaries or outside steps go to the last record") {
  Fixture f;
  StepPartitioner partitioner;
  f.Add(0, 0, EventKind::kSpanBegin, 0, "train");  // encloses both steps
  f.Span(0, 5, 8, "before");
  f.Add(0, 10, EventKind::kStepBegin, 1);
  f.Add(1, 15, EventKind::kSpanBegin, 0, "straddles");
  f.Add(0, 20, EventKind::kStepBegin, 2);  // a begin ends the open step
  f.Span(0, 22, 24, "in_two");
  f.Add(1, 25, EventKind::kSpanEnd);
  f.Add(0, 30, EventKind::kStepEnd);
  partitioner.Advance(f.model, f.converter);
  std::vector<StepRecord> settled = partitioner.TakeSettled(f.base + 100);
  REQUIRE(settled.size() == 2);
  CHECK(f.Names(settled[0]).empty());
  CHECK(f.Names(settled[1]) == std::vector<std::string>{"in_two"});

  f.Add(0, 40, EventKind::kStepBegin, 3);  // never ended
  f.Span(0, 41, 42, "last");
  partitioner.Advance(f.model, f.converter);
  std::vector<StepRecord> rest = partitioner.TakeAll(f.base + 50);
  REQUIRE(rest.size() == 2);
  CHECK(rest[0].step.step == 3);
  CHECK(rest[0].step.incomplete);
  CHECK(rest[0].step.end_ns == f.base + 50);
  CHECK(f.Names(rest[0]) == std::vector<std::string>{"last"});
  CHECK_FALSE(rest[1].has_step);
  // Unsorted: in the order the spans ended on each thread (the writers order what they need).
  std::vector<std::string> outside = f.Names(rest[1]);
  std::sort(outside.begin(), outside.end());
  CHECK(outside == std::vector<std::string>{"before", "straddles", "train"});
  for (const auto &op : rest[1].ops) {
    if (f.model.names.Get(op.name) != "train") continue;
    CHECK(op.incomplete);  // never ended
    CHECK(op.end_ns == f.base + 50);
  }
}

TEST_CASE("step partitioner: a span waits while a step that may hold it is still open") {
  Fixture f;
  StepPartitioner partitioner;
  f.Add(0, 0, EventKind::kStepBegin, 1);
  f.Add(0, 10, EventKind::kStepEnd);
  f.Add(1, 20, EventKind::kStepBegin, 2);
  f.Span(0, 25, 30, "inside_open_step");
  partitioner.Advance(f.model, f.converter);
  std::vector<StepRecord> settled = partitioner.TakeSettled(f.base + 100);
  REQUIRE(settled.size() == 1);
  CHECK(f.Names(settled[0]).empty());
  f.Add(1, 40, EventKind::kStepEnd);
  partitioner.Advance(f.model, f.converter);
  settled = partitioner.TakeSettled(f.base + 100);
  REQUIRE(settled.size() == 1);
  CHECK(settled[0].step.step == 2);
  CHECK(f.Names(settled[0]) == std::vector<std::string>{"inside_open_step"});
  CHECK(partitioner.TakeAll(f.base + 200).empty());
}

TEST_CASE("step partitioner: a long run remembers only its recent steps") {
  Fixture f;
  StepPartitioner partitioner;
  constexpr int64_t kStepNs = 10'000'000;  // 10 ms steps for 10 minutes
  constexpr int64_t kSteps = 60'000;
  size_t most_remembered = 0;
  for (int64_t step = 0; step < kSteps; ++step) {
    f.Add(0, step * kStepNs, EventKind::kStepBegin, static_cast<uint64_t>(step));
    f.Add(0, (step + 1) * kStepNs - 1, EventKind::kStepEnd);
    if (step % 100 != 99) continue;
    partitioner.Advance(f.model, f.converter);
    CHECK(partitioner.TakeSettled(f.base + (step + 1) * kStepNs).size() == 100);
    most_remembered = std::max(most_remembered, partitioner.remembered_steps());
  }
  // The latest kMaxRememberedSteps (fewer than a minute's 6,000), plus a batch not erased yet.
  CHECK(most_remembered < StepPartitioner::kMaxRememberedSteps + StepPartitioner::kForgetBatch);
  CHECK(most_remembered >= StepPartitioner::kMaxRememberedSteps);
  const int64_t end = kSteps * kStepNs;
  const tfprof::StepInterval *recent = partitioner.TakenStepAt(f.base + end - 5'000'000'000 + 5);
  REQUIRE(recent != nullptr);
  CHECK(recent->step == kSteps - 500);
  CHECK(partitioner.TakenStepAt(f.base + 5) == nullptr);  // ten minutes ago: forgotten
}

TEST_CASE("step partitioner: 200 steps/s for a minute remembers a bounded count, loses none") {
  Fixture f;
  StepPartitioner partitioner;
  constexpr int64_t kStepNs = 5'000'000;  // 200 steps/s for 70 s: 14,000 steps
  constexpr int64_t kSteps = 14'000;
  size_t most_remembered = 0;
  int64_t taken_steps = 0;
  int64_t taken_spans = 0;
  int64_t next_step = 0;
  bool in_order = true;
  for (int64_t step = 0; step < kSteps; ++step) {
    f.Add(0, step * kStepNs, EventKind::kStepBegin, static_cast<uint64_t>(step));
    f.Span(0, step * kStepNs + 10, step * kStepNs + 20, "op");
    f.Add(0, (step + 1) * kStepNs - 1, EventKind::kStepEnd);
    if (step % 50 != 49) continue;
    partitioner.Advance(f.model, f.converter);
    for (const tfprof::StepRecord &record :
         partitioner.TakeSettled(f.base + (step + 1) * kStepNs)) {
      in_order = in_order && record.step.step == next_step++;
      ++taken_steps;
      taken_spans += static_cast<int64_t>(record.ops.size());
    }
    most_remembered = std::max(most_remembered, partitioner.remembered_steps());
  }
  CHECK(in_order);
  CHECK(taken_steps == kSteps);
  CHECK(taken_spans == kSteps);  // every span in its step: the bound forgets no data
  CHECK(most_remembered < StepPartitioner::kMaxRememberedSteps + StepPartitioner::kForgetBatch);
  CHECK(most_remembered >= StepPartitioner::kMaxRememberedSteps);
  CHECK(partitioner.TakenStepAt(f.base + (kSteps - 10) * kStepNs + 7)->step == kSteps - 10);
  CHECK(partitioner.TakenStepAt(f.base + 7) == nullptr);  // beyond the bound: forgotten
}

TEST_CASE("step partitioner: busy threads' spans come out outer first, in begin order") {
  // Each thread's spans end children first; the threads' times interleave. The record lists
  // them by begin, the enclosing span first, whatever the number of threads (past 64 runs the
  // list is sorted whole).
  for (const size_t threads : {size_t{1}, size_t{4}, size_t{70}}) {
    Fixture f;
    for (size_t track = 2; track < threads; ++track) f.model.AddTrack(300 + track);
    struct Expected {
      int64_t begin, end;
      size_t track;
    };
    std::vector<Expected> expected;
    const auto span = [&](size_t track, int64_t begin, int64_t end, const char *name) {
      f.Add(track, begin, EventKind::kSpanBegin, 0, name);
      expected.push_back({begin, end, track});
      return end;
    };
    f.Add(0, 0, EventKind::kStepBegin, 1);
    const int64_t rounds = threads > 4 ? 3 : 50;
    for (size_t track = 0; track < threads; ++track) {
      for (int64_t round = 0; round < rounds; ++round) {
        // Distinct begins across threads: 7 ns apart.
        const int64_t at = 100 + round * 1000 + static_cast<int64_t>(track) * 7;
        span(track, at, at + 900, "outer");
        span(track, at + 1, at + 400, "inner");
        f.Add(track, at + 2, EventKind::kSpanBegin, 0, "leaf");
        expected.push_back({at + 2, at + 100, track});
        f.Add(track, at + 100, EventKind::kSpanEnd);
        f.Add(track, at + 400, EventKind::kSpanEnd);  // inner
        span(track, at + 500, at + 800, "inner2");
        f.Add(track, at + 800, EventKind::kSpanEnd);
        f.Add(track, at + 900, EventKind::kSpanEnd);  // outer
      }
    }
    const int64_t step_end = 100 + rounds * 1000 + 1000;
    f.Add(0, step_end, EventKind::kStepEnd);
    StepPartitioner partitioner;
    partitioner.Advance(f.model, f.converter);
    std::vector<StepRecord> records = partitioner.TakeSettled(f.base + step_end);
    REQUIRE(records.size() == 1);
    std::sort(expected.begin(), expected.end(), [](const Expected &a, const Expected &b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    const std::vector<tfprof::HostOp> &ops = records[0].ops;
    CAPTURE(threads);
    REQUIRE(ops.size() == expected.size());
    size_t matching = 0;
    for (size_t index = 0; index < ops.size(); ++index) {
      matching += ops[index].begin_ns == f.base + expected[index].begin &&
                  ops[index].end_ns == f.base + expected[index].end &&
                  ops[index].track == expected[index].track;
    }
    CHECK(matching == ops.size());
  }
}

TEST_CASE("tf names: device names, op names and labels in TensorFlow's forms") {
  using tfprof::SplitOpName;
  CHECK(tfprof::GpuAllStreamsDevice(1) == "/device:GPU:1/stream:all");
  CHECK(tfprof::GpuStreamDevice(0, 7) == "/device:GPU:0/stream:7");
  CHECK(tfprof::GpuMemcpyDevice(2) == "/device:GPU:2/memcpy");
  CHECK(SplitOpName("dense/MatMul:MatMul").name == "dense/MatMul");
  CHECK(SplitOpName("dense/MatMul:MatMul").type == "MatMul");
  CHECK(SplitOpName("forward").name == "forward");
  CHECK(SplitOpName("forward").type == "forward");
  // Only an identifier after the last colon is a type.
  CHECK(SplitOpName("http://host").type == "http://host");
  CHECK(SplitOpName("a:1x").type == "a:1x");
  CHECK(SplitOpName(":Type").type == ":Type");
  CHECK(tfprof::HostOpLabel("add", "AddV2", "x, y") == "add = AddV2(x, y)");
  tfprof::KernelShape shape;
  shape.grid[0] = 128;
  shape.block[0] = 256;
  shape.registers = 32;
  shape.shared_memory = 1024;
  CHECK(tfprof::KernelLabel("volta_sgemm", shape, "dense/MatMul:MatMul") ==
        "volta_sgemm regs:32 shm:1024 grid:128,1,1 block:256,1,1@@dense/MatMul:MatMul#");
  CHECK(tfprof::KernelLabel("k", shape, "") == "k regs:32 shm:1024 grid:128,1,1 block:256,1,1");
  CHECK(tfprof::MemcpyLabel("MemcpyHtoD", 4096, "") == "MemcpyHtoD bytes:4096");
  CHECK(tfprof::MemcpyLabel("MemcpyDtoH", 8, "loss:Mean") == "MemcpyDtoH bytes:8@@loss:Mean#");
  CHECK(tfprof::StepTag(42) == "step_000042");
  CHECK(tfprof::StepTag(1234567) == "step_1234567");
}
