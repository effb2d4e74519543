// The args an event carries in a trace file (the Chrome trace's "args" object, a Perfetto
// TrackEvent's debug annotations), under the names tfprof's writers and the PyTorch profiler
// give them: one table of keys, the GpuDetail member each GPU arg fills, and the order in which
// the writers write an activity's args. Readers and writers of both formats use it, so that a key
// is spelled once and what is written is what is read back.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/model/gpu_kinds.h"
#include "runtime/model/gpu_names.h"
#include "runtime/model/trace.h"

namespace tfprof {

// Only add at the end: readers switch on these.
enum class EventArg : uint8_t {
  kOther,  // none of the keys below: a counter's series, a sort index, ...
  kStep,
  kDevice,
  kStream,
  kContext,
  kCorrelation,
  kExternalId,
  kCbid,
  kRegisters,
  kStaticShared,
  kDynamicShared,
  kGrid,
  kBlock,
  kGraphId,
  kBytes,
  kKind,
  kCopyKind,
  kDstDevice,
  kValue,
  kThread,
  kEndThread,
  kOp,
  kIncomplete,
  kTfprof,  // Perfetto: the trace-info dict tfprof's writer attaches to its first event
  kName,    // metadata events: the process or thread name
  kLabels,  // process_labels metadata
  kSharedMemory,  // written (static + dynamic), not read back: the two parts are
  kBandwidth,     // written for people ("memory bandwidth (GB/s)"), not read back
  kSrcDevice,     // written for people: a peer copy's source is its row's device
};

struct EventArgKey {
  EventArg arg;
  std::string_view key;
};

// In EventArg's order, so that KeyOf() is an index.
inline constexpr EventArgKey kEventArgKeys[] = {
    {EventArg::kOther, ""},
    {EventArg::kStep, "step"},
    {EventArg::kDevice, "device"},
    {EventArg::kStream, "stream"},
    {EventArg::kContext, "context"},
    {EventArg::kCorrelation, "correlation"},
    {EventArg::kExternalId, "External id"},  // Kineto's spelling
    {EventArg::kCbid, "cbid"},
    {EventArg::kRegisters, "registers per thread"},
    {EventArg::kStaticShared, "static shared memory"},
    {EventArg::kDynamicShared, "dynamic shared memory"},
    {EventArg::kGrid, "grid"},
    {EventArg::kBlock, "block"},
    {EventArg::kGraphId, "graph id"},
    {EventArg::kBytes, "bytes"},
    {EventArg::kKind, "kind"},
    {EventArg::kCopyKind, "copy kind"},
    {EventArg::kDstDevice, "dst device"},
    {EventArg::kValue, "value"},
    {EventArg::kThread, "thread"},
    {EventArg::kEndThread, "end thread"},
    {EventArg::kOp, "op"},
    {EventArg::kIncomplete, "incomplete"},
    {EventArg::kTfprof, "tfprof"},
    {EventArg::kName, "name"},
    {EventArg::kLabels, "labels"},
    {EventArg::kSharedMemory, "shared memory"},
    {EventArg::kBandwidth, "memory bandwidth (GB/s)"},
    {EventArg::kSrcDevice, "src device"},
};

constexpr bool EventArgKeysInOrder() {
  for (size_t index = 0; index < std::size(kEventArgKeys); ++index) {
    if (static_cast<size_t>(kEventArgKeys[index].arg) != index) return false;
  }
  return true;
}
static_assert(EventArgKeysInOrder(), "kEventArgKeys lists EventArg in its order");

constexpr std::string_view KeyOf(EventArg arg) {
  return kEventArgKeys[static_cast<size_t>(arg)].key;
}

// The arg a key names; kOther for any other key. Called for every arg of every event: a short
// scan that mostly compares sizes.
// EventArgOf() runs for every member of every event's args: one slot of a 64-entry table per
// key, found from its length and its first and last bytes, then one comparison.
constexpr size_t EventArgSlot(std::string_view key) {
  return (key.size() * 6 + static_cast<unsigned char>(key.front()) +
          2 * static_cast<unsigned char>(key.back())) % 64;
}

struct EventArgSlots {
  uint8_t index[64] = {};  // into kEventArgKeys; 0 (kOther's) for an empty slot
  bool collision = false;
};

constexpr EventArgSlots MakeEventArgSlots() {
  EventArgSlots slots;
  for (size_t index = 1; index < std::size(kEventArgKeys); ++index) {
    uint8_t &slot = slots.index[EventArgSlot(kEventArgKeys[index].key)];
    if (slot != 0) slots.collision = true;
    slot = static_cast<uint8_t>(index);
  }
  return slots;
}

inline constexpr EventArgSlots kEventArgSlots = MakeEventArgSlots();
static_assert(!kEventArgSlots.collision,
              "two kEventArgKeys share a slot: change EventArgSlot()'s multipliers");

constexpr EventArg EventArgOf(std::string_view key) {
  if (key.empty()) return EventArg::kOther;
  const EventArgKey &candidate = kEventArgKeys[kEventArgSlots.index[EventArgSlot(key)]];
  return candidate.key == key ? candidate.arg : EventArg::kOther;
}

// Keys tfprof writes from others it reads, never reading them back, where a file's value says
// more: a kernel's "shared memory" (the sum of the static and dynamic parts, which Kineto gives
// alone) and a copy's bandwidth (Kineto's from the nanosecond duration, which its microsecond
// "dur" rounds). A file's value is kept (shared memory: when the parts are not given too) and
// wins over tfprof's.
constexpr bool IsWrittenOnly(EventArg arg) {
  return arg == EventArg::kSharedMemory || arg == EventArg::kBandwidth;
}

// Kept file args (Trace::file_args) hold their members separated by this byte, which JSON text
// can only hold escaped: a writer splits them without parsing the values.
inline constexpr char kFileArgsSeparator = '\x1e';

// `"key":value` members of kept file args, one by one: `visit(member, arg)`, `arg` being the
// table's EventArg for the member's key (kOther for keys not in it).
template <typename Visit>
void ForEachFileArg(std::string_view members, Visit &&visit) {
  while (!members.empty()) {
    const size_t cut = members.find(kFileArgsSeparator);
    const std::string_view member = members.substr(0, cut);
    members = cut == std::string_view::npos ? std::string_view() : members.substr(cut + 1);
    // The key is a JSON string: table keys hold no escapes, so a key with one is kOther.
    EventArg arg = EventArg::kOther;
    const size_t key_end = member.find('"', 1);
    if (key_end != std::string_view::npos && member.substr(1, key_end - 1).find('\\') ==
                                                  std::string_view::npos) {
      arg = EventArgOf(member.substr(1, key_end - 1));
    }
    visit(member, arg);
  }
}

// Which table keys kept file args hold (bit 1 << EventArg): the writers leave those to them.
inline uint64_t FileArgKeys(std::string_view members) {
  uint64_t keys = 0;
  ForEachFileArg(members, [&](std::string_view, EventArg arg) {
    if (arg != EventArg::kOther) keys |= uint64_t{1} << static_cast<unsigned>(arg);
  });
  return keys;
}

// The table keys WriteActivityArgs() writes for an activity of `kind` given every detail (bit
// 1 << EventArg): a GPU event's other args are the file's to keep.
uint64_t ArgsWrittenFor(ActivityKind kind);

// The table keys whose file values an activity of `kind` does not keep (bit 1 << EventArg):
// "step" and "incomplete" for every kind; for kinds with GPU details, also what
// ArgsWrittenFor() writes, but the written-only keys (the file's values win).
inline uint64_t ArgsNotKeptFor(ActivityKind kind) {
  uint64_t skip = uint64_t{1} << static_cast<unsigned>(EventArg::kStep) |
                  uint64_t{1} << static_cast<unsigned>(EventArg::kIncomplete);
  if (DetailIsFileArgs(kind) || kind == ActivityKind::kRange) return skip;
  skip |= ArgsWrittenFor(kind);
  skip &= ~(uint64_t{1} << static_cast<unsigned>(EventArg::kSharedMemory) |
             uint64_t{1} << static_cast<unsigned>(EventArg::kBandwidth));
  return skip & ~uint64_t{1};  // never kOther (bit 0)
}

// ---- GPU details ----

// The integer GpuDetail or GpuWorkShape member an arg fills when read, and the kGpu* bit that
// says it was given (for the members without one, a nonzero value says so). False for the args
// that fill none (grid and block are GpuDetailTriple's).
inline bool SetGpuDetailInteger(EventArg arg, int64_t value, GpuDetail *detail,
                                GpuWorkShape *shape) {
  switch (arg) {
    case EventArg::kCorrelation:
      detail->correlation = static_cast<uint32_t>(value);
      detail->fields |= kGpuHasCorrelation;
      return true;
    case EventArg::kExternalId:
      detail->external_id = static_cast<uint64_t>(value);
      return true;
    case EventArg::kContext:
      detail->context = static_cast<uint32_t>(value);
      detail->fields |= kGpuHasContext;
      return true;
    case EventArg::kCbid:
      detail->callback_id = static_cast<uint32_t>(value);
      detail->fields |= kGpuHasCallbackId;
      return true;
    case EventArg::kRegisters:
      shape->registers = static_cast<int32_t>(value);
      return true;
    case EventArg::kStaticShared:
      shape->static_shared = static_cast<int32_t>(value);
      return true;
    case EventArg::kDynamicShared:
      shape->dynamic_shared = static_cast<int32_t>(value);
      return true;
    case EventArg::kGraphId:
      shape->graph_id = static_cast<uint64_t>(value);
      return true;
    case EventArg::kDstDevice:
      shape->peer_device = static_cast<uint32_t>(value);
      return true;
    case EventArg::kThread:
      detail->thread_id = value;
      return true;
    default:
      return false;
  }
}

// The launch-shape member "grid" or "block" fills (reading all three sets kGpuHasLaunchShape);
// null for other args.
inline int32_t *GpuDetailTriple(EventArg arg, GpuWorkShape *shape) {
  if (arg == EventArg::kGrid) return shape->grid;
  if (arg == EventArg::kBlock) return shape->block;
  return nullptr;
}

// ---- reading ----

// What an event's args say, as either reader decodes them (a Chrome event's "args" object, a
// Perfetto TrackEvent's debug annotations). Views point into the reader's buffers, valid while
// the event is interpreted.
struct DecodedArgs {
  GpuDetail detail;    // the GPU tracer's integer args (SetGpuDetailInteger)
  GpuWorkShape shape;  // and the launch shape; GpuDetailOf() interns it
  bool has_detail = false;
  int64_t device = 0;
  int64_t stream = 0;
  int64_t copy_kind = 0;  // CUPTI's number ("copy kind", or a numeric "kind")
  uint64_t bytes = 0;
  bool has_device = false;
  bool has_stream = false;
  bool has_copy_kind = false;
  bool incomplete = false;
  std::string_view op;         // the host op open at a launch
  std::string_view kind_text;  // "kind" as text: a copy's direction ("HtoD", "Memcpy DtoH")
  // The args as the file had them but "step" and "incomplete", for Trace::file_args (members
  // kFileArgsSeparator-separated).
  std::string_view file_args;
  bool file_args_filtered = false;  // the event's category came first: file_args holds only
                                    // what its kind keeps (KeptArgsOf)

