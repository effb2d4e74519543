#include "runtime/export/json_text.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace tfprof {

namespace {

// Length of the valid UTF-8 sequence at the start of `text`, or 0 if it is not valid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t ValidUtf8Length(std::string_view text) {
  const auto byte = [&](size_t index) { return static_cast<unsigned char>(text[index]); };
  const unsigned char lead = byte(0);
  size_t length;
  uint32_t code_point;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t index = 1; index < length; ++index) {
    if ((byte(index) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(index) & 0x3F);
  }
  if (length == 3 && (code_point < 0x800 || (code_point >= 0xD800 && code_point <= 0xDFFF))) return 0;
  if (length == 4 && (code_point < 0x10000 || code_point > 0x10FFFF)) return 0;
  return length;
}

}  // namespace

void AppendJsonString(std::string &out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t index = 0;
  while (index < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[index]);
    if (c >= 0x80) {
      const size_t length = ValidUtf8Length(text.substr(index));
      if (length == 0) {
        out.append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
        ++index;
      } else {
        out.append(text.substr(index, length));
        index += length;
      }
      continue;
    }
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        if (c < 0x20 || c == 0x7F) {
          const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
          out.append(escaped, sizeof escaped);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++index;
  }
  out.push_back('"');
}

namespace {

// "00" to "99": two digits per lookup halve the divisions.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

void WritePair(unsigned value, char *out) { std::memcpy(out, kDigitPairs + 2 * value, 2); }

// Writes `fraction` (0-999) as ".ddd".
char *WriteFraction(unsigned fraction, char *out) {
  out[0] = '.';
  out[1] = static_cast<char>('0' + fraction / 100);
  WritePair(fraction % 100, out + 2);
  return out + 4;
}

// Writes `value` in decimal. Durations and the low digits of timestamps are short: those take a
// few multiplications instead of std::to_chars' general loop.
char *WriteWhole(uint64_t value, char *out) {
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

}  // namespace

size_t FormatMicros(int64_t ns, char *out) {
  char *cursor = out;
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    *cursor++ = '-';
    magnitude = 0 - magnitude;
  }
  cursor = WriteWhole(magnitude / 1000, cursor);
  return static_cast<size_t>(WriteFraction(static_cast<unsigned>(magnitude % 1000), cursor) - out);
}

size_t MicrosFormatter::Format(int64_t ns, char *out) {
  constexpr uint64_t kLow = 10000;  // the whole microseconds' last four digits change per event
  if (ns < 0 || static_cast<uint64_t>(ns) / 1000 < kLow) return FormatMicros(ns, out);
  const uint64_t micros = static_cast<uint64_t>(ns) / 1000;
  const uint64_t high = micros / kLow;
  if (high != high_) {
    high_ = high;
    high_size_ = static_cast<size_t>(std::to_chars(high_text_, high_text_ + sizeof high_text_, high).ptr -
                                     high_text_);
  }
  // A fixed-size copy (the 32 bytes of room cover it) is one move; the size is what counts.
  std::memcpy(out, high_text_, 16);
  if (high_size_ > 16) std::memcpy(out + 16, high_text_ + 16, high_size_ - 16);
  char *cursor = out + high_size_;
  const unsigned low = static_cast<unsigned>(micros - high * kLow);
  WritePair(low / 100, cursor);
  WritePair(low % 100, cursor + 2);
  const unsigned fraction = static_cast<unsigned>(static_cast<uint64_t>(ns) - micros * 1000);
  return static_cast<size_t>(WriteFraction(fraction, cursor + 4) - out);
}

size_t FormatDouble(double value, char *out) {
  if (!std::isfinite(value)) {
    std::memcpy(out, "null", 4);
    return 4;
  }
  return static_cast<size_t>(std::to_chars(out, out + 32, value).ptr - out);
}

std::string QuotedJson(std::string_view text) {
  std::string quoted;
  AppendJsonString(quoted, text);
  return quoted;
}

}  // namespace tfprof
