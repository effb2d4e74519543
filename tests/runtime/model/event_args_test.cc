// The args vocabulary both readers and writers share (runtime/model/event_args.h): keys, the GPU
// detail an arg fills, and what a reader makes of decoded args.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "runtime/model/event_args.h"

namespace tfprof {

TEST_CASE("event args: every key names its arg and is found again") {
  for (const EventArgKey &entry : kEventArgKeys) {
    if (entry.arg == EventArg::kOther) continue;
    CHECK(KeyOf(entry.arg) == entry.key);
    CHECK(EventArgOf(entry.key) == entry.arg);
  }
  CHECK(EventArgOf("not an arg") == EventArg::kOther);
  CHECK(EventArgOf("") == EventArg::kOther);
  // Keys that land in a known key's slot (same length, first and last byte) are still others.
  CHECK(EventArgOf("stop") == EventArg::kOther);   // "step"'s slot
  CHECK(EventArgOf("gxid") == EventArg::kOther);   // "grid"'s
  CHECK(EventArgOf("Step") == EventArg::kOther);   // keys are case-sensitive
  static_assert(EventArgOf("correlation") == EventArg::kCorrelation);  // usable at compile time
  CHECK(KeyOf(EventArg::kExternalId) == "External id");  // Kineto's spelling
}

TEST_CASE("event args: integer args fill their GpuDetail or GpuWorkShape member and say so") {
  GpuDetail detail;
  GpuWorkShape shape;
  CHECK(SetGpuDetailInteger(EventArg::kCorrelation, 77, &detail, &shape));
  CHECK(detail.correlation == 77);
  CHECK((detail.fields & kGpuHasCorrelation) != 0);
  CHECK(SetGpuDetailInteger(EventArg::kRegisters, 32, &detail, &shape));
  CHECK(shape.registers == 32);
  CHECK(SetGpuDetailInteger(EventArg::kGraphId, 9, &detail, &shape));
  CHECK(shape.graph_id == 9);
  CHECK_FALSE(SetGpuDetailInteger(EventArg::kStep, 3, &detail, &shape));
  CHECK(GpuDetailTriple(EventArg::kGrid, &shape) == shape.grid);
  CHECK(GpuDetailTriple(EventArg::kBytes, &shape) == nullptr);
}

TEST_CASE("event args: work shapes are kept once each; index 0 is the all-zero shape") {
  GpuWorkShapes shapes;
  REQUIRE(shapes.size() == 1);
  CHECK(shapes.Intern(GpuWorkShape()) == 0);
  GpuWorkShape gemm;
  gemm.grid[0] = 80;
  gemm.block[0] = 256;
  gemm.registers = 32;
  GpuWorkShape copy;
  copy.peer_device = 1;
  const uint32_t first = shapes.Intern(gemm);
  CHECK(first == 1);
  CHECK(shapes.Intern(copy) == 2);
  CHECK(shapes.Intern(gemm) == first);  // found by value, not only the last one
  CHECK(shapes.Intern(copy) == 2);
  CHECK(shapes.size() == 3);
  CHECK(shapes.Get(first) == gemm);
  CHECK(shapes.Get(99) == GpuWorkShape());  // a damaged index reads as no shape
  GpuWorkShapes copied = shapes;  // a copy looks up its own shapes
  CHECK(copied.Intern(copy) == 2);
  GpuWorkShapes moved = std::move(copied);
  CHECK(moved.Intern(gemm) == first);
  CHECK(copied.size() == 1);  // what is left of a moved one is still usable
  CHECK(copied.Intern(gemm) == 1);
  shapes.Clear();
  CHECK(shapes.size() == 1);
  CHECK(shapes.Intern(copy) == 1);
}

TEST_CASE("event args: a copy's kind comes from its name, then the kind text, then CUPTI's number") {
  DecodedArgs args;
  CHECK(CopyKindOf("Memcpy HtoD (Pageable -> Device)", args) == CopyKind::kHostToDevice);
  args.kind_text = "DtoH";
  CHECK(CopyKindOf("cudaMemcpyAsync", args) == CopyKind::kDeviceToHost);
  args.kind_text = {};
  CHECK(CopyKindOf("copy", args) == CopyKind::kOther);  // nothing says
  args.has_copy_kind = true;
  args.copy_kind = 8;  // CUPTI_ACTIVITY_MEMCPY_KIND_DTOD
  CHECK(CopyKindOf("copy", args) == CopyKind::kDeviceToDevice);
}

TEST_CASE("event args: GPU work, API calls and syncs keep a detail; host spans and empty args none") {
  NameInterner names;
  GpuWorkShapes shapes;
  DecodedArgs args;
  CHECK_FALSE(GpuDetailOf(ActivityKind::kKernel, args, std::nullopt, names, shapes).has_value());
  args.op = "MatMul";
  CHECK_FALSE(GpuDetailOf(ActivityKind::kHostOp, args, std::nullopt, names, shapes).has_value());
  std::optional<GpuDetail> kernel =
      GpuDetailOf(ActivityKind::kKernel, args, std::nullopt, names, shapes);
  REQUIRE(kernel.has_value());
  CHECK(names.Get(kernel->op) == "MatMul");

  DecodedArgs memset;
  std::optional<GpuDetail> filled = GpuDetailOf(ActivityKind::kMemset, memset, 255.0, names, shapes);
  REQUIRE(filled.has_value());
  CHECK(shapes.Get(filled->shape).memset_value == 255);
  CHECK((filled->fields & kGpuHasMemsetValue) != 0);
  // A damaged file's value is clamped, not overflowed.
  CHECK(GpuDetailOf(ActivityKind::kMemset, memset, 1e300, names, shapes).has_value());

  DecodedArgs sync;
  sync.has_detail = true;
  std::optional<GpuDetail> wide = GpuDetailOf(ActivityKind::kSync, sync, std::nullopt, names, shapes);
  REQUIRE(wide.has_value());
  CHECK((wide->fields & kGpuContextWide) != 0);  // no stream: the whole context waited
  sync.has_stream = true;
  CHECK((GpuDetailOf(ActivityKind::kSync, sync, std::nullopt, names, shapes)->fields & kGpuContextWide) == 0);
}

}  // namespace tfprof
