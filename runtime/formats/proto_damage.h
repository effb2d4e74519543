// Says what is wrong with a protobuf field that does not parse, for the readers' damage messages:
// a file cut short (a length or value running past the end of the file) is told apart from
// corrupt bytes (a bad tag or wire type, a length running past the end of the message that holds
// it while that message lies whole inside the file).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tfprof {

struct WireFieldDamage {
  // "bad wire type 7 (field 12)", "bad field tag (field number 0)", "field 3's length (5000
  // bytes) runs past the end of the XLine (12 bytes left)", "field 2's varint runs past the end of
  // the XLine".
  std::string problem;
  bool runs_past_end = false;  // the field is sound up to the end of `message`, and goes beyond
  size_t declared_length = 0;  // runs_past_end for a length-delimited field: its length
};

// Why the field at `at` of `message` does not parse (NextWireField() refused it). `message_name`
// names `message` in the problem ("XLine", "file").
WireFieldDamage DescribeWireFieldDamage(std::string_view message, size_t at,
                                        std::string_view message_name);

}  // namespace tfprof
