// timeline.py's label reading, checked against what Python's re.match(r'(.*) = (.*)\((.*)\)')
// and its "@@...#" kernel parsing give for the same strings.
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "runtime/formats/tensorflow/timeline_labels.h"

namespace tfprof {

namespace {

std::vector<std::string> Inputs(const ParsedOpLabel &label) {
  std::vector<std::string> inputs;
  ForEachLabelInput(label, [&](std::string_view input) { inputs.emplace_back(input); });
  return inputs;
}

}  // namespace

TEST_CASE("timeline labels: host labels split as Python's greedy regex splits them") {
  struct Case {
    std::string label, name, type;
    std::vector<std::string> inputs;
  };
  const std::vector<Case> cases = {
      {"a = B(c, d)", "a", "B", {"c", "d"}},
      {"n = T()", "n", "T", {}},
      {"x = Y(z) = W(q)", "x = Y(z)", "W", {"q"}},          // the last " = " that still matches
      {"n = T(a(b), c)", "n", "T(a", {"b)", "c"}},           // the last '(' before the last ')'
      {"a = b(c)\nd = e(f)", "a", "b", {"c"}},               // '.' stops at the first newline
      {" = (x)", "", "", {"x"}},
      {"a = T(x) tail", "a", "T", {"x"}},                    // re.match is not anchored at the end
      {"a = T(x, )", "a", "T", {"x", ""}},
      {"[alloc 1.0MB 2.0MB] m = MatMul(p, q)", "[alloc 1.0MB 2.0MB] m", "MatMul", {"p", "q"}},
  };
  for (const Case &expected : cases) {
    CAPTURE(expected.label);
    const ParsedOpLabel parsed = ParseHostOpLabel(expected.label);
    CHECK(parsed.name == expected.name);
    CHECK(parsed.type == expected.type);
    CHECK(Inputs(parsed) == expected.inputs);
  }
}

TEST_CASE("timeline labels: labels that do not match are 'unknown' with no inputs") {
  for (const std::string label : {"foo", "", "a = T(x", "a = b = T(x", "_Send: recv (from x",
                                  "a=T(x)", "line one\na = T(x)"}) {
    CAPTURE(label);
    const ParsedOpLabel parsed = ParseHostOpLabel(label);
    CHECK(parsed.name == "unknown");
    CHECK(parsed.type == "unknown");
    CHECK(Inputs(parsed).empty());
  }
}

TEST_CASE("timeline labels: GPU-trace devices and kernel labels") {
  CHECK(IsGpuTraceDevice("/device:GPU:0/stream:all"));
  CHECK(IsGpuTraceDevice("/gpu:0/memcpy"));
  CHECK_FALSE(IsGpuTraceDevice("/job:localhost/replica:0/task:0/device:GPU:0"));

  KernelOpName kernel =
      ParseKernelLabel("void gemm<float>() regs:32 shm:0 grid:1,1,1 block:64,1,1@@dense/MatMul:MatMul#id=3#",
                       "node");
  CHECK(kernel.name == "dense/MatMul");
  CHECK(kernel.type == "MatMul");
  kernel = ParseKernelLabel("MEMCPYHtoD 64 bytes", "x:MEMCPYHtoD");  // no "@@": the node name
  CHECK(kernel.name == "x");
  CHECK(kernel.type == "MEMCPYHtoD");
  kernel = ParseKernelLabel("k@@op", "plain");  // no '#' after "@@": the node name, no type
  CHECK(kernel.name == "plain");
  CHECK(kernel.type == "unknown");
  kernel = ParseKernelLabel("k#x@@a:B:C#", "n");  // the first '#' comes before "@@"
  CHECK(kernel.name == "n");
  kernel = ParseKernelLabel("@@a:B:C#", "n");  // only the first two fields count
  CHECK(kernel.name == "a");
  CHECK(kernel.type == "B");
}

}  // namespace tfprof
