#include "runtime/model/event_args.h"

#include <algorithm>
#include <array>

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

namespace {

// Collects the keys WriteActivityArgs() hands over.
struct KeyCollector {
  uint64_t keys = 0;
  void Note(EventArg arg) { keys |= uint64_t{1} << static_cast<unsigned>(arg); }
  void Int(EventArg arg, int64_t) { Note(arg); }
  void Uint(EventArg arg, uint64_t) { Note(arg); }
  void Text(EventArg arg, std::string_view) { Note(arg); }
  void Triple(EventArg arg, const int32_t (&)[3]) { Note(arg); }
  void Double(EventArg arg, double) { Note(arg); }
  void Name(EventArg arg, uint32_t) { Note(arg); }
  void True(EventArg arg) { Note(arg); }
};

uint64_t CollectArgsWrittenFor(ActivityKind kind) {
  // Every detail present: the most the writer says of the kind.
  Trace trace;
  trace.names.Intern("op");
  Track row;
  row.device = 0;
  row.stream = -1;  // a sync on a host row names no stream: the file's "stream" is kept
  GpuDetail detail;
  detail.external_id = 1;
  GpuWorkShape shape;
  shape.graph_id = 1;
  detail.shape = trace.work_shapes.Intern(shape);
  detail.thread_id = 1;
  detail.op = 0;
  detail.copy_direction = static_cast<uint8_t>(GpuCopyKind::kPtoP);
  detail.fields = kGpuHasCorrelation | kGpuHasContext | kGpuHasLaunchShape | kGpuHasMemsetValue |
                  kGpuHasCallbackId;
  Activity activity;
  activity.kind = kind;
  activity.step = 0;
  activity.flags = kActivityIncomplete;
  KeyCollector keys;
  WriteActivityArgs(trace, activity, row, &detail, keys);
  return keys.keys;
}

}  // namespace

uint64_t ArgsWrittenFor(ActivityKind kind) {
  static const auto table = [] {
    std::array<uint64_t, static_cast<size_t>(ActivityKind::kOverhead) + 1> keys{};
    for (size_t index = 0; index < keys.size(); ++index) {
      keys[index] = CollectArgsWrittenFor(static_cast<ActivityKind>(index));
    }
    return keys;
  }();
  const auto index = static_cast<size_t>(kind);
  return index < table.size() ? table[index] : 0;
}

std::optional<GpuDetail> GpuDetailOf(ActivityKind kind, const DecodedArgs &args,
                                     std::optional<double> memset_value, NameInterner &names,
                                     GpuWorkShapes &shapes) {
  if (!(IsGpuWork(kind) || kind == ActivityKind::kRuntimeApi || kind == ActivityKind::kSync ||
        kind == ActivityKind::kOverhead)) {
    return std::nullopt;
  }
  GpuDetail detail = args.detail;
  GpuWorkShape shape = args.shape;
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
    shape.memset_value = static_cast<uint32_t>(
        static_cast<int64_t>(std::clamp(*memset_value, -9.2e18, 9.2e18)));
    detail.fields |= kGpuHasMemsetValue;
    any = true;
  }
  if (!any) return std::nullopt;
  detail.shape = shapes.Intern(shape);
  if (kind == ActivityKind::kSync && !args.has_stream) detail.fields |= kGpuContextWide;
  return detail;
}

}  // namespace tfprof
