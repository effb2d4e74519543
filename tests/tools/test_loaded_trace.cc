// The normalized trace model's name interner.
#include "doctest/doctest.h"
#include "tools/tfprof/trace_input/loaded_trace.h"

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
  CHECK(std::string(TraceFormatName(TraceFormat::kPytorchChrome)) == "PyTorch profiler Chrome trace");
}

}  // namespace tfprof::cli
