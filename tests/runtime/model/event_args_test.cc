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

TEST_CASE("event args: integer args fill their GpuDetail member and say so") {
  GpuDetail detail;
  CHECK(SetGpuDetailInteger(EventArg::kCorrelation, 77, &detail));
  CHECK(detail.correlation == 77);
  CHECK((detail.fields & kGpuHasCorrelation) != 0);
  CHECK(SetGpuDetailInteger(EventArg::kRegisters, 32, &detail));
  CHECK(detail.registers == 32);
  CHECK_FALSE(SetGpuDetailInteger(EventArg::kStep, 3, &detail));
  CHECK(GpuDetailTriple(EventArg::kGrid, &detail) == detail.grid);
  CHECK(GpuDetailTriple(EventArg::kBytes, &detail) == nullptr);
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
  DecodedArgs args;
  CHECK_FALSE(GpuDetailOf(ActivityKind::kKernel, args, std::nullopt, names).has_value());
  args.op = "MatMul";
  CHECK_FALSE(GpuDetailOf(ActivityKind::kHostOp, args, std::nullopt, names).has_value());
  std::optional<GpuDetail> kernel = GpuDetailOf(ActivityKind::kKernel, args, std::nullopt, names);
  REQUIRE(kernel.has_value());
  CHECK(names.Get(kernel->op) == "MatMul");

  DecodedArgs memset;
  std::optional<GpuDetail> filled = GpuDetailOf(ActivityKind::kMemset, memset, 255.0, names);
  REQUIRE(filled.has_value());
  CHECK(filled->memset_value == 255);
  CHECK((filled->fields & kGpuHasMemsetValue) != 0);
  // A damaged file's value is clamped, not overflowed.
  CHECK(GpuDetailOf(ActivityKind::kMemset, memset, 1e300, names).has_value());

  DecodedArgs sync;
  sync.has_detail = true;
  std::optional<GpuDetail> wide = GpuDetailOf(ActivityKind::kSync, sync, std::nullopt, names);
  REQUIRE(wide.has_value());
  CHECK((wide->fields & kGpuContextWide) != 0);  // no stream: the whole context waited
  sync.has_stream = true;
  CHECK((GpuDetailOf(ActivityKind::kSync, sync, std::nullopt, names)->fields & kGpuContextWide) == 0);
}

}  // namespace tfprof
