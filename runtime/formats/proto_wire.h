// The few protobuf wire-format pieces tfprof writes by hand: messages too large to build as one
// object (a million-node StepStats) are assembled from separately serialized parts instead.
#pragma once

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

inline void AppendVarint(uint64_t value, std::string &out) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// A length-delimited field (wire type 2): a string, bytes, or an embedded message's bytes.
inline void AppendLengthDelimited(uint32_t field, std::string_view bytes, std::string &out) {
  AppendVarint((uint64_t{field} << 3) | 2, out);
  AppendVarint(bytes.size(), out);
  out.append(bytes.data(), bytes.size());
}

// A varint field (wire type 0).
inline void AppendVarintField(uint32_t field, uint64_t value, std::string &out) {
  AppendVarint(uint64_t{field} << 3, out);
  AppendVarint(value, out);
}

}  // namespace tfprof
