#include "runtime/common/utf8.h"

#include <cstdint>

namespace tfprof {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER

}  // namespace

size_t ValidUtf8Length(std::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](size_t index) { return static_cast<unsigned char>(text[index]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
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
  if (length == 3 && (code_point < 0x800 || (code_point >= 0xD800 && code_point <= 0xDFFF))) {
    return 0;
  }
  if (length == 4 && (code_point < 0x10000 || code_point > 0x10FFFF)) return 0;
  return length;
}

bool IsValidUtf8(std::string_view text) {
  size_t index = 0;
  while (index < text.size()) {
    if (static_cast<unsigned char>(text[index]) < 0x80) {
      ++index;
      continue;
    }
    const size_t length = ValidUtf8Length(text.substr(index));
    if (length == 0) return false;
    index += length;
  }
  return true;
}

std::string ToValidUtf8(std::string_view text) {
  std::string valid;
  valid.reserve(text.size());
  size_t index = 0;
  while (index < text.size()) {
    const size_t length = ValidUtf8Length(text.substr(index));
    if (length == 0) {
      valid.append(kReplacement);
      ++index;
    } else {
      valid.append(text.substr(index, length));
      index += length;
    }
  }
  return valid;
}

std::string_view ValidUtf8View(std::string_view text, std::string &storage) {
  if (IsValidUtf8(text)) return text;
  storage = ToValidUtf8(text);
  return storage;
}

void AppendCodePointUtf8(uint32_t code, std::string *out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

}  // namespace tfprof
