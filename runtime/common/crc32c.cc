#include "runtime/common/crc32c.h"

#include <array>
#include <cstring>

namespace tfprof {

namespace {

// Slicing-by-4 tables for the reflected polynomial 0x82F63B78, built at compile time.
constexpr std::array<std::array<uint32_t, 256>, 4> MakeTables() {
  std::array<std::array<uint32_t, 256>, 4> tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
    tables[0][byte] = crc;
  }
  for (uint32_t byte = 0; byte < 256; ++byte) {
    for (int table = 1; table < 4; ++table) {
      const uint32_t previous = tables[table - 1][byte];
      tables[table][byte] = (previous >> 8) ^ tables[0][previous & 0xff];
    }
  }
  return tables;
}

constexpr auto kTables = MakeTables();

}  // namespace

uint32_t Crc32cPortable(std::string_view data, uint32_t crc) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  size_t size = data.size();
  crc = ~crc;
  while (size >= 4) {
    crc ^= uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 |
           uint32_t{bytes[3]} << 24;
    crc = kTables[3][crc & 0xff] ^ kTables[2][(crc >> 8) & 0xff] ^ kTables[1][(crc >> 16) & 0xff] ^
          kTables[0][crc >> 24];
    bytes += 4;
    size -= 4;
  }
  while (size-- > 0) crc = (crc >> 8) ^ kTables[0][(crc ^ *bytes++) & 0xff];
  return ~crc;
}

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

// SSE 4.2's crc32 computes CRC-32C: eight bytes an instruction. Compiled for that target alone,
// and called only when the CPU says it has it, so the library still runs on any x86-64.
[[gnu::target("sse4.2")]] uint32_t Crc32cInstruction(std::string_view data, uint32_t crc) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  size_t size = data.size();
  uint64_t state = ~crc;
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    state = __builtin_ia32_crc32di(state, word);
    bytes += 8;
    size -= 8;
  }
  auto narrow = static_cast<uint32_t>(state);
  while (size-- > 0) narrow = __builtin_ia32_crc32qi(narrow, *bytes++);
  return ~narrow;
}

const bool kHasCrc32Instruction = __builtin_cpu_supports("sse4.2");

}  // namespace

uint32_t Crc32c(std::string_view data, uint32_t crc) {
  return kHasCrc32Instruction ? Crc32cInstruction(data, crc) : Crc32cPortable(data, crc);
}

#else

uint32_t Crc32c(std::string_view data, uint32_t crc) { return Crc32cPortable(data, crc); }

#endif

}  // namespace tfprof
