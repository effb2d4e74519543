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

// FormatMicros for a stream of timestamps: the digits of the whole microseconds above the last
// four (which one trace's timestamps share for 10 ms at a time) are formatted once and reused.
// Writes exactly what FormatMicros writes; `out` must have room for 32 bytes.
class MicrosFormatter {
 public:
  size_t Format(int64_t ns, char *out);

 private:
  uint64_t high_ = UINT64_MAX;  // the whole microseconds / 10000 high_text_ holds
  size_t high_size_ = 0;
  char high_text_[24] = {};
};

// Writes a finite double in its shortest round-trip form, or "null" for NaN and infinities
// (JSON has no spelling for them). `out` must have room for 32 bytes. Returns bytes written.
size_t FormatDouble(double value, char *out);

}  // namespace tfprof
