// A streaming JSON scanner: the tokens (strings with their escapes and UTF-8, numbers, literals),
// any value validated and passed over, the members of an object and the items of an array, over
// a window of bytes refilled from a ByteSource. No tree is built: a reader walks the values it
// wants and skips the rest.
//
// Every scanning function takes `p` (where the value starts, moved past it on kOk) and `end` (the
// end of the window's bytes). kMore means the window ended before the value did: the caller
// leaves its unit of work undone, Refill()s, and scans the unit again from its start. kError
// means the data is wrong: error() then says where and why. The hot functions are defined here,
// so that a reader's loops inline them.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "runtime/common/ascii_text.h"
#include "runtime/common/byte_source.h"
#include "runtime/common/json_key_memory.h"

namespace tfprof {

enum class Scan : uint8_t { kOk, kMore, kError };

// Returns from the calling function unless `expression` scanned kOk.
#define TFPROF_SCAN(expression)                             \
  do {                                                      \
    const Scan scan_result_ = (expression);                 \
    if (scan_result_ != Scan::kOk) return scan_result_;     \
  } while (false)

// 10^0 .. 10^19: every power of ten a uint64 holds.
inline constexpr uint64_t kPowersOf10[] = {
    1ull,          10ull,          100ull,          1000ull,          10000ull,
    100000ull,     1000000ull,     10000000ull,     100000000ull,     1000000000ull,
    10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
    1000000000000000ull, 10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
    10000000000000000000ull};

// round(value of the JSON number `text` * 10^scale) as an int64, computed on integers: the first
// 19 significant digits are kept exactly (later ones only round). False for anything that is not
// a JSON number, or a result outside int64.
bool DecimalToScaledInt(std::string_view text, int scale, int64_t *out);

// A JSON number as scanned: its text and, when `simple` (no exponent, at most 18 digits), its
// digits as an integer with `fraction_digits` of them after the point.
struct JsonNumber {
  std::string_view text;
  uint64_t mantissa = 0;
  int fraction_digits = 0;
  bool negative = false;
  bool simple = false;
};

// round(the number * 10^scale), as DecimalToScaledInt() computes it; most numbers (at most 18
// digits, no exponent) without a second look at the text.
bool ToScaled(const JsonNumber &number, int scale, int64_t *out);

class JsonScanner {
 public:
  static constexpr size_t kMaxWindowBytes = size_t{1} << 30;
  static constexpr int kMaxNesting = 200;

  // Errors name `path` ("PATH: byte N: PROBLEM"); `decompressed`: the offsets count the bytes
  // `source` gives, not the file's, and messages say so. `path` must outlive the scanner.
  JsonScanner(ByteSource &source, const std::string &path, bool decompressed,
              size_t window_bytes);

  // ---- the window: bytes [begin(), end()) are the data from window_offset() on ----

  const char *begin() const { return window_.get(); }
  const char *end() const { return window_.get() + end_; }
  // Where the next unit of work starts.
  const char *position() const { return window_.get() + pos_; }
  void set_position(const char *p) { pos_ = static_cast<size_t>(p - window_.get()); }
  uint64_t window_offset() const { return window_offset_; }
  // The data's offset of `p`, a pointer into the window.
  uint64_t OffsetOf(const char *p) const {
    return window_offset_ + static_cast<uint64_t>(p - window_.get());
  }
  // The source has no more bytes: what the window holds is all there is.
  bool eof() const { return eof_; }

  // Drops the bytes before position(), and reads more after end() (growing the window when one
  // value fills half of it). Pointers into the window are invalid after it.
  absl::Status Refill();

  // ---- errors ----

  // DataLoss "PATH: byte OFFSET: PROBLEM".
  absl::Status Damage(uint64_t offset, std::string_view problem) const;
  // Damage at `at` (in the window), kept as error(): returns kError.
  Scan Fail(const char *at, std::string_view problem);
  // `status` (not damage at a place) kept as error(): returns kError.
  Scan Fail(absl::Status status);
  const absl::Status &error() const { return error_; }
  // Where the last Fail(at, ...) found the data wrong.
  uint64_t error_offset() const { return error_at_; }

