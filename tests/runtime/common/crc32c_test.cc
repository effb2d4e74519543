// CRC-32C against published check values (RFC 3720 appendix B.4 and the standard check string).
#include <random>
#include <string>

#include <doctest/doctest.h>

#include "runtime/common/crc32c.h"

namespace tfprof {

TEST_CASE("crc32c: published check values") {
  CHECK(Crc32c("") == 0u);
  CHECK(Crc32c("123456789") == 0xE3069283u);
  CHECK(Crc32c(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(Crc32c(std::string(32, '\xff')) == 0x62A8AB43u);
  std::string ascending;
  for (int value = 0; value < 32; ++value) ascending.push_back(static_cast<char>(value));
  CHECK(Crc32c(ascending) == 0x46DD794Eu);
  std::string descending(ascending.rbegin(), ascending.rend());
  CHECK(Crc32c(descending) == 0x113FDB5Cu);
}

TEST_CASE("crc32c: continuing a CRC equals the CRC of the concatenation, at every split") {
  const std::string text = "The quick brown fox jumps over the lazy dog, 0123456789";
  for (size_t split = 0; split <= text.size(); ++split) {
    const std::string_view view = text;
    CHECK(Crc32c(view.substr(split), Crc32c(view.substr(0, split))) == Crc32c(text));
  }
}

TEST_CASE("crc32c: the CPU's instruction and the tables agree at every length and offset") {
  std::mt19937 random(3720);
  std::string bytes(4096 + 64, '\0');
  for (char &byte : bytes) byte = static_cast<char>(random());
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t length : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 63u, 64u, 1000u, 4096u}) {
      const std::string_view data = std::string_view(bytes).substr(offset, length);
      CAPTURE(offset);
      CAPTURE(length);
      CHECK(Crc32c(data) == Crc32cPortable(data));
      CHECK(Crc32c(data, 0x12345678u) == Crc32cPortable(data, 0x12345678u));
    }
  }
  CHECK(Crc32cPortable("123456789") == 0xE3069283u);
}

TEST_CASE("crc32c: masking is TensorFlow's rotate-and-add, and unmasking inverts it") {
  CHECK(MaskCrc32c(0) == 0xa282ead8u);
  CHECK(MaskCrc32c(0x00008000u) == 0xa282ead9u);  // bit 15 rotates to bit 0
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u}) {
    CHECK(UnmaskCrc32c(MaskCrc32c(crc)) == crc);
  }
}

}  // namespace tfprof
