// The normalized trace model's name interner.
#include "doctest/doctest.h"
#include "runtime/model/trace.h"

namespace tfprof::cli {

TEST_CASE("tools/loaded_trace: the same name always gets the same index") {
  NameInterner names;
  const uint32_t a = names.Intern("MatMul");
  const uint32_t b = names.Intern("IteratorGetNext");
  CHECK(a != b);
  CHECK(names.Intern(std::string("Mat") + "Mul") == a);
  CHECK(names.Get(b) == "IteratorGetNext");
  CHECK(names.size() == 2);
}

TEST_CASE("tools/loaded_trace: kinds and formats have names") {
  CHECK(std::string(ActivityKindName(ActivityKind::kKernel)) == "kernel");
  Trace trace;
  trace.format = Format::kChromeJsonGzip;
  trace.producer = Producer::kPytorch;
  CHECK(std::string(InputFormatName(trace)) == "PyTorch profiler Chrome trace");
  trace.format = Format::kTensorBoard;
  trace.producer = Producer::kTensorFlow;
  CHECK(std::string(InputFormatName(trace)) == "TensorBoard event file");
}

TEST_CASE("tools/loaded_trace: the event extent spans activities and steps") {
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

}  // namespace tfprof::cli