  // ---- tokens ----

  static const char *SkipWhitespace(const char *p, const char *end) {
    // Between most tokens there is none: one comparison says so (whitespace is below '!').
    if (p < end && static_cast<unsigned char>(*p) > ' ') return p;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    return p;
  }

  // A string at `p` (on its '"'). Without escapes `*out` views the window; with them the decoded
  // text goes into `*scratch` and `*out` views that. A null `out` only validates.
  [[gnu::always_inline]] Scan String(const char *&p, const char *end, std::string_view *out,
                                     std::string *scratch) {
    const char *const start = p + 1;
    const char *const stop = FindQuoteOrBackslash(start, end);
    if (stop == end) return Scan::kMore;
    if (*stop != '"') return EscapedString(p, end, stop, out, scratch);
    if (out != nullptr) *out = std::string_view(start, static_cast<size_t>(stop - start));
    p = stop + 1;
    return Scan::kOk;
  }

  // A number per JSON's grammar; kMore when it reaches the end of the window before the end of
  // the data (it may go on). Its digits are accumulated on the way for ToScaled().
  Scan Number(const char *&p, const char *end, JsonNumber *number);

  // `word` ("true", "false", "null") at `p`.
  Scan Literal(const char *&p, const char *end, std::string_view word) {
    const auto available = static_cast<size_t>(end - p);
    const size_t compared = std::min(available, word.size());
    if (std::memcmp(p, word.data(), compared) != 0) return Fail(p, "invalid JSON value");
    if (compared < word.size()) return eof_ ? Fail(end, "truncated JSON value") : Scan::kMore;
    p += word.size();
    return Scan::kOk;
  }

  // Any JSON value, validated and passed over. `depth`: how deep it is nested.
  Scan SkipValue(const char *&p, const char *end, int depth);

  // The members of the object at `p` (on its '{'), each handed to
  // `member(std::string_view key, const char *&p, const char *end)` with `p` on its value, which
  // it must scan past. The key views the window or a scratch string of this call.
  template <typename Member>
  Scan ForEachMember(const char *&p, const char *end, int depth, Member &&member);

  // ForEachMember() for objects whose members tend to come in one order: each key is first
  // compared with those `memory` holds for its place (JsonKeyMemory), else scanned and given
  // `classify(std::string_view key)`'s uint8_t code, which `memory` then remembers (when the
  // key has no escape and its colon follows it at once: JsonKeyMemory::Remember). The member
  // gets `member(uint8_t code, std::string_view key, const char *&p, const char *end)`.
  template <typename Classify, typename Member>
  Scan ForEachCodedMember(const char *&p, const char *end, int depth, JsonKeyMemory &memory,
                          Classify &&classify, Member &&member);

  // The items of the array at `p` (on its '['), each handed to
  // `item(const char *&p, const char *end)` with `p` on it, which it must scan past.
  template <typename Item>
  Scan ForEachItem(const char *&p, const char *end, int depth, Item &&item);

  // ---- values read as a type; any other value is skipped ----

