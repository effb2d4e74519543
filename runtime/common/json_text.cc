#include "runtime/common/json_text.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/common/utf8.h"

namespace tfprof {

namespace {

bool IsPlainJsonByte(unsigned char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

}  // namespace

size_t PlainJsonPrefix(std::string_view text) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  // The eight bytes at `at`: a byte's high bit is set where it is below 0x20, '"', '\\', 0x7F,
  // or 0x80 and up. A borrow only runs up from a byte that is flagged rightly, so the lowest
  // flag is exact.
  const auto special_at = [&](size_t at) {
    uint64_t word = 0;
    std::memcpy(&word, text.data() + at, 8);
    const uint64_t quotes = word ^ (kOnes * '"');
    const uint64_t backslashes = word ^ (kOnes * '\\');
    const uint64_t deletes = word ^ (kOnes * 0x7F);
    return (((word - kOnes * 0x20) & ~word) | ((quotes - kOnes) & ~quotes) |
            ((backslashes - kOnes) & ~backslashes) | ((deletes - kOnes) & ~deletes) | word) &
           kHighBits;
  };
  size_t run = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; text.size() - run >= 8; run += 8) {
      if (const uint64_t special = special_at(run); special != 0) {
        return run + static_cast<size_t>(__builtin_ctzll(special) >> 3);
      }
    }
    // The last few bytes: the text's last eight, whose bytes before `run` are plain already.
    if (run != text.size() && text.size() >= 8) {
      const size_t at = text.size() - 8;
      const uint64_t special = special_at(at);
      return special == 0 ? text.size() : at + static_cast<size_t>(__builtin_ctzll(special) >> 3);
    }
  }
  while (run < text.size() && IsPlainJsonByte(static_cast<unsigned char>(text[run]))) ++run;
  return run;
}

void AppendJsonString(std::string &out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t index = 0;
  while (index < text.size()) {
    const size_t run = PlainJsonPrefix(text.substr(index));
    out.append(text.data() + index, run);
    index += run;
    if (index == text.size()) break;
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

namespace {

bool HexDigits(std::string_view text, uint32_t *code) {
  if (text.size() < 4) return false;
  *code = 0;
  for (size_t index = 0; index < 4; ++index) {
    const char c = text[index];
    const uint32_t digit = c >= '0' && c <= '9'   ? static_cast<uint32_t>(c - '0')
                           : c >= 'a' && c <= 'f' ? static_cast<uint32_t>(c - 'a' + 10)
                           : c >= 'A' && c <= 'F' ? static_cast<uint32_t>(c - 'A' + 10)
                                                  : 16;
    if (digit == 16) return false;
    *code = *code * 16 + digit;
  }
  return true;
}

}  // namespace

size_t DecodeJsonString(std::string_view text, std::string *out) {
  out->clear();
  if (text.empty() || text[0] != '"') return 0;
  size_t at = 1;
  while (at < text.size()) {
    const char c = text[at];
    if (c == '"') return at + 1;
    if (static_cast<unsigned char>(c) < 0x20) return 0;
    if (c != '\\') {
      out->push_back(c);
      ++at;
      continue;
    }
    if (at + 1 >= text.size()) return 0;
    const char escaped = text[at + 1];
    at += 2;
    switch (escaped) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t code = 0;
        if (!HexDigits(text.substr(at), &code)) return 0;
        at += 4;
        uint32_t low = 0;
        if (code >= 0xD800 && code <= 0xDBFF && text.substr(at, 2) == "\\u" &&
            HexDigits(text.substr(at + 2), &low) && low >= 0xDC00 && low <= 0xDFFF) {
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          at += 6;
        } else if (code >= 0xD800 && code <= 0xDFFF) {
          code = 0xFFFD;  // half a surrogate pair
        }
        AppendCodePointUtf8(code, out);
        break;
      }
      default:
        return 0;
    }
  }
  return 0;  // no closing quote
}

std::string QuotedJson(std::string_view text) {
  std::string quoted;
  AppendJsonString(quoted, text);
  return quoted;
}

}  // namespace tfprof
