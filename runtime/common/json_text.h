// Small pieces of JSON text: escaped strings and fixed-point microsecond timestamps.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace tfprof {

// Appends `text` as a quoted JSON string. Quotes, backslashes and control characters are escaped;
// valid UTF-8 is copied as is; every byte of an invalid UTF-8 sequence becomes U+FFFD.
void AppendJsonString(std::string &out, std::string_view text);

// How many bytes at the start of `text` AppendJsonString copies as they are (printable ASCII but
// '"' and '\\'): eight bytes at a time, since most names are all such bytes.
size_t PlainJsonPrefix(std::string_view text);

// `text` as a quoted JSON string (AppendJsonString into a fresh string).
std::string QuotedJson(std::string_view text);

// The quoted JSON string at the start of `text`, unescaped, into `*out`; returns the bytes it
// took (quotes included), 0 when `text` does not start with a whole, well-formed one. A lone
// surrogate escape becomes U+FFFD. For short texts kept whole (file args): the readers' scanner
// decodes strings as it walks a file.
size_t DecodeJsonString(std::string_view text, std::string *out);

// Writes `ns` nanoseconds as microseconds with exactly three decimals ("1234.567", "-0.001")
// into `out`, which must have room for 32 bytes. Returns the number of bytes written.
size_t FormatMicros(int64_t ns, char *out);

// FormatMicros for a stream of timestamps: the digits of the whole microseconds above the last
// four (which one trace's timestamps share for 10 ms at a time) are formatted once and reused.
// Format() writes exactly what FormatMicros writes; `out` must have room for 32 bytes.
class MicrosFormatter {
 public:
  size_t Format(int64_t ns, char *out);
  // The whole microseconds alone, ns / 1000 as C++ divides ("1234", "0" for -999), as
  // timeline.py's lanes print times.
  size_t FormatWhole(int64_t ns, char *out);

 private:
  static constexpr uint64_t kLow = 10000;  // the whole microseconds' last four digits change
  // Writes `micros` (>= kLow) from the cached high digits; returns the end.
  char *WriteWholeMicros(uint64_t micros, char *out);

  uint64_t high_ = UINT64_MAX;  // the whole microseconds / 10000 high_text_ holds
  size_t high_size_ = 0;
  char high_text_[24] = {};
};

// Writes a finite double in its shortest round-trip form. NaN and the infinities, which JSON
// cannot spell as numbers, are written as the strings "NaN", "Infinity" and "-Infinity" (the
// spellings of JavaScript and Python), which tfprof's reader takes back as those values and
// viewers skip. `out` must have room for 32 bytes. Returns bytes written.
size_t FormatDouble(double value, char *out);

// The value of "NaN", "Infinity" or "-Infinity" (FormatDouble's strings, quotes included) at the
// start of `text`, and their length in `*size`; nullopt when `text` starts with none of them.
std::optional<double> NonFiniteAt(std::string_view text, size_t *size);

// FormatMicros and MicrosFormatter are defined here, inline: writers call them twice per event.

namespace json_text_detail {

// "00" to "99": two digits per lookup halve the divisions.
inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline void WritePair(unsigned value, char *out) { std::memcpy(out, kDigitPairs + 2 * value, 2); }

// Writes `fraction` (0-999) as ".ddd".
inline char *WriteFraction(unsigned fraction, char *out) {
  out[0] = '.';
  out[1] = static_cast<char>('0' + fraction / 100);
  WritePair(fraction % 100, out + 2);
  return out + 4;
}

// Writes `value` in decimal. Durations and the low digits of timestamps are short: those take a
// few multiplications instead of std::to_chars' general loop.
inline char *WriteWhole(uint64_t value, char *out) {
  if (value >= 10000) return std::to_chars(out, out + 24, value).ptr;
  const unsigned small = static_cast<unsigned>(value);
  if (small < 10) {
    out[0] = static_cast<char>('0' + small);
    return out + 1;
  }
  if (small < 100) {
    WritePair(small, out);
    return out + 2;
  }
  if (small < 1000) {
    out[0] = static_cast<char>('0' + small / 100);
    WritePair(small % 100, out + 1);
    return out + 3;
  }
  WritePair(small / 100, out);
  WritePair(small % 100, out + 2);
  return out + 4;
}

}  // namespace json_text_detail

inline size_t FormatMicros(int64_t ns, char *out) {
  using json_text_detail::WriteFraction;
  using json_text_detail::WriteWhole;
  char *cursor = out;
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    *cursor++ = '-';
    magnitude = 0 - magnitude;
  }
  cursor = WriteWhole(magnitude / 1000, cursor);
  return static_cast<size_t>(WriteFraction(static_cast<unsigned>(magnitude % 1000), cursor) - out);
}

inline char *MicrosFormatter::WriteWholeMicros(uint64_t micros, char *out) {
  using json_text_detail::WritePair;
  const uint64_t high = micros / kLow;
  if (high != high_) {
    high_ = high;
    const char *end = std::to_chars(high_text_, high_text_ + sizeof high_text_, high).ptr;
    high_size_ = static_cast<size_t>(end - high_text_);
  }
  // A fixed-size copy (the 32 bytes of room cover it) is one move; the size is what counts.
  std::memcpy(out, high_text_, 16);
  if (high_size_ > 16) std::memcpy(out + 16, high_text_ + 16, high_size_ - 16);
  char *cursor = out + high_size_;
  const unsigned low = static_cast<unsigned>(micros - high * kLow);
  WritePair(low / 100, cursor);
  WritePair(low % 100, cursor + 2);
  return cursor + 4;
}

inline size_t MicrosFormatter::Format(int64_t ns, char *out) {
  if (ns < 0 || static_cast<uint64_t>(ns) / 1000 < kLow) return FormatMicros(ns, out);
  const uint64_t micros = static_cast<uint64_t>(ns) / 1000;
  char *cursor = WriteWholeMicros(micros, out);
  const unsigned fraction = static_cast<unsigned>(static_cast<uint64_t>(ns) - micros * 1000);
  return static_cast<size_t>(json_text_detail::WriteFraction(fraction, cursor) - out);
}

inline size_t MicrosFormatter::FormatWhole(int64_t ns, char *out) {
  if (ns < 0 || static_cast<uint64_t>(ns) / 1000 < kLow) {
    return static_cast<size_t>(std::to_chars(out, out + 32, ns / 1000).ptr - out);
  }
  return static_cast<size_t>(WriteWholeMicros(static_cast<uint64_t>(ns) / 1000, out) - out);
}

}  // namespace tfprof
