// CRC-32C (Castagnoli), as TFRecord framing and TensorBoard event files use it, and the masking
// TensorFlow applies to stored CRCs.
#pragma once

#include <cstdint>
#include <string_view>

namespace tfprof {

// The CRC-32C of `data`, continuing from `crc` (the CRC of the bytes before it; 0 to start).
// With the CPU's CRC32 instruction where it has one (x86-64 with SSE 4.2): TFRecord framing
// checksums every byte written, and tables cost ~6x more a byte.
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

// The same from tables, on any CPU (what Crc32c uses without the instruction; tests compare).
uint32_t Crc32cPortable(std::string_view data, uint32_t crc = 0);

// TFRecord stores CRCs rotated and offset ("masked"), because a CRC of data that itself holds
// CRCs is weak.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace tfprof
