#include "runtime/formats/xplane/xplane_event_stats.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/json_text.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/model/event_args.h"

namespace tfprof::xplane {

namespace {

// "key:value" items separated by spaces, as the GPU tracer writes kernel_details
// ("regs:38 static_shared:0 dynamic_shared:0 grid:160,1,1 block:1024,1,1") and memcpy_details
// ("kind_src:... size:4 dest:1 async:1"): the value of `key`, or empty.
std::string_view DetailItem(std::string_view details, std::string_view key) {
  size_t at = 0;
  while (at < details.size()) {
    while (at < details.size() && details[at] == ' ') ++at;
    size_t end = details.find(' ', at);
    if (end == std::string_view::npos) end = details.size();
    const std::string_view item = details.substr(at, end - at);
    if (item.size() > key.size() && item.substr(0, key.size()) == key && item[key.size()] == ':') {
      return item.substr(key.size() + 1);
    }
    at = end;
  }
  return {};
}

// "x,y,z" into three int32s (values that do not fit, as TensorFlow 2.4's host-side details have,
// leave them 0); false when the item is missing or malformed.
bool DetailDims(std::string_view details, std::string_view key, int32_t dims[3]) {
  std::string_view text = DetailItem(details, key);
  int32_t parsed[3] = {0, 0, 0};
  for (int axis = 0; axis < 3; ++axis) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    if (!absl::SimpleAtoi(ToAbsl(part), &parsed[axis])) return false;
    if (comma == std::string_view::npos) {
      if (axis != 2) return false;
      break;
    }
    text.remove_prefix(comma + 1);
  }
  std::copy(parsed, parsed + 3, dims);
  return true;
}


}  // namespace

int64_t DetailNumber(std::string_view details, std::string_view key) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(ToAbsl(DetailItem(details, key)), &value)) return 0;
  return value;
}

StatKind StatKindOf(std::string_view name) {
  static const auto *const kinds = new absl::flat_hash_map<std::string_view, StatKind>{
      {"correlation_id", StatKind::kCorrelationId},
      {"kernel_details", StatKind::kKernelDetails},
      {"memcpy_details", StatKind::kMemcpyDetails},
      {"Memset_details", StatKind::kMemsetDetails},
      {"memset_details", StatKind::kMemsetDetails},
      {"memalloc_details", StatKind::kMemoryDetails},
      {"MemFree_details", StatKind::kMemoryDetails},
      {"MemoryResidency_details", StatKind::kMemoryDetails},
      {"context_id", StatKind::kContextId},
      {"device_id", StatKind::kDeviceId},
      {"_r", StatKind::kRoot},
      {"step_num", StatKind::kStepNum},
      {"iter_num", StatKind::kIterNum},
      {"group_id", StatKind::kGroupId},
      {"tf_op", StatKind::kTfOp},
      {"profile_start_time", StatKind::kProfileStartTime},
      {"_p", StatKind::kProducerId},
      {"_c", StatKind::kConsumerId},
      {"tf_function_call", StatKind::kFunctionCall},
      {"bytes_allocated", StatKind::kBytesAllocated},
      {"allocator_name", StatKind::kAllocatorName},
  };
  const auto found = kinds->find(name);
  return found == kinds->end() ? StatKind::kOther : found->second;
}

void AddStat(const StatName &name, const StatValue &value, EventStats *stats) {
  switch (name.kind) {
    case StatKind::kCorrelationId:
      if (value.is_number) stats->correlation = static_cast<uint64_t>(value.number);
      break;
    case StatKind::kKernelDetails:
      if (value.is_text) stats->kernel_details = value.text;
      break;
    case StatKind::kMemcpyDetails:
      if (value.is_text) stats->memcpy_details = value.text;
      break;
    case StatKind::kMemsetDetails:
      if (value.is_text) stats->memset_details = value.text;
      break;
    case StatKind::kMemoryDetails:
      stats->memory = true;
      break;
    case StatKind::kContextId:
      // "$$5" in the GPU tracer's files, a number in others.
      if (value.is_number) {
        stats->context = value.number;
      } else if (int64_t context = 0; value.is_text && value.text.starts_with("$$") &&
                                      absl::SimpleAtoi(ToAbsl(value.text.substr(2)), &context)) {
        stats->context = context;
      }
      break;
    case StatKind::kRoot:
      stats->root = true;
      break;
    case StatKind::kStepNum:
      if (value.is_number) stats->step_num = value.number;
      break;
    case StatKind::kIterNum:
      if (value.is_number) stats->iter_num = value.number;
      break;
    case StatKind::kGroupId:
      if (value.is_number) stats->group_id = value.number;
      break;
    case StatKind::kTfOp:
      if (value.is_text) stats->tf_op = value.text;
      break;
    case StatKind::kProducerId:
      if (value.is_number) stats->producer = value.number;
      break;
    case StatKind::kConsumerId:
      if (value.is_number) stats->consumer = value.number;
      break;
    case StatKind::kFunctionCall:
      stats->function_call = true;
      break;
    case StatKind::kBytesAllocated:
      if (value.is_number) stats->bytes_allocated = value.number;
      break;
    case StatKind::kAllocatorName:
      if (value.is_text) stats->allocator_name = value.text;
      break;
    default:
      break;
  }
}

bool ReadLaunchShape(std::string_view kernel_details, GpuWorkShape *shape) {
  if (kernel_details.empty() || !DetailDims(kernel_details, "grid", shape->grid) ||
      !DetailDims(kernel_details, "block", shape->block)) {
    return false;
  }
  shape->registers = static_cast<int32_t>(DetailNumber(kernel_details, "regs"));
  // "shm" before the static/dynamic split (TensorFlow 2.4).
  const std::string_view shared = DetailItem(kernel_details, "static_shared");
  shape->static_shared =
      static_cast<int32_t>(DetailNumber(kernel_details, shared.empty() ? "shm" : "static_shared"));
  shape->dynamic_shared = static_cast<int32_t>(DetailNumber(kernel_details, "dynamic_shared"));
  return true;
}

bool HeldByModel(StatKind kind) {
  switch (kind) {
    case StatKind::kCorrelationId:
    case StatKind::kRoot:
    case StatKind::kStepNum:
    case StatKind::kTfOp:
    case StatKind::kGroupId:  // XProf's grouping, which it does again on any XSpace without one
      return true;
    default:
      return false;
  }
}

void AppendStatMember(std::string_view name, const StatValue &value, std::string *members) {
  if (value.type == StatValue::Type::kNone || value.type == StatValue::Type::kBytes) return;
  if (!members->empty()) members->push_back(kFileArgsSeparator);
  AppendJsonString(*members, name);
  members->push_back(':');
  switch (value.type) {
    case StatValue::Type::kInt:
      absl::StrAppend(members, value.number);
      break;
    case StatValue::Type::kUint:
      absl::StrAppend(members, static_cast<uint64_t>(value.number));
      break;
    case StatValue::Type::kDouble: {
      char text[40];
      const size_t size = FormatDouble(value.real, text);
      const std::string_view written(text, size);
      members->append(written);  // NaN and the infinities come quoted, as strings
      if (std::isfinite(value.real) && written.find_first_of(".eE") == std::string_view::npos) {
        members->append(".0");
      }
      break;
    }
    default:
      AppendJsonString(*members, value.text);
      break;
  }
}

}  // namespace tfprof::xplane