  // The common number (no exponent, at most 18 digits, not near the window's end) at `p`, as
  // round(number * 10^scale) into `*out`, straight from its digits: false, with nothing moved,
  // for anything else, which Number() and ToScaled() then read (and report, when wrong). Most of
  // a trace's numbers are short ids and times; this path skips the JsonNumber in between.
  [[gnu::always_inline]] static bool ReadScaledFast(const char *&p, const char *end, int scale,
                                                    int64_t *out) {
    if (end - p < kFastNumberBytes) return false;  // the loops below stop within these bytes
    const char *q = p;
    const bool negative = *q == '-';
    q += negative ? 1 : 0;
    const char *const first = q;
    uint64_t mantissa = 0;
    // The digits from q, at most up to `limit`, onto the mantissa (19 of them already say "too
    // many": the digit count is checked once, after both runs).
    const auto take_digits = [&](const char *limit) {
      for (unsigned digit; q < limit && (digit = static_cast<unsigned char>(*q) - '0') < 10; ++q) {
        mantissa = mantissa * 10 + digit;
      }
    };
    take_digits(first + 19);
    const ptrdiff_t integer_digits = q - first;
    if (integer_digits == 0 || (*first == '0' && integer_digits > 1)) return false;
    ptrdiff_t fraction_digits = 0;
    if (*q == '.') {
      const char *const fraction = ++q;
      take_digits(first + 20);  // the point and 19 digits
      fraction_digits = q - fraction;
      if (fraction_digits == 0) return false;
    }
    if (integer_digits + fraction_digits > 18 || *q == 'e' || *q == 'E') return false;
    // round(mantissa * 10^(scale - fraction_digits)), as ToScaled() computes it.
    uint64_t magnitude = mantissa;
    if (fraction_digits < scale) {
      if (__builtin_mul_overflow(mantissa, kPowersOf10[scale - fraction_digits], &magnitude) ||
          magnitude > static_cast<uint64_t>(INT64_MAX)) {
        return false;
      }
    } else if (fraction_digits > scale) {
      const uint64_t divisor = kPowersOf10[fraction_digits - scale];
      const uint64_t remainder = mantissa % divisor;
      magnitude = mantissa / divisor + (remainder >= divisor - remainder ? 1 : 0);
    }
    *out = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    p = q;
    return true;
  }

  // A number as an integer: `*present` says whether it was one (and fit an int64).
  [[gnu::always_inline]] Scan ReadInteger(const char *&p, const char *end, int64_t *value,
                                          bool *present) {
    if (ReadScaledFast(p, end, 0, value)) {
      *present = true;
      return Scan::kOk;
    }
    *present = false;
    if (*p != '-' && !IsDigit(*p)) return SkipValue(p, end, 1);
    JsonNumber number;
    TFPROF_SCAN(Number(p, end, &number));
    *present = ToScaled(number, 0, value);
    return Scan::kOk;
  }

  // A non-negative integer: sets `*value` and `*present` only when it is one.
  Scan ReadUnsigned(const char *&p, const char *end, uint64_t *value, bool *present) {
    int64_t number = 0;
    bool read = false;
    TFPROF_SCAN(ReadInteger(p, end, &number, &read));
    if (read && number >= 0) {
      *value = static_cast<uint64_t>(number);
      *present = true;
    }
    return Scan::kOk;
  }

  // A string (views as String() gives them); anything else leaves `*text` as it was.
  Scan ReadText(const char *&p, const char *end, std::string_view *text, std::string *scratch) {
    if (*p != '"') return SkipValue(p, end, 1);
    return String(p, end, text, scratch);
  }

  // A string into `*out` (assigned, so a value scanned again replaces what it set).
  Scan ReadOwnedText(const char *&p, const char *end, std::string *out);

 private:
  // ReadScaledFast() reads only numbers this far from the window's end: at most 18 digits, a
  // sign and a point, and the byte after them.
  static constexpr ptrdiff_t kFastNumberBytes = 24;

  // The first '"' or '\\' in [p, end), else `end`: eight bytes at a time (names are short, and
  // memchr's setup costs more than it saves on them).
  [[gnu::always_inline]] static const char *FindQuoteOrBackslash(const char *p, const char *end) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHighBits = 0x8080808080808080ull;
    while (end - p >= 8) {
      uint64_t word = 0;
      std::memcpy(&word, p, 8);
      const uint64_t quotes = word ^ (kOnes * '"');
      const uint64_t backslashes = word ^ (kOnes * '\\');
      // A byte's high bit is set where it was zero; the lowest such bit is exact.
      const uint64_t found =
          (((quotes - kOnes) & ~quotes) | ((backslashes - kOnes) & ~backslashes)) & kHighBits;
      if (found != 0) {
        if constexpr (std::endian::native == std::endian::little) {
          return p + (__builtin_ctzll(found) >> 3);
        }
        break;
      }
      p += 8;
    }
    while (p < end && *p != '"' && *p != '\\') ++p;
    return p;
  }

