#include "runtime/formats/perfetto/perfetto_annotations.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/formats/perfetto/perfetto_fields.h"

namespace tfprof {

using namespace perfetto_fields;  // NOLINT: the field numbers, by message

namespace {

constexpr int kMaxArgDepth = 32;  // nested dicts and arrays read of the trace info

}  // namespace

Arg ArgOf(std::string_view name) {
  static const auto *const table = [] {
    auto *keys = new absl::flat_hash_map<std::string, Arg>;
    for (const EventArgKey &entry : kEventArgKeys) {
      if (entry.arg != Arg::kOther && entry.arg <= Arg::kTfprof) {
        keys->emplace(std::string(entry.key), entry.arg);
      }
    }
    return keys;
  }();
  auto found = table->find(ToAbsl(name));
  return found == table->end() ? Arg::kOther : found->second;
}

// One annotation's value, as the hot path reads it (arrays: their first integers only). Only the

// The value as an integer, when it is a number (or a bool).
bool AsInt(const ArgValue &value, int64_t *out) {
  switch (value.type) {
    case ArgValue::kInt:
      *out = value.i;
      return true;
    case ArgValue::kUint:
    case ArgValue::kBool:
      if (value.u > static_cast<uint64_t>(INT64_MAX)) return false;
      *out = static_cast<int64_t>(value.u);
      return true;
    case ArgValue::kDouble:
      if (!std::isfinite(value.d) || std::fabs(value.d) >= 9.2e18) return false;
      *out = static_cast<int64_t>(value.d);
      return true;
    default:
      return false;
  }
}

bool AsDouble(const ArgValue &value, double *out) {
  switch (value.type) {
    case ArgValue::kInt: *out = static_cast<double>(value.i); return true;
    case ArgValue::kUint:
    case ArgValue::kBool: *out = static_cast<double>(value.u); return true;
    case ArgValue::kDouble: *out = value.d; return true;
    default: return false;
  }
}

const ArgNode *ArgNode::Find(std::string_view key) const {
  for (const ArgNode &entry : entries) {
    if (entry.name == key) return &entry;
  }
  return nullptr;
}

std::optional<int64_t> ArgNode::Int() const {
  ArgValue value;
  value.type = type;
  value.i = i;
  value.u = u;
  value.d = d;
  int64_t out = 0;
  if (AsInt(value, &out)) return out;
  return std::nullopt;
}

std::optional<uint64_t> ArgNode::Uint() const {
  if (type == ArgValue::kUint) return u;
  std::optional<int64_t> value = Int();
  if (value && *value >= 0) return static_cast<uint64_t>(*value);
  return std::nullopt;
}

uint32_t AnnotationTables::NameFor(std::string_view text) {
  const uint32_t index = names_.Intern(text);
  if (index >= keys_.size()) keys_.resize(index + 1, Arg::kOther);
  keys_[index] = ArgOf(text);
  return index;
}

// The shape tfprof writes for numbers (and most writers do): the interned name, then one value
// of wire type 0 (an integer or a bool), as two fields whose tags are a byte each. An interned
// string's tag (field 17) takes two bytes: those annotations take the walk.
// False, with `*key` and `*value` as they were, for anything else: ScanArg() then reads it
// field by field, as it reads any annotation.
bool AnnotationTables::ScanPlainArg(std::string_view bytes, const SequenceState &sequence,
                                    Arg *key, ArgValue *value) const {
  constexpr char kNameIidTag = static_cast<char>(annotation::kNameIid << 3);
  if (bytes.size() < 4 || bytes[0] != kNameIidTag) return false;
  size_t at = 1;
  uint64_t name_iid = 0;
  if (!ReadWireVarintFast(bytes, &at, &name_iid) || at >= bytes.size()) return false;
  const auto tag = static_cast<unsigned char>(bytes[at++]);
  if (tag >= 0x80 || (tag & 7) != 0) return false;  // a longer tag, or not a varint
  WireField field;
  field.number = tag >> 3;
  field.wire_type = 0;
  if (!ReadWireVarintFast(bytes, &at, &field.varint) || at != bytes.size()) return false;
  if (!ReadScalar(field, sequence, value)) return false;  // a field that is no scalar value
  *key = KeyOfNameIid(sequence, name_iid);
  return true;
}

// One annotation of the hot path: its name and value. False when its bytes are damaged.
bool AnnotationTables::ScanArg(std::string_view bytes, const SequenceState &sequence, Arg *key,
                               ArgValue *value) const {
  if (ScanPlainArg(bytes, sequence, key, value)) return true;
  size_t at = 0;
  WireField field;
  *key = Arg::kOther;
  while (NextWireField(bytes, &at, &field)) {
    switch (field.number) {
      case annotation::kNameIid:
        if (field.wire_type == 0) *key = KeyOfNameIid(sequence, field.varint);
        break;
      case annotation::kName:
        if (field.wire_type == 2) *key = ArgOf(field.payload);
        break;
      case annotation::kBoolValue:
      case annotation::kUintValue:
      case annotation::kPointerValue:
      case annotation::kIntValue:
      case annotation::kDoubleValue:
      case annotation::kStringValue:
      case annotation::kLegacyJsonValue:
      case annotation::kStringValueIid:
        ReadScalar(field, sequence, value);
        break;
      case annotation::kDictEntries:
        value->is_dict = true;
        break;
      case annotation::kArrayValues:
        if (field.wire_type == 2) {
          value->is_array = true;
          ArgValue item;
          int64_t number = 0;
          if (!ScanArgItem(field.payload, sequence, &item)) return false;
          if (value->item_count < 3 && AsInt(item, &number)) {
            value->items[value->item_count] =
                static_cast<int32_t>(std::clamp<int64_t>(number, INT32_MIN, INT32_MAX));
          }
          ++value->item_count;
        }
        break;
      default:
        break;
    }
  }
  return at == bytes.size();
}

// An array item's number (nested arrays and dicts are not read on the hot path).
bool AnnotationTables::ScanArgItem(std::string_view bytes, const SequenceState &sequence,
                                   ArgValue *value) const {
  size_t at = 0;
  WireField field;
  while (NextWireField(bytes, &at, &field)) ReadScalar(field, sequence, value);
  return at == bytes.size();
}

// A DebugAnnotation's value field (bool, int, uint, pointer, double, string, legacy JSON text
// or interned string) into `value`; false (and `value` as it was) for any other field or a
// wire type that does not fit. Text points into the file's bytes or the string table.
bool AnnotationTables::ReadScalar(const WireField &field, const SequenceState &sequence,
                                  ArgValue *value) const {
  switch (field.number) {
    case annotation::kBoolValue:
      if (field.wire_type != 0) return false;
      value->type = ArgValue::kBool;
      value->u = field.varint != 0 ? 1 : 0;
      return true;
    case annotation::kUintValue:
    case annotation::kPointerValue:
      if (field.wire_type != 0) return false;
      value->type = ArgValue::kUint;
      value->u = field.varint;
      return true;
    case annotation::kIntValue:
      if (field.wire_type != 0) return false;
      value->type = ArgValue::kInt;
      value->i = static_cast<int64_t>(field.varint);
      return true;
    case annotation::kDoubleValue:
      if (field.wire_type != 1) return false;
      value->type = ArgValue::kDouble;
      value->d = std::bit_cast<double>(WireFixed64(field.payload));
      return true;
    case annotation::kStringValue:
    case annotation::kLegacyJsonValue:
      if (field.wire_type != 2) return false;
      value->type = ArgValue::kText;
      value->text = field.payload;
      return true;
    case annotation::kStringValueIid: {
      if (field.wire_type != 0) return false;
      const uint32_t text = sequence.arg_strings.Find(field.varint);
      value->type = ArgValue::kText;
      value->text = text == kAbsent ? std::string_view() : strings_.Get(text);
      return true;
    }
    default:
      return false;
  }
}

namespace {

// A numeric arg's value into `member`; `has` says whether the arg was a number.
void SetNumber(bool numeric, int64_t number, int64_t *member, bool *has) {
  *has = numeric;
  if (numeric) *member = number;
}

}  // namespace

// What an annotation means, as the Chrome reader reads the same arg.
void ApplyArg(Arg key, const ArgValue &value, std::string_view bytes, EventArgs *args) {
  int64_t number = 0;
  const bool numeric = AsInt(value, &number);
  GpuDetail &detail = args->detail;
  // The GPU tracer's integer args fill their GpuDetail member, as the Chrome reader's do.
  if (numeric && SetGpuDetailInteger(key, number, &detail, &args->shape)) args->has_detail = true;
  switch (key) {
    case Arg::kOther:
      break;
    case Arg::kStep:
      SetNumber(numeric, number, &args->extra.step, &args->extra.has_step);
      break;
    case Arg::kDevice:
      SetNumber(numeric, number, &args->device, &args->has_device);
      break;
    case Arg::kStream:
      SetNumber(numeric, number, &args->stream, &args->has_stream);
      break;
    case Arg::kCopyKind:
      SetNumber(numeric, number, &args->copy_kind, &args->has_copy_kind);
      break;
    case Arg::kKind:
      if (value.type == ArgValue::kText) {
        args->kind_text = value.text;
      } else if (numeric) {
        args->has_copy_kind = true;
        args->copy_kind = number;
      }
      break;
    case Arg::kBytes:
      if (value.type == ArgValue::kUint) {
        args->bytes = value.u;
      } else if (numeric && number >= 0) {
        args->bytes = static_cast<uint64_t>(number);
      }
      break;
    case Arg::kIncomplete:
      args->incomplete = numeric && number != 0;
      break;
    case Arg::kOp:
      if (value.type == ArgValue::kText) args->op = value.text;
      break;
    case Arg::kValue:
      args->has_value = AsDouble(value, &args->value);
      break;
    case Arg::kThread:
      SetNumber(numeric, number, &args->extra.thread, &args->extra.has_thread);
      break;
    case Arg::kEndThread:
      SetNumber(numeric, number, &args->extra.end_thread, &args->extra.has_end_thread);
      break;
    case Arg::kGrid:
    case Arg::kBlock:
      if (value.is_array && value.item_count == 3) {
        std::copy(value.items, value.items + 3, GpuDetailTriple(key, &args->shape));
        detail.fields |= kGpuHasLaunchShape;
        args->has_detail = true;
      }
      break;
    case Arg::kTfprof:
      if (value.is_dict) {
        args->tfprof = bytes;
        args->has_tfprof = true;
      }
      break;
    default:  // the GPU details above, and keys Perfetto traces do not carry
      break;
  }
}

// A TrackEvent at `ns` (`timed`: the packet had a timestamp). False when its bytes are damaged
bool AnnotationTables::ReadArgNode(std::string_view bytes, const SequenceState &sequence, int depth,
                                   ArgNode *node) const {
  size_t at = 0;
  WireField field;
  while (NextWireField(bytes, &at, &field)) {
    switch (field.number) {
      case annotation::kNameIid:
        if (field.wire_type == 0) {
          const uint32_t name = sequence.arg_names.Find(field.varint);
          if (name != kAbsent) node->name = names_.Get(name);
        }
        break;
      case annotation::kName:
        if (field.wire_type == 2) node->name.assign(field.payload);
        break;
      case annotation::kBoolValue:
      case annotation::kUintValue:
      case annotation::kPointerValue:
      case annotation::kIntValue:
      case annotation::kDoubleValue:
      case annotation::kStringValue:
      case annotation::kLegacyJsonValue:
      case annotation::kStringValueIid: {
        ArgValue value{};
        if (!ReadScalar(field, sequence, &value)) break;
        node->type = value.type;
        node->i = value.i;
        node->u = value.u;
        node->d = value.d;
        node->text.assign(value.text);
        break;
      }
      case annotation::kDictEntries:
      case annotation::kArrayValues:
        if (field.wire_type != 2) break;
        if (field.number == annotation::kDictEntries) {
          node->is_dict = true;
        } else {
          node->is_array = true;
        }
        if (depth < kMaxArgDepth) {
          ArgNode child;
          if (!ReadArgNode(field.payload, sequence, depth + 1, &child)) return false;
          node->entries.push_back(std::move(child));
        }
        break;
      default:
        break;
    }
  }
  return at == bytes.size();
}

// The "tfprof" dict of a "tfprof trace info" instant; the last one read is the one that counts.

}  // namespace tfprof
