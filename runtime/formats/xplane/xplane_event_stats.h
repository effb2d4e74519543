// What an XPlane event's stats say, by the names its plane's stat metadata gives them: the
// vocabulary of TensorFlow's and JAX's profilers (correlation_id, kernel_details, step_num, _r,
// ...) that the XPlane reader (xplane_reader.cc) turns into the trace model.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/model/trace.h"

namespace tfprof::xplane {

// The stats the reader uses, by their names in stat metadata.
enum class StatKind : uint8_t {
  kOther,
  kCorrelationId,
  kKernelDetails,
  kMemcpyDetails,
  kMemsetDetails,
  kMemoryDetails,  // memalloc_details, MemFree_details, ...: not work on a stream
  kContextId,
  kDeviceId,
  kRoot,  // _r
  kStepNum,
  kIterNum,
  kGroupId,
  kTfOp,
  kProfileStartTime,
  kProducerId,  // _p: this event starts work that events with the same _c do
  kConsumerId,  // _c
  kFunctionCall,  // tf_function_call: a tf.function call from Python that returned
  kBytesAllocated,  // MemoryAllocation/MemoryDeallocation: the allocator's bytes in use after it
  kAllocatorName,
};

StatKind StatKindOf(std::string_view name);

// One XStat's value: a number, or text (a str_value, or a ref_value's stat metadata name).
struct StatValue {
  bool is_text = false;
  bool is_number = false;
  int64_t number = 0;  // doubles truncated; uint64s as their bits
  std::string_view text;
  // Which kind of XStat value it was, for the stats kept as the event's args.
  enum class Type : uint8_t { kNone, kInt, kUint, kDouble, kText, kBytes } type = Type::kNone;
  double real = 0;  // a double_value as it was
};

struct StatName {
  std::string_view name;
  StatKind kind = StatKind::kOther;
};

// The stats of one event (its own, after its metadata's) that the reader uses.
struct EventStats {
  std::optional<uint64_t> correlation;
  std::optional<int64_t> context;
  std::optional<int64_t> step_num;
  std::optional<int64_t> iter_num;
  std::optional<int64_t> group_id;
  std::string_view kernel_details;
  std::string_view memcpy_details;
  std::string_view memset_details;
  std::string_view tf_op;
  std::optional<int64_t> producer;
  std::optional<int64_t> consumer;
  std::optional<int64_t> bytes_allocated;  // an allocator's bytes in use (memory profile events)
  std::string_view allocator_name;
  bool memory = false;  // an allocation or free on the device, not work
  bool root = false;
  bool function_call = false;
};

// Adds one stat to an event's: the kinds the reader uses, the rest ignored.
void AddStat(const StatName &name, const StatValue &value, EventStats *stats);

// Whether the trace model holds a stat of this kind in its own fields (a GPU detail's
// correlation id, a step marker's _r and step_num), so that it is not kept again as an arg.
// tf_op is kept as an arg unless it names a GPU op. The details texts (kernel_details,
// memcpy_details, ...) and context_id are kept as they were: the model holds only part of them
// (a copy's size, not its destination; a kernel's shape, not its occupancy), and the XPlane
// writer writes the file's own text where there is one.
// group_id is XProf's own grouping: an XSpace that has one is never grouped again, so a written
// one would stop XProf from grouping by the steps tfprof writes.
bool HeldByModel(StatKind kind);

// Appends the stat as a file arg member (`"name":value`, runtime/model/event_args.h's
// separator between members): numbers as JSON numbers (a double always with a point or an
// exponent, so that it reads back as one), text as a JSON string. Bytes values are not kept.
void AppendStatMember(std::string_view name, const StatValue &value, std::string *members);

// The launch shape of a kernel_details stat ("regs:38 static_shared:0 dynamic_shared:0
// grid:160,1,1 block:1024,1,1"; "shm:" before TensorFlow 2.5) into `shape`; false when it has
// no grid and block (then `shape` is not to be kept).
bool ReadLaunchShape(std::string_view kernel_details, GpuWorkShape *shape);

// The number of item `key` in a details stat ("size:4" of memcpy_details), 0 when none.
int64_t DetailNumber(std::string_view details, std::string_view key);

}  // namespace tfprof::xplane