  // ForEachMember() and ForEachCodedMember(): the keys compared with `memory` first when it is
  // not null.
  template <typename Classify, typename Member>
  Scan WalkMembers(const char *&p, const char *end, int depth, JsonKeyMemory *memory,
                   Classify &&classify, Member &&member);

  // The rest of a string from its first backslash at `stop`.
  [[gnu::noinline]] Scan EscapedString(const char *&p, const char *end, const char *stop,
                                       std::string_view *out, std::string *scratch);
  // The four hex digits of a "\uXXXX" at `q`.
  Scan Hex4(const char *q, const char *end, uint32_t *code);

  ByteSource &source_;
  const std::string &path_;
  const bool decompressed_;
  std::unique_ptr<char[]> window_;
  size_t capacity_;
  size_t pos_ = 0;
  size_t end_ = 0;
  uint64_t window_offset_ = 0;
  bool eof_ = false;
  absl::Status error_;
  uint64_t error_at_ = 0;
};

// ---- inline definitions ----

inline bool ToScaled(const JsonNumber &number, int scale, int64_t *out) {
  if (!number.simple) return DecimalToScaledInt(number.text, scale, out);
  uint64_t magnitude = number.mantissa;
  if (scale >= number.fraction_digits) {
    const uint64_t factor = kPowersOf10[scale - number.fraction_digits];
    if (magnitude > static_cast<uint64_t>(INT64_MAX) / factor) {
      return DecimalToScaledInt(number.text, scale, out);
    }
    magnitude *= factor;
  } else {
    const uint64_t divisor = kPowersOf10[number.fraction_digits - scale];
    const uint64_t remainder = magnitude % divisor;
    magnitude = magnitude / divisor + (remainder >= divisor - remainder ? 1 : 0);
  }
  *out = number.negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

inline Scan JsonScanner::Number(const char *&p, const char *end, JsonNumber *number) {
  const char *const start = p;
  const char *q = p;
  int digit_count = 0;
  uint64_t mantissa = 0;
  const auto digits = [&]() {
    const char *const first = q;
    while (q < end && IsDigit(*q)) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(*q - '0');
      ++q;
    }
    digit_count += static_cast<int>(q - first);
    return q != first;
  };
  number->negative = q < end && *q == '-';
  if (number->negative) ++q;
  if (q == end) return eof_ ? Fail(q, "truncated number") : Scan::kMore;
  if (*q == '0') {
    ++q;
    ++digit_count;
  } else if (!digits()) {
    return Fail(q, "invalid number");
  }
  const int integer_digits = digit_count;
  if (q < end && *q == '.') {
    ++q;
    if (!digits()) return q == end && !eof_ ? Scan::kMore : Fail(q, "invalid number");
  }
  bool exponent = false;
  if (q < end && (*q == 'e' || *q == 'E')) {
    exponent = true;
    ++q;
    if (q < end && (*q == '+' || *q == '-')) ++q;
    const uint64_t kept = mantissa;
    if (!digits()) return q == end && !eof_ ? Scan::kMore : Fail(q, "invalid number");
    mantissa = kept;
  }
  if (q == end && !eof_) return Scan::kMore;
  number->text = std::string_view(start, static_cast<size_t>(q - start));
  number->simple = !exponent && digit_count <= 18;
  number->mantissa = mantissa;
  number->fraction_digits = digit_count - integer_digits;
  p = q;
  return Scan::kOk;
}

template <typename Member>
Scan JsonScanner::ForEachMember(const char *&p, const char *end, int depth, Member &&member) {
  return WalkMembers(
      p, end, depth, nullptr, [](std::string_view) { return uint8_t{0}; },
      [&](uint8_t, std::string_view key, const char *&q, const char *e) {
        return member(key, q, e);
      });
}

