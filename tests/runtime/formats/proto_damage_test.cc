// DescribeWireFieldDamage: a field running past the end of its message (a file cut short, when
// the message is the file) told apart from corrupt bytes, each named with its field.

#include <doctest/doctest.h>

#include <string>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/proto_damage.h"

namespace tfprof {
namespace {

TEST_CASE("proto damage: a length past the end is 'runs past the end', with the length") {
  std::string bytes;
  AppendVarintField(1, 7, bytes);
  const size_t bad = bytes.size();
  bytes += "\x1a\x20" "abc";  // field 3, 32 bytes declared, 3 there
  const WireFieldDamage damage = DescribeWireFieldDamage(bytes, bad, "XLine");
  CHECK(damage.runs_past_end);
  CHECK(damage.declared_length == 32);
  CHECK(damage.problem == "field 3's length (32 bytes) runs past the end of the XLine (3 bytes left)");
  CHECK(DescribeWireFieldDamage(bytes, bad, "file").problem ==
        "field 3's length (32 bytes) runs past the end of the file (3 bytes left)");
}

TEST_CASE("proto damage: corrupt bytes are named, not taken for a cut") {
  SUBCASE("a bad wire type") {
    const WireFieldDamage damage = DescribeWireFieldDamage("\x67\x01", 0, "XEvent");  // 12, type 7
    CHECK_FALSE(damage.runs_past_end);
    CHECK(damage.problem == "bad wire type 7 (field 12)");
  }
  SUBCASE("field number 0") {
    const WireFieldDamage damage = DescribeWireFieldDamage(std::string("\x02\x01", 2), 0, "XStat");
    CHECK_FALSE(damage.runs_past_end);
    CHECK(damage.problem == "bad field tag (field number 0)");
  }
  SUBCASE("a varint of eleven bytes") {
    const std::string bytes = std::string("\x08") + std::string(10, '\xff') + "\x01";
    const WireFieldDamage damage = DescribeWireFieldDamage(bytes, 0, "XStat");
    CHECK_FALSE(damage.runs_past_end);
    CHECK(damage.problem == "field 1: bad varint (more than 10 bytes)");
  }
}

TEST_CASE("proto damage: values and tags cut by the end") {
  CHECK(DescribeWireFieldDamage("\x08\x80", 0, "file").problem ==
        "field 1's varint runs past the end of the file");
  CHECK(DescribeWireFieldDamage("\x09\x01\x02", 0, "file").problem ==
        "field 1's 8-byte value runs past the end of the file (2 bytes left)");
  CHECK(DescribeWireFieldDamage("\x08\x01\x80", 2, "file").problem ==
        "a field tag runs past the end of the file");
  CHECK(DescribeWireFieldDamage("\x08\x01\x80", 2, "file").runs_past_end);
}

}  // namespace
}  // namespace tfprof
