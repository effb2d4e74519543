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