template <typename Classify, typename Member>
Scan JsonScanner::ForEachCodedMember(const char *&p, const char *end, int depth,
                                     JsonKeyMemory &memory, Classify &&classify,
                                     Member &&member) {
  return WalkMembers(p, end, depth, &memory, classify, member);
}

template <typename Classify, typename Member>
Scan JsonScanner::WalkMembers(const char *&p, const char *end, int depth, JsonKeyMemory *memory,
                              Classify &&classify, Member &&member) {
  if (depth > kMaxNesting) return Fail(p, "JSON nested too deeply");
  ++p;  // '{'
  p = SkipWhitespace(p, end);
  if (p == end) return Scan::kMore;
  if (*p == '}') {
    ++p;
    return Scan::kOk;
  }
  std::string key_text;
  for (size_t place = 0;; ++place) {
    if (*p != '"') return Fail(p, "expected a key");
    std::string_view key;
    uint8_t code = 0;
    const JsonKeyMemory::Key *known = memory != nullptr ? memory->Match(place, p, end) : nullptr;
    if (known != nullptr) {
      key = std::string_view(p + 1, known->size - 3u);  // less the quotes and the colon
      code = known->code;
      p += known->size;
    } else {
      const char *const quote = p;
      TFPROF_SCAN(String(p, end, &key, &key_text));
      code = classify(key);
      // Remembered as its bytes are: only when they are the key (no escape) and the colon.
      if (memory != nullptr && p < end && *p == ':' && key.data() == quote + 1) {
        memory->Remember(place, quote, static_cast<size_t>(p + 1 - quote), code);
      }
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p != ':') return Fail(p, "expected ':' after a key");
      ++p;
    }
    p = SkipWhitespace(p, end);
    if (p == end) return Scan::kMore;
    TFPROF_SCAN(member(code, key, p, end));
    p = SkipWhitespace(p, end);
    if (p == end) return Scan::kMore;
    if (*p == '}') {
      ++p;
      return Scan::kOk;
    }
    if (*p != ',') return Fail(p, "expected ',' or '}' in an object");
    p = SkipWhitespace(p + 1, end);
    if (p == end) return Scan::kMore;
  }
}

template <typename Item>
Scan JsonScanner::ForEachItem(const char *&p, const char *end, int depth, Item &&item) {
  if (depth > kMaxNesting) return Fail(p, "JSON nested too deeply");
  ++p;  // '['
  p = SkipWhitespace(p, end);
  if (p == end) return Scan::kMore;
  if (*p == ']') {
    ++p;
    return Scan::kOk;
  }
  while (true) {
    TFPROF_SCAN(item(p, end));
    p = SkipWhitespace(p, end);
    if (p == end) return Scan::kMore;
    if (*p == ']') {
      ++p;
      return Scan::kOk;
    }
    if (*p != ',') return Fail(p, "expected ',' or ']' in an array");
    p = SkipWhitespace(p + 1, end);
    if (p == end) return Scan::kMore;
  }
}

inline Scan JsonScanner::SkipValue(const char *&p, const char *end, int depth) {
  if (p == end) return Scan::kMore;
  switch (*p) {
    case '"':
      return String(p, end, nullptr, nullptr);
    case '{':
      return ForEachMember(p, end, depth + 1,
                           [&](std::string_view, const char *&q, const char *e) {
                             return SkipValue(q, e, depth + 1);
                           });
    case '[':
      return ForEachItem(p, end, depth + 1, [&](const char *&q, const char *e) {
        return SkipValue(q, e, depth + 1);
      });
    case 't':
      return Literal(p, end, "true");
    case 'f':
      return Literal(p, end, "false");
    case 'n':
      return Literal(p, end, "null");
    default: {
      if (*p != '-' && !IsDigit(*p)) return Fail(p, "invalid JSON value");
      JsonNumber ignored;
      return Number(p, end, &ignored);
    }
  }
}

}  // namespace tfprof