  // Back to no args (the values behind a false has_* are never read, so they stay).
  void Clear() {
    if (has_detail) {
      detail = GpuDetail();
      shape = GpuWorkShape();
    }
    has_detail = has_device = has_stream = has_copy_kind = incomplete = false;
    bytes = 0;
    op = kind_text = file_args = {};
    file_args_filtered = false;
  }
};

// A copy's kind from its name, else from the args' "kind" text, else CUPTI's number; kOther when
// none says.
CopyKind CopyKindOf(std::string_view name, const DecodedArgs &args);

// The GpuDetail an activity of `kind` keeps from its args (`memset_value`: a memset's "value"
// arg), its op interned in `names` and its shape in `shapes`; nullopt for kinds that keep none
// (host spans, steps) and when the args give nothing. A sync without a stream is context-wide.
std::optional<GpuDetail> GpuDetailOf(ActivityKind kind, const DecodedArgs &args,
                                     std::optional<double> memset_value, NameInterner &names,
                                     GpuWorkShapes &shapes);

// ---- writing ----

// An activity's args in the order both writers write them, handed to `out`, which has
//   Int(EventArg, int64_t), Uint(EventArg, uint64_t), Text(EventArg, std::string_view),
//   Triple(EventArg, const int32_t (&)[3]), Double(EventArg, double),
//   Name(EventArg, uint32_t name) (a Trace::names index) and True(EventArg).
// `detail` is the activity's GpuDetail or null; `row` its track. Ranges' own args (their
// threads) are the writers'; the step and "incomplete" end the list.
template <typename Out>
void WriteActivityArgs(const Trace &trace, const Activity &activity, const Track &row,
                       const GpuDetail *detail, Out &out) {
  // GPU work names its device and stream, as Kineto's does. Step annotations on a stream's row
  // do not: Holistic Trace Analysis would count them as work of the stream.
  if (IsGpuWork(activity.kind)) {
    if (row.device >= 0) out.Int(EventArg::kDevice, row.device);
    if (detail != nullptr && (detail->fields & kGpuHasContext) != 0) {
      out.Uint(EventArg::kContext, detail->context);
    }
    out.Int(EventArg::kStream, row.stream >= 0 ? row.stream : row.tid);
  }
  if (activity.kind == ActivityKind::kRuntimeApi && detail != nullptr &&
      (detail->fields & kGpuHasCallbackId) != 0) {
    out.Uint(EventArg::kCbid, detail->callback_id);
  }
  if (activity.kind == ActivityKind::kSync && detail != nullptr) {
    if ((detail->fields & kGpuHasContext) != 0) out.Uint(EventArg::kContext, detail->context);
    if ((detail->fields & kGpuContextWide) == 0 && row.stream >= 0) {
      out.Int(EventArg::kStream, row.stream);
    }
  }
  if (detail != nullptr && activity.kind != ActivityKind::kOverhead) {
    if ((detail->fields & kGpuHasCorrelation) != 0) {
      out.Uint(EventArg::kCorrelation, detail->correlation);
    }
    if (detail->external_id != 0) out.Uint(EventArg::kExternalId, detail->external_id);
  }
  if (activity.kind == ActivityKind::kKernel && detail != nullptr) {
    const GpuWorkShape &shape = trace.work_shapes.Get(detail->shape);
    if ((detail->fields & kGpuHasLaunchShape) != 0) {
      out.Int(EventArg::kRegisters, shape.registers);
      out.Int(EventArg::kSharedMemory, int64_t{shape.static_shared} + shape.dynamic_shared);
      out.Int(EventArg::kStaticShared, shape.static_shared);
      out.Int(EventArg::kDynamicShared, shape.dynamic_shared);
      out.Triple(EventArg::kGrid, shape.grid);
      out.Triple(EventArg::kBlock, shape.block);
    }
    if (shape.graph_id != 0) out.Uint(EventArg::kGraphId, shape.graph_id);
  }
  if (activity.kind == ActivityKind::kMemcpy) {
    out.Uint(EventArg::kBytes, activity.bytes);
    if (detail != nullptr) {
      // Bytes per nanosecond is GB/s.
      const int64_t duration_ns = activity.end_ns - activity.begin_ns;
      out.Double(EventArg::kBandwidth, duration_ns > 0 ? static_cast<double>(activity.bytes) /
                                                             static_cast<double>(duration_ns)
                                                       : 0.0);
    }
    const std::string_view direction =
        detail != nullptr && detail->copy_direction != 0
            ? CopyKindName(static_cast<GpuCopyKind>(detail->copy_direction))
            : CoarseCopyText(activity.copy);
    if (!direction.empty()) out.Text(EventArg::kKind, direction);
    if (detail != nullptr &&
        static_cast<GpuCopyKind>(detail->copy_direction) == GpuCopyKind::kPtoP) {
      out.Int(EventArg::kSrcDevice, row.device);
      out.Uint(EventArg::kDstDevice, trace.work_shapes.Get(detail->shape).peer_device);
    }
  }
  if (activity.kind == ActivityKind::kMemset) {
    out.Uint(EventArg::kBytes, activity.bytes);
    if (detail != nullptr && (detail->fields & kGpuHasMemsetValue) != 0) {
      out.Uint(EventArg::kValue, trace.work_shapes.Get(detail->shape).memset_value);
    }
  }
  if (activity.kind == ActivityKind::kOverhead && detail != nullptr && detail->thread_id != 0) {
    out.Int(EventArg::kThread, detail->thread_id);
  }
  if (IsGpuWork(activity.kind) && detail != nullptr && detail->op < trace.names.size()) {
    out.Name(EventArg::kOp, detail->op);
  }
  if (activity.step != kNoStep) out.Int(EventArg::kStep, activity.step);
  if ((activity.flags & kActivityIncomplete) != 0) out.True(EventArg::kIncomplete);
}

}  // namespace tfprof
