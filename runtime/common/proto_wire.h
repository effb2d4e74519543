// The few protobuf wire-format pieces tfprof writes and reads by hand: messages too large to
// build or parse as one object (a million-node StepStats) are assembled from separately
// serialized parts, and read back one part at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tfprof {

// Field numbers of the TensorFlow messages tfprof assembles by hand (step_stats.proto,
// run_metadata.proto): RunMetadata.step_stats, StepStats.dev_stats, DeviceStepStats's fields,
// and a map entry's key and value.
inline constexpr uint32_t kRunMetadataStepStats = 1;
inline constexpr uint32_t kStepStatsDevStats = 1;
inline constexpr uint32_t kDeviceStepStatsDevice = 1;
inline constexpr uint32_t kDeviceStepStatsNodeStats = 2;
inline constexpr uint32_t kDeviceStepStatsThreadNames = 3;
inline constexpr uint32_t kMapEntryKey = 1;
inline constexpr uint32_t kMapEntryValue = 2;

// Encodes `value` as a varint at `out` (room for 10 bytes) and returns the end.
inline char *EncodeVarint(uint64_t value, char *out) {
  while (value >= 0x80) {
    *out++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<char>(value);
  return out;
}

// The bytes EncodeVarint() writes for `value`: what a length prefix costs, for messages sized
// before they are written.
inline size_t VarintSize(uint64_t value) {
  size_t bytes = 1;
  for (; value >= 0x80; value >>= 7) ++bytes;
  return bytes;
}

// Encoded on the stack and appended in one call: a byte-at-a-time push_back costs several times
// more, and the Perfetto writer appends a few varints per event.
inline void AppendVarint(uint64_t value, std::string &out) {
  char bytes[10];
  out.append(bytes, static_cast<size_t>(EncodeVarint(value, bytes) - bytes));
}

// A length-delimited field (wire type 2): a string, bytes, or an embedded message's bytes.
inline void AppendLengthDelimited(uint32_t field, std::string_view bytes, std::string &out) {
  char head[20];
  char *end = EncodeVarint((uint64_t{field} << 3) | 2, head);
  end = EncodeVarint(bytes.size(), end);
  out.append(head, static_cast<size_t>(end - head));
  out.append(bytes.data(), bytes.size());
}

// A varint field (wire type 0).
inline void AppendVarintField(uint32_t field, uint64_t value, std::string &out) {
  char bytes[20];
  char *end = EncodeVarint(uint64_t{field} << 3, bytes);
  end = EncodeVarint(value, end);
  out.append(bytes, static_cast<size_t>(end - bytes));
}

// One field of a serialized message, as NextWireField() reads it.
struct WireField {
  uint32_t number = 0;
  int wire_type = 0;
  uint64_t varint = 0;       // wire type 0
  std::string_view payload;  // wire type 2: the bytes; 1 and 5: the fixed-width value's bytes
};

inline bool ReadWireVarint(std::string_view data, size_t *at, uint64_t *value) {
  *value = 0;
  for (int shift = 0; shift < 64 && *at < data.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(data[(*at)++]);
    *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// ReadWireVarint with a fast path for one-byte varints, always inlined: the hot messages (a
// Perfetto track event) are a few dozen small fields each, and a call per field cost more than
// the rest.
[[gnu::always_inline]] inline bool ReadWireVarintFast(std::string_view data, size_t *at,
                                                      uint64_t *value) {
  if (*at < data.size() && static_cast<unsigned char>(data[*at]) < 0x80) {
    *value = static_cast<unsigned char>(data[(*at)++]);
    return true;
  }
  return ReadWireVarint(data, at, value);
}

// A fixed64 field's value (wire type 1; `bytes` is its payload: 8 bytes, little-endian).
inline uint64_t WireFixed64(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t index = bytes.size(); index-- > 0;) {
    value = value << 8 | static_cast<unsigned char>(bytes[index]);
  }
  return value;
}

// Reads the field at `*at` of `data` and moves past it. False at the end of `data` or on damage
// (`*at` then is where the bad field starts, and stays below data.size()). Always inlined, for
// the same reason as ReadWireVarintFast.
[[gnu::always_inline]] inline bool NextWireField(std::string_view data, size_t *at,
                                                 WireField *field) {
  if (*at >= data.size()) return false;
  const size_t start = *at;
  uint64_t tag = 0;
  if (!ReadWireVarintFast(data, at, &tag) || (tag >> 3) == 0 || (tag >> 3) > 536870911) {
    *at = start;
    return false;
  }
  field->number = static_cast<uint32_t>(tag >> 3);
  field->wire_type = static_cast<int>(tag & 7);
  switch (field->wire_type) {
    case 0:
      if (ReadWireVarintFast(data, at, &field->varint)) return true;
      break;
    case 1:
    case 5: {
      const size_t width = field->wire_type == 1 ? 8 : 4;
      if (data.size() - *at < width) break;
      field->payload = std::string_view(data.data() + *at, width);
      *at += width;
      return true;
    }
    case 2: {
      uint64_t length = 0;
      if (!ReadWireVarintFast(data, at, &length) || length > data.size() - *at) break;
      field->payload = std::string_view(data.data() + *at, static_cast<size_t>(length));
      *at += static_cast<size_t>(length);
      return true;
    }
    default:
      break;
  }
  *at = start;
  return false;
}

}  // namespace tfprof
