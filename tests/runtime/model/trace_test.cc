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

}  // namespace tfprof::cli
