#include "runtime/formats/proto_damage.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

enum class VarintEnd { kOk, kPastEnd, kTooLong };

// Reads a varint at `*at`; kTooLong past 10 bytes (no varint is longer).
VarintEnd ReadVarint(std::string_view data, size_t *at, uint64_t *value) {
  *value = 0;
  for (int index = 0; index < 10; ++index) {
    if (*at >= data.size()) return VarintEnd::kPastEnd;
    const auto byte = static_cast<unsigned char>(data[(*at)++]);
    *value |= static_cast<uint64_t>(byte & 0x7f) << (7 * index);
    if ((byte & 0x80) == 0) return VarintEnd::kOk;
  }
  return VarintEnd::kTooLong;
}

}  // namespace

WireFieldDamage DescribeWireFieldDamage(std::string_view message, size_t at,
                                        std::string_view message_name) {
  WireFieldDamage damage;
  const std::string end = message_name == "file" ? std::string("the file")
                                                 : absl::StrCat("the ", ToAbsl(message_name));
  uint64_t tag = 0;
  switch (ReadVarint(message, &at, &tag)) {
    case VarintEnd::kPastEnd:
      damage.problem = absl::StrCat("a field tag runs past the end of ", end);
      damage.runs_past_end = true;
      return damage;
    case VarintEnd::kTooLong:
      damage.problem = "bad field tag (a varint of more than 10 bytes)";
      return damage;
    case VarintEnd::kOk:
      break;
  }
  const uint64_t field = tag >> 3;
  const int wire_type = static_cast<int>(tag & 7);
  if (field == 0 || field > 536870911) {
    damage.problem = absl::StrCat("bad field tag (field number ", field, ")");
    return damage;
  }
  const size_t left = message.size() - at;
  switch (wire_type) {
    case 0: {
      uint64_t value = 0;
      const VarintEnd read = ReadVarint(message, &at, &value);
      damage.runs_past_end = read == VarintEnd::kPastEnd;
      damage.problem = damage.runs_past_end
                           ? absl::StrCat("field ", field, "'s varint runs past the end of ", end)
                           : absl::StrCat("field ", field, ": bad varint (more than 10 bytes)");
      return damage;
    }
    case 1:
    case 5:
      damage.runs_past_end = true;
      damage.problem = absl::StrCat("field ", field, "'s ", wire_type == 1 ? 8 : 4,
                                    "-byte value runs past the end of ", end, " (", left,
                                    left == 1 ? " byte left)" : " bytes left)");
      return damage;
    case 2: {
      uint64_t length = 0;
      const VarintEnd read = ReadVarint(message, &at, &length);
      if (read == VarintEnd::kTooLong) {
        damage.problem = absl::StrCat("field ", field, ": bad length (more than 10 bytes)");
        return damage;
      }
      damage.runs_past_end = true;
      if (read == VarintEnd::kPastEnd) {
        damage.problem = absl::StrCat("field ", field, "'s length runs past the end of ", end);
        return damage;
      }
      damage.declared_length = static_cast<size_t>(length);
      damage.problem = absl::StrCat("field ", field, "'s length (", length,
                                    " bytes) runs past the end of ", end, " (",
                                    message.size() - at, " bytes left)");
      return damage;
    }
    default:
      damage.problem = absl::StrCat("bad wire type ", wire_type, " (field ", field, ")");
      return damage;
  }
}

}  // namespace tfprof
