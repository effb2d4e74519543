// The `key=value,key=value` syntax shared by prof_start()'s and prof_convert()'s options.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

struct RawOption {
  std::string key;
  std::string value;
  size_t offset;  // where the key starts in the option string
};

// Splits on unescaped commas and unescapes `\,` and `\\`; spaces around keys and values are
// dropped and empty items skipped. Errors name the offending item and its byte offset; a key
// given twice is one.
absl::StatusOr<std::vector<RawOption>> SplitOptionString(std::string_view text);

// "option 'KEY' at offset N: WHY", an InvalidArgument error.
absl::Status OptionError(const RawOption &option, std::string_view why);

}  // namespace tfprof
