// StepScalars(): the scalars an event file carries per step, with known answers: the step time,
// each counter's last value in the step, and each memory series' peak in the step counted as
// `tfprof summary` counts it (bytes held as the step begins count).
#include "runtime/formats/tensorflow/step_scalars.h"

#include <string>
#include <utility>
#include <vector>

#include "doctest/doctest.h"
#include "runtime/model/memory_test_trace.h"

namespace tfprof {
namespace {

using Scalars = std::vector<std::pair<std::string, double>>;
using tfprof_test::MemoryTestTrace;

constexpr int64_t kMs = 1'000'000;

TEST_CASE("formats/tensorflow: step scalars: step time, counters' last values, memory peaks") {
  MemoryTestTrace builder;
  builder.StepAt(0, 0, 10 * kMs).StepAt(1, 10 * kMs, 20 * kMs).StepAt(2, 20 * kMs, 30 * kMs)
      .StepAt(3, 30 * kMs, 42 * kMs);
  // Samples in time order, as readers leave them. "host memory bytes" is a memory counter: the
  // memory tag's, never a counter tag.
  builder.Counter(3 * kMs, 3.0, "loss", "value", 0)
      .Counter(4 * kMs, 1.0, "lr", "warmup", 0)
      .Counter(7 * kMs, 2.5, "loss", "value", 0)
      .Counter(12 * kMs, 100, "host memory bytes", "value", 0)
      .Counter(15 * kMs, 300, "host memory bytes", "value", 0)
      .Counter(16 * kMs, 1.5, "loss", "value", 0)
      .Counter(18 * kMs, 50, "host memory bytes", "value", 0)
      .Counter(33 * kMs, 20, "host memory bytes", "value", 0);
  const std::vector<Scalars> scalars = StepScalars(builder.trace());
  REQUIRE(scalars.size() == 4);
  const std::string memory = "tfprof/memory/CPU/peak_bytes";
  // Step 0: before the first memory sample, the series' level is 0 (a counter starts from 0).
  CHECK(scalars[0] == Scalars{{"tfprof/step_time_ms", 10.0},
                              {"tfprof/counter/loss", 2.5},
                              {"tfprof/counter/lr/warmup", 1.0},
                              {memory, 0.0}});
  CHECK(scalars[1] == Scalars{{"tfprof/step_time_ms", 10.0},
                              {"tfprof/counter/loss", 1.5},
                              {memory, 300.0}});
  // Step 2 has no sample at all: no counter value, and the 50 bytes held since step 1.
  CHECK(scalars[2] == Scalars{{"tfprof/step_time_ms", 10.0}, {memory, 50.0}});
  // Step 3 only frees: its peak is what it began with, not the 20 it ends with.
  CHECK(scalars[3] == Scalars{{"tfprof/step_time_ms", 12.0}, {memory, 50.0}});
}

TEST_CASE("formats/tensorflow: step scalars: a trace without counters has the step time only") {
  MemoryTestTrace builder;
  builder.StepAt(7, 0, 2 * kMs);
  CHECK(StepScalars(builder.trace()) == std::vector<Scalars>{{{"tfprof/step_time_ms", 2.0}}});
}

}  // namespace
}  // namespace tfprof
