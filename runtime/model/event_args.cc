#include "runtime/model/event_args.h"

#include <algorithm>

#include "runtime/model/copy_kinds.h"

namespace tfprof {

CopyKind CopyKindOf(std::string_view name, const DecodedArgs &args) {
  CopyKind copy = CopyKindFromName(name);
  if (copy == CopyKind::kNone) copy = CopyKindFromName(args.kind_text);
  if (copy == CopyKind::kNone) {
    copy = args.has_copy_kind ? CopyKindFromCupti(args.copy_kind) : CopyKind::kOther;
  }
  return copy;
}

std::optional<GpuDetail> GpuDetailOf(ActivityKind kind, const DecodedArgs &args,
                                     std::optional<double> memset_value, NameInterner &names) {
  if (!(IsGpuWork(kind) || kind == ActivityKind::kRuntimeApi || kind == ActivityKind::kSync ||
        kind == ActivityKind::kOverhead)) {
    return std::nullopt;
  }
  GpuDetail detail = args.detail;
  bool any = args.has_detail;
  if (!args.op.empty()) {
    detail.op = names.Intern(args.op);
    any = true;
  }
  if (kind == ActivityKind::kMemcpy) {
    detail.copy_direction = CopyDirectionFromText(args.kind_text);
    any = any || detail.copy_direction != 0;
  }
  if (kind == ActivityKind::kMemset && memset_value) {
    // Clamped first: a damaged file's value must not overflow the conversion.
    detail.memset_value = static_cast<uint32_t>(
        static_cast<int64_t>(std::clamp(*memset_value, -9.2e18, 9.2e18)));
    detail.fields |= kGpuHasMemsetValue;
    any = true;
  }
  if (!any) return std::nullopt;
  if (kind == ActivityKind::kSync && !args.has_stream) detail.fields |= kGpuContextWide;
  return detail;
}

}  // namespace tfprof
