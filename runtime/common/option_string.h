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

// The one reading of a yes/no word everywhere tfprof takes one (prof_start() and prof_convert()
// options, the preload library's environment): on/off, true/false, yes/no and 1/0, in any case.
// False when `text` is none of them.
bool ParseOnOffWord(std::string_view text, bool *value);

// `option`'s value as ParseOnOffWord() reads it; an OptionError naming the accepted words if not.
absl::Status ParseOnOff(const RawOption &option, bool *value);

// "option 'KEY' at offset N: WHY", an InvalidArgument error.
absl::Status OptionError(const RawOption &option, std::string_view why);

}  // namespace tfprof
