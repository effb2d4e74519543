// Small pieces of JSON text: escaped strings and fixed-point microsecond timestamps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tfprof {

// Appends `text` as a quoted JSON string. Quotes, backslashes and control characters are escaped;
// valid UTF-8 is copied as is; every byte of an invalid UTF-8 sequence becomes U+FFFD.
void AppendJsonString(std::string &out, std::string_view text);

// `text` as a quoted JSON string (AppendJsonString into a fresh string).
std::string QuotedJson(std::string_view text);

// Writes `ns` nanoseconds as microseconds with exactly three decimals ("1234.567", "-0.001")
// into `out`, which must have room for 32 bytes. Returns the number of bytes written.
size_t FormatMicros(int64_t ns, char *out);

// Writes a finite double in its shortest round-trip form, or "null" for NaN and infinities
// (JSON has no spelling for them). `out` must have room for 32 bytes. Returns bytes written.
size_t FormatDouble(double value, char *out);

}  // namespace tfprof
