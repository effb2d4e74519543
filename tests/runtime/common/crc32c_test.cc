// CRC-32C against published check values (RFC 3720 appendix B.4 and the standard check string).
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

TEST_CASE("crc32c: masking is TensorFlow's rotate-and-add, and unmasking inverts it") {
  CHECK(MaskCrc32c(0) == 0xa282ead8u);
  CHECK(MaskCrc32c(0x00008000u) == 0xa282ead9u);  // bit 15 rotates to bit 0
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u}) {
    CHECK(UnmaskCrc32c(MaskCrc32c(crc)) == crc);
  }
}

}  // namespace tfprof
