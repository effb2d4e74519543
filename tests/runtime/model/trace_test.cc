// The trace model (runtime/model/trace.h): its name interner, names of kinds and formats, the
// event extent and the enclosing-first order the writers keep.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/model/step_index.h"
#include "runtime/model/trace.h"

namespace tfprof {

TEST_CASE("trace model: kinds and formats have names") {
  CHECK(std::string(ActivityKindName(ActivityKind::kKernel)) == "kernel");
  Trace trace;
  trace.format = Format::kChromeJsonGzip;
  trace.producer = Producer::kPytorch;
  CHECK(std::string(InputFormatName(trace)) == "PyTorch profiler Chrome trace");
  trace.format = Format::kTensorBoard;
  trace.producer = Producer::kTensorFlow;
  CHECK(std::string(InputFormatName(trace)) == "TensorBoard event file");
}

TEST_CASE("trace model: the event extent spans activities and steps") {
  Trace trace;
  CHECK(!EventExtent(trace).has_value());
  Activity early;
  early.begin_ns = 100;
  early.end_ns = 250;
  Activity late;
  late.begin_ns = 200;
  late.end_ns = 400;
  trace.activities = {late, early};  // file order, not time order
  std::optional<TimeExtent> extent = EventExtent(trace);
  REQUIRE(extent.has_value());
  CHECK(extent->begin_ns == 100);
  CHECK(extent->end_ns == 400);
  // A step that outlasts the activities (an incomplete one, or a merge's other rank) counts too.
  trace.steps.push_back(Step{.number = 1, .begin_ns = 150, .end_ns = 900});
  extent = EventExtent(trace);
  CHECK(extent->begin_ns == 100);
  CHECK(extent->end_ns == 900);
  trace.activities.clear();
  extent = EventExtent(trace);  // steps alone
  CHECK(extent->begin_ns == 150);
  CHECK(extent->end_ns == 900);
}

TEST_CASE("trace model: spans sort by begin, the enclosing one first, ties kept in order") {
  struct Span {
    int64_t begin_ns, end_ns;
    int id;
  };
  const std::vector<Span> spans = {{200, 300, 0}, {100, 150, 1}, {200, 900, 2}, {100, 150, 3}};
  std::vector<uint32_t> order = {0, 1, 2, 3};
  SortEnclosingFirst(spans, order);
  CHECK(order == std::vector<uint32_t>{1, 3, 2, 0});  // 1 and 3 tie: stable
  CHECK(EnclosingFirst(spans[2], spans[0]));
  CHECK_FALSE(EnclosingFirst(spans[0], spans[2]));
  CHECK_FALSE(EnclosingFirst(spans[1], spans[3]));
  std::vector<uint32_t> sorted = {1, 3, 2, 0};
  SortEnclosingFirst(spans, sorted);  // already in order: left as it is
  CHECK(sorted == std::vector<uint32_t>{1, 3, 2, 0});
}

TEST_CASE("step index: a hint gives the answers a lookup without one gives, in any order") {
  // A host process with 300 steps, two of them nested in a longer one, and a GPU process whose
  // work belongs to the step of its launch.
  Trace trace;
  trace.processes.resize(2);
  trace.tracks.resize(2);
  trace.tracks[1].process = 1;
  trace.tracks[1].kind = TrackKind::kGpuStream;
  trace.tracks[1].device = 0;
  for (int64_t number = 0; number < 300; ++number) {
    Step step;
    step.number = number;
    step.begin_ns = number * 100;
    step.end_ns = number * 100 + 90;
    trace.steps.push_back(step);
  }
  Step outer;  // holds steps 50 to 53
  outer.number = 1000;
  outer.begin_ns = 4990;
  outer.end_ns = 5400;
  trace.steps.push_back(outer);
  for (int64_t ns = -50; ns < 31'000; ns += 7) {
    Activity span;
    span.begin_ns = ns;
    span.end_ns = ns + (ns % 3) * 20;
    trace.activities.push_back(span);
    GpuDetail work;
    work.launch_ns = ns;
    Activity kernel;
    kernel.begin_ns = ns + 500;
    kernel.end_ns = ns + 510;
    kernel.track = 1;
    kernel.kind = ActivityKind::kKernel;
    kernel.detail = trace.gpu_details.Add(ActivityKind::kKernel, work);
    trace.activities.push_back(kernel);
  }
  const StepIndex index(trace);
  std::vector<std::optional<size_t>> expected;
  size_t found = 0;
  for (const Activity &activity : trace.activities) {
    expected.push_back(index.Of(activity));
    found += expected.back().has_value();
  }
  CHECK(found > trace.activities.size() / 2);  // most activities are in a step
  // Span k begins at -50 + 7k: span 723 is [5011, 5031), in step 50; span 733 is [5081, 5121),
  // across step 50's end, in the outer step; the kernel launched at 5011 is in step 50.
  CHECK(expected[2 * 723] == std::optional<size_t>(50));
  CHECK(expected[2 * 733] == std::optional<size_t>(300));
  CHECK(expected[2 * 723 + 1] == std::optional<size_t>(50));
  std::vector<size_t> order(trace.activities.size());
  for (size_t index_in = 0; index_in < order.size(); ++index_in) order[index_in] = index_in;
  for (int round = 0; round < 3; ++round) {  // in order, reversed, shuffled
    if (round == 1) std::reverse(order.begin(), order.end());
    if (round == 2) std::shuffle(order.begin(), order.end(), std::mt19937(36));
    StepIndex::Hint hint;
    size_t same = 0;
    for (const size_t at : order) same += index.Of(trace.activities[at], &hint) == expected[at];
    CHECK(same == order.size());
  }
}

TEST_CASE("trace model: the name interner, a name seen again gets its index, long or short, after many more") {
  NameInterner names;
  const std::string long_name(1 << 16, 'n');
  CHECK(names.Intern("op") == 0);
  CHECK(names.Intern(long_name) == 1);
  for (int index = 0; index < 10'000; ++index) names.Intern("name " + std::to_string(index));
  CHECK(names.Intern("op") == 0);  // short strings live inside their std::string: they must not move
  CHECK(names.Intern(long_name) == 1);
  // Names alike in length and in their first and last 8 bytes share a slot of the recent names:
  // each still gets its own index, interned in turn and again.
  std::vector<uint32_t> alike;
  for (int layer = 0; layer < 10; ++layer) {
    alike.push_back(names.Intern("layer_00_" + std::to_string(layer) + "_kernel_0"));
  }
  for (int round = 0; round < 3; ++round) {
    for (int layer = 0; layer < 10; ++layer) {
      CHECK(names.Intern("layer_00_" + std::to_string(layer) + "_kernel_0") == alike[layer]);
      CHECK(names.Get(alike[layer]) == "layer_00_" + std::to_string(layer) + "_kernel_0");
    }
  }
  CHECK(names.Get(1) == long_name);
  CHECK(names.size() == 10'002 + 10);
}

TEST_CASE("trace model: the name interner, a copy indexes its own strings, and outlives the original") {
  auto original = std::make_unique<NameInterner>();
  original->Intern("forward");
  original->Intern("backward");
  NameInterner copy(*original);
  NameInterner assigned;
  assigned.Intern("other");
  assigned = *original;
  original.reset();
  for (NameInterner *names : {&copy, &assigned}) {
    CHECK(names->Intern("backward") == 1);
    CHECK(names->Intern("forward") == 0);
    CHECK(names->Intern("step") == 2);
    CHECK(names->Get(2) == "step");
  }
  NameInterner moved(std::move(copy));
  CHECK(moved.Intern("backward") == 1);
}

}  // namespace tfprof

namespace tfprof {

// A launch call's detail holds only CUPTI's ids: it is kept as a CallDetail, half the size, and
// read back whole; GPU work's are kept whole, to be changed in place.
TEST_CASE("trace model: GPU details, a launch call's kept small and read back whole") {
  GpuDetails details;
  GpuDetail call;
  call.external_id = 77;
  call.correlation = 5;
  call.context = 1;
  call.callback_id = 211;
  call.fields = kGpuHasCorrelation | kGpuHasContext | kGpuHasCallbackId;
  GpuDetail kernel;
  kernel.correlation = 5;
  kernel.fields = kGpuHasCorrelation;
  const uint32_t call_index = details.Add(ActivityKind::kRuntimeApi, call);
  const uint32_t kernel_index = details.Add(ActivityKind::kKernel, kernel);
  GpuDetail overhead;  // not GPU work, but a thread: kept whole
  overhead.thread_id = 4242;
  const uint32_t overhead_index = details.Add(ActivityKind::kOverhead, overhead);
  CHECK(details.size() == 3);
  CHECK(details.work().size() == 2);
  CHECK(details.Work(call_index) == nullptr);
  REQUIRE(details.Work(kernel_index) != nullptr);
  CHECK(details.Get(overhead_index).thread_id == 4242);

  const GpuDetail read = details.Get(call_index);
  CHECK(read.external_id == 77);
  CHECK(read.correlation == 5);
  CHECK(read.context == 1);
  CHECK(read.callback_id == 211);
  CHECK(read.fields == call.fields);
  CHECK(read.launch_ns == kNoStep);
  CHECK(read.op == kNoName);
  details.AddFields(call_index, kGpuLaunchesWork);
  CHECK((details.Get(call_index).fields & kGpuLaunchesWork) != 0);
  details.Work(kernel_index)->launch_ns = 900;
  CHECK(details.Get(kernel_index).launch_ns == 900);

  // No detail, and indices past either table, name none.
  CHECK_FALSE(details.Has(kNoDetail));
  CHECK_FALSE(details.Find(kNoDetail).has_value());
  CHECK_FALSE(details.Has(call_index + 1));
  CHECK_FALSE(details.Has(3));
  CHECK(details.Get(kNoDetail).correlation == 0);
  CHECK(details.Work(kNoDetail) == nullptr);

  // Appended to another trace's: each index moves by its own table's base.
  GpuDetails merged;
  merged.Add(ActivityKind::kRuntimeApi, GpuDetail{});
  const GpuDetails::Bases bases = merged.bases();
  merged.Append(details);
  CHECK(merged.size() == 4);
  CHECK(merged.Get(GpuDetails::Rebased(call_index, bases)).callback_id == 211);
  CHECK(merged.Get(GpuDetails::Rebased(kernel_index, bases)).launch_ns == 900);
  CHECK(merged.Get(GpuDetails::Rebased(overhead_index, bases)).thread_id == 4242);
  CHECK(GpuDetails::Rebased(kNoDetail, bases) == kNoDetail);
}

}  // namespace tfprof
