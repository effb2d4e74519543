#include "runtime/common/json_text.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/common/utf8.h"

namespace tfprof {

void AppendJsonString(std::string &out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t index = 0;
  while (index < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[index]);
    if (c >= 0x80) {
      const size_t length = ValidUtf8Length(text.substr(index));
      if (length == 0) {
        out.append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER, as ToValidUtf8 writes
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

struct NonFiniteSpelling {
  std::string_view text;
  double value;
};

const NonFiniteSpelling kNonFinite[] = {
    {"\"NaN\"", std::numeric_limits<double>::quiet_NaN()},
    {"\"Infinity\"", std::numeric_limits<double>::infinity()},
    {"\"-Infinity\"", -std::numeric_limits<double>::infinity()},
};

}  // namespace

size_t FormatDouble(double value, char *out) {
  if (!std::isfinite(value)) {
    const NonFiniteSpelling &spelling =
        std::isnan(value) ? kNonFinite[0] : value > 0 ? kNonFinite[1] : kNonFinite[2];
    const std::string_view text = spelling.text;
    std::memcpy(out, text.data(), text.size());
    return text.size();
  }
  return static_cast<size_t>(std::to_chars(out, out + 32, value).ptr - out);
}

std::optional<double> NonFiniteAt(std::string_view text, size_t *size) {
  for (const NonFiniteSpelling &spelling : kNonFinite) {
    if (text.substr(0, spelling.text.size()) == spelling.text) {
      *size = spelling.text.size();
      return spelling.value;
    }
  }
  return std::nullopt;
}

std::string QuotedJson(std::string_view text) {
  std::string quoted;
  AppendJsonString(quoted, text);
  return quoted;
}

}  // namespace tfprof
