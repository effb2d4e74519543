#include "runtime/common/json_scanner.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/common/utf8.h"

namespace tfprof {

bool DecimalToScaledInt(std::string_view text, int scale, int64_t *out) {
  const char *p = text.data();
  const char *const end = p + text.size();
  bool negative = false;
  if (p < end && *p == '-') {
    negative = true;
    ++p;
  }
  if (p == end || !IsDigit(*p)) return false;
  uint64_t mantissa = 0;
  int significant = 0;
  int64_t exponent = 0;  // of the last digit kept in `mantissa`
  const auto add_digit = [&](int digit, bool fraction) {
    if (significant < 19) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(digit);
      if (mantissa != 0) ++significant;
      if (fraction) --exponent;
    } else if (!fraction) {
      ++exponent;  // an integer digit past the 19 kept ones scales what was kept
    }
  };
  if (*p == '0') {
    ++p;
  } else {
    while (p < end && IsDigit(*p)) add_digit(*p++ - '0', false);
  }
  if (p < end && *p == '.') {
    ++p;
    if (p == end || !IsDigit(*p)) return false;
    while (p < end && IsDigit(*p)) add_digit(*p++ - '0', true);
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exponent_negative = false;
    if (p < end && (*p == '+' || *p == '-')) exponent_negative = *p++ == '-';
    if (p == end || !IsDigit(*p)) return false;
    int64_t written = 0;
    while (p < end && IsDigit(*p)) {
      written = std::min<int64_t>(written * 10 + (*p++ - '0'), 1000000);  // clamped: far out anyway
    }
    exponent += exponent_negative ? -written : written;
  }
  if (p != end) return false;
  if (mantissa == 0) {
    *out = 0;
    return true;
  }
  const int64_t total = exponent + scale;
  uint64_t magnitude = 0;
  if (total >= 0) {
    if (total > 18) return false;
    const uint64_t factor = kPowersOf10[total];
    if (mantissa > std::numeric_limits<uint64_t>::max() / factor) return false;
    magnitude = mantissa * factor;
  } else if (total < -19) {
    magnitude = 0;  // below half a unit: rounds to zero
  } else {
    const uint64_t divisor = kPowersOf10[-total];
    const uint64_t remainder = mantissa % divisor;
    magnitude = mantissa / divisor + (remainder >= divisor - remainder ? 1 : 0);
  }
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > limit + (negative ? 1 : 0)) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

JsonScanner::JsonScanner(ByteSource &source, const std::string &path, bool decompressed,
                         size_t window_bytes)
    : source_(source),
      path_(path),
      decompressed_(decompressed),
      window_(new char[std::max<size_t>(window_bytes, 1)]),
      capacity_(std::max<size_t>(window_bytes, 1)) {}

absl::Status JsonScanner::Refill() {
  const size_t keep = end_ - pos_;
  if (pos_ > 0) {
    std::memmove(window_.get(), window_.get() + pos_, keep);
    window_offset_ += pos_;
    pos_ = 0;
    end_ = keep;
  }
  if (end_ == capacity_ || capacity_ - end_ < capacity_ / 2) {  // one value fills half of it
    if (capacity_ >= kMaxWindowBytes) {
      return Damage(window_offset_, "a single JSON value larger than 1 GiB");
    }
    std::unique_ptr<char[]> bigger(new char[capacity_ * 2]);
    std::memcpy(bigger.get(), window_.get(), end_);
    window_ = std::move(bigger);
    capacity_ *= 2;
  }
  absl::StatusOr<size_t> got = source_.Read(window_.get() + end_, capacity_ - end_);
  if (!got.ok()) return got.status();
  if (*got == 0) eof_ = true;
  end_ += *got;
  return absl::OkStatus();
}

absl::Status JsonScanner::Damage(uint64_t offset, std::string_view problem) const {
  return absl::DataLossError(absl::StrCat(path_, ": byte ", offset, ": ", ToAbsl(problem),
                                          decompressed_ ? " (offset in the decompressed data)"
                                                        : ""));
}

Scan JsonScanner::Fail(const char *at, std::string_view problem) {
  error_at_ = OffsetOf(at);
  error_ = Damage(error_at_, problem);
  return Scan::kError;
}

Scan JsonScanner::Fail(absl::Status status) {
  error_ = std::move(status);
  return Scan::kError;
}

Scan JsonScanner::ReadOwnedText(const char *&p, const char *end, std::string *out) {
  if (*p != '"') return SkipValue(p, end, 1);
  std::string scratch;
  std::string_view text;
  TFPROF_SCAN(String(p, end, &text, &scratch));
  out->assign(text);
  return Scan::kOk;
}

Scan JsonScanner::EscapedString(const char *&p, const char *end, const char *stop,
                                std::string_view *out, std::string *scratch) {
  const char *const start = p + 1;
  if (scratch != nullptr) scratch->assign(start, static_cast<size_t>(stop - start));
  const char *q = stop;
  while (true) {
    if (q == end) return Scan::kMore;
    const char c = *q;
    if (c == '"') break;
    if (c != '\\') {
      if (scratch != nullptr) scratch->push_back(c);
      ++q;
      continue;
    }
    if (end - q < 2) return Scan::kMore;
    const char kind = q[1];
    char plain = 0;
    switch (kind) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': break;
      default: return Fail(q, "invalid escape in a string");
    }
    if (kind != 'u') {
      if (scratch != nullptr) scratch->push_back(plain);
      q += 2;
      continue;
    }
    uint32_t code = 0;
    TFPROF_SCAN(Hex4(q, end, &code));
    q += 6;
    if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate: its low half should follow
      if (end - q < 2 && !eof_) return Scan::kMore;
      if (end - q >= 2 && q[0] == '\\' && q[1] == 'u') {
        uint32_t low = 0;
        TFPROF_SCAN(Hex4(q, end, &low));
        if (low >= 0xDC00 && low <= 0xDFFF) {
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          q += 6;
        } else {
          code = 0xFFFD;
        }
      } else {
        code = 0xFFFD;
      }
    } else if (code >= 0xDC00 && code <= 0xDFFF) {
      code = 0xFFFD;  // a lone low surrogate
    }
    if (scratch != nullptr) AppendCodePointUtf8(code, scratch);
  }
  if (out != nullptr) *out = scratch != nullptr ? std::string_view(*scratch) : std::string_view();
  p = q + 1;
  return Scan::kOk;
}

Scan JsonScanner::Hex4(const char *q, const char *end, uint32_t *code) {
  if (end - q < 6) return Scan::kMore;
  *code = 0;
  for (int index = 2; index < 6; ++index) {
    const char c = q[index];
    uint32_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return Fail(q, "invalid \\u escape in a string");
    }
    *code = *code << 4 | digit;
  }
  return Scan::kOk;
}

}  // namespace tfprof
