// AppendJsonString, FormatMicros and FormatDouble: the pieces every JSON writer is built from,
// and EventText, which writers assemble events with.
#include "runtime/common/json_text.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/json_event_text.h"

namespace {

using tfprof::AppendJsonString;
using tfprof::EventText;
using tfprof::FormatDouble;
using tfprof::FormatMicros;
using tfprof::MicrosFormatter;
using tfprof::PlainJsonPrefix;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

std::string Quote(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
  return out;
}

// Parses the quoted text as a JSON document and returns the decoded string.
std::string Decode(const std::string &quoted) {
  return nlohmann::json::parse(quoted).get<std::string>();
}

std::string Micros(int64_t ns) {
  char buffer[32];
  const size_t length = FormatMicros(ns, buffer);
  return std::string(buffer, length);
}

std::string Double(double value) {
  char buffer[32];
  const size_t length = FormatDouble(value, buffer);
  return std::string(buffer, length);
}

std::string Repeat(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out.append(piece);
  return out;
}

}  // namespace

TEST_CASE("json_text: plain ASCII is quoted and copied unchanged") {
  CHECK(Quote("") == "\"\"");
  CHECK(Quote("hello world") == "\"hello world\"");
  CHECK(Quote("a/b:c{d}[e]") == "\"a/b:c{d}[e]\"");
  CHECK(Decode(Quote("hello world")) == "hello world");
}

// What a JSON string holds for one ASCII byte, spelled out byte by byte (the escapes above).
std::string EscapedAscii(unsigned char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: break;
  }
  if (c < 0x20 || c == 0x7F) {
    char escaped[7];
    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
    return escaped;
  }
  return std::string(1, static_cast<char>(c));
}

TEST_CASE("json_text: each ASCII byte escapes the same at every place of a long string") {
  // The copy runs eight bytes at a time: a byte that needs escaping is found at each of the eight
  // places of a word, after a word of plain bytes, and at the short tail.
  for (unsigned value = 0; value < 0x80; ++value) {
    const auto c = static_cast<unsigned char>(value);
    for (size_t at = 0; at < 21; ++at) {
      std::string text(21, 'a');
      text[at] = static_cast<char>(c);
      text[20 - at] = ' ';  // a second byte, plain, where the first is not
      text[at] = static_cast<char>(c);
      std::string expected = "\"";
      for (const char byte : text) expected += EscapedAscii(static_cast<unsigned char>(byte));
      expected += "\"";
      CAPTURE(value);
      CAPTURE(at);
      REQUIRE(Quote(text) == expected);
    }
  }
  // A multibyte character after plain bytes, and a byte that starts none.
  CHECK(Quote("abcdefgh\xC3\xA9ijklmnop") == "\"abcdefgh\xC3\xA9ijklmnop\"");
  CHECK(Quote("abcdefg\xFFhijklmnop") == std::string("\"abcdefg") + std::string(kReplacement) +
                                              "hijklmnop\"");
}

TEST_CASE("json_text: PlainJsonPrefix stops at the first byte to escape, at any length") {
  // Texts shorter than a word, whole words, and a word and a tail (read as the text's last eight
  // bytes, overlapping the plain ones before them).
  for (const unsigned char special : {'"', '\\', '\n', '\x1f', '\x7f', '\x80', '\xff'}) {
    for (size_t length = 1; length <= 24; ++length) {
      std::string plain(length, 'a');
      CHECK(PlainJsonPrefix(plain) == length);
      for (size_t at = 0; at < length; ++at) {
        std::string text = plain;
        text[at] = static_cast<char>(special);
        if (at + 1 < length) text[length - 1] = static_cast<char>(special);  // a later one too
        CAPTURE(static_cast<unsigned>(special));
        CAPTURE(length);
        CAPTURE(at);
        REQUIRE(PlainJsonPrefix(text) == at);
      }
    }
  }
  CHECK(PlainJsonPrefix("") == 0);
}

TEST_CASE("json_text: EventText's JsonString writes what AppendJsonString writes") {
  const std::string long_plain(1000, 'x');  // more than EventText holds: appended directly
  const std::string long_escaped = std::string(300, 'y') + "\"\n" + std::string(300, 'z');
  for (const std::string_view value :
       {std::string_view("MatMul"), std::string_view(""), std::string_view("a\"b"),
        std::string_view("caf\xC3\xA9"), std::string_view("bad\xFF"), std::string_view(long_plain),
        std::string_view(long_escaped)}) {
    // After enough text that the value crosses the stack buffer's end at some offset.
    for (size_t before = 0; before < 500; before += 37) {
      std::string got;
      {
        EventText text(got);
        text.Add(std::string(before, '-'));
        text.JsonString(value);
        text.Add('!');
      }
      std::string expected(before, '-');
      AppendJsonString(expected, value);
      expected += '!';
      CAPTURE(value.size());
      CAPTURE(before);
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("json_text: EventText's integers and short texts, wherever the buffer stands") {
  const int64_t signed_values[] = {0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 12345,
                                   -1, -9, -10, -9999, -10000, std::numeric_limits<int64_t>::max(),
                                   std::numeric_limits<int64_t>::min()};
  const uint64_t unsigned_values[] = {0, 7, 9999, 10000, std::numeric_limits<uint64_t>::max()};
  // Short texts of distinct bytes (a copy from the wrong offset shows), each in a buffer of
  // exactly its size (ASan sees a read past it).
  const std::string_view letters = "0123456789abcdefghij";
  std::vector<std::unique_ptr<char[]>> texts;
  for (size_t size = 0; size <= letters.size(); ++size) {
    texts.push_back(std::make_unique<char[]>(size == 0 ? 1 : size));
    std::memcpy(texts.back().get(), letters.data(), size);
  }
  // Several events' worth, so that each value lands at many offsets of the stack buffer.
  for (size_t before = 0; before < 520; before += 13) {
    std::string got;
    std::string expected(before, '-');
    {
      EventText text(got);
      text.Add(std::string(before, '-'));
      for (const int64_t value : signed_values) {
        text.Int(value);
        text.Add(',');
        expected += std::to_string(value) + ",";
      }
      for (const uint64_t value : unsigned_values) {
        text.Uint(value);
        text.Add(',');
        expected += std::to_string(value) + ",";
      }
      for (size_t size = 0; size < texts.size(); ++size) {
        const std::string_view view(texts[size].get(), size);
        text.AddShort(view);
        expected += view;
      }
    }
    CAPTURE(before);
    REQUIRE(got == expected);
  }
}

TEST_CASE("json_text: AppendJsonString appends to what the string already holds") {
  std::string out = "prefix:";
  AppendJsonString(out, "x");
  AppendJsonString(out, "y");
  CHECK(out == "prefix:\"x\"\"y\"");
}

TEST_CASE("json_text: quote and backslash are escaped") {
  CHECK(Quote("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(Quote("C:\\path\\") == "\"C:\\\\path\\\\\"");
  CHECK(Decode(Quote("say \"hi\" \\ there")) == "say \"hi\" \\ there");
}

TEST_CASE("json_text: named control escapes") {
  CHECK(Quote("\n") == "\"\\n\"");
  CHECK(Quote("\r") == "\"\\r\"");
  CHECK(Quote("\t") == "\"\\t\"");
  CHECK(Quote("\b") == "\"\\b\"");
  CHECK(Quote("\f") == "\"\\f\"");
  CHECK(Quote("a\nb\rc\td\be\ff") == "\"a\\nb\\rc\\td\\be\\ff\"");
  CHECK(Decode(Quote("a\nb\rc\td\be\ff")) == "a\nb\rc\td\be\ff");
}

TEST_CASE("json_text: other control characters become \\u00XX with lowercase hex") {
  CHECK(Quote(std::string_view("\0", 1)) == "\"\\u0000\"");
  CHECK(Quote("\x01") == "\"\\u0001\"");
  CHECK(Quote("\x0b") == "\"\\u000b\"");
  CHECK(Quote("\x1f") == "\"\\u001f\"");
  CHECK(Quote("\x1b[0m") == "\"\\u001b[0m\"");
  // 0x20 (space) is the first byte that is copied.
  CHECK(Quote(" ") == "\" \"");

  // Every control character round-trips through a real parser.
  std::string all;
  for (int c = 0; c < 0x20; ++c) all.push_back(static_cast<char>(c));
  CHECK(Decode(Quote(all)) == all);
}

TEST_CASE("json_text: DEL 0x7f is escaped as \\u007f") {
  CHECK(Quote("\x7f") == "\"\\u007f\"");
  CHECK(Quote("a\x7f" "b") == "\"a\\u007fb\"");
  CHECK(Decode(Quote("\x7f")) == "\x7f");
}

TEST_CASE("json_text: valid UTF-8 of every length is copied unchanged") {
  const std::string two = "\xC3\xA9";                 // U+00E9
  const std::string two_low = "\xC2\x80";             // U+0080, smallest two-byte form
  const std::string two_high = "\xDF\xBF";            // U+07FF
  const std::string three = "\xE2\x82\xAC";           // U+20AC euro sign
  const std::string three_low = "\xE0\xA0\x80";       // U+0800, smallest three-byte form
  const std::string three_before_surrogates = "\xED\x9F\xBF";  // U+D7FF
  const std::string three_after_surrogates = "\xEE\x80\x80";   // U+E000
  const std::string three_high = "\xEF\xBF\xBF";      // U+FFFF
  const std::string four = "\xF0\x9F\x98\x80";        // U+1F600
  const std::string four_low = "\xF0\x90\x80\x80";    // U+10000
  const std::string four_high = "\xF4\x8F\xBF\xBF";   // U+10FFFF, the last code point
  for (const std::string &text :
       {two, two_low, two_high, three, three_low, three_before_surrogates, three_after_surrogates,
        three_high, four, four_low, four_high}) {
    CAPTURE(text);
    CHECK(Quote(text) == "\"" + text + "\"");
    CHECK(Decode(Quote(text)) == text);
  }
  const std::string mixed = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80!";
  CHECK(Quote(mixed) == "\"" + mixed + "\"");
}

TEST_CASE("json_text: a lone continuation byte becomes one U+FFFD") {
  const std::string quoted = Quote("a\x80z");
  CHECK(quoted == "\"a" + std::string(kReplacement) + "z\"");
  CHECK(Decode(quoted) == "a" + std::string(kReplacement) + "z");
  CHECK(Quote("\xBF") == "\"" + std::string(kReplacement) + "\"");
}

TEST_CASE("json_text: an overlong two-byte form becomes one U+FFFD per byte") {
  // C0 AF is an overlong '/': C0 is never a valid lead, AF is then a lone continuation.
  const std::string expected = "\"" + Repeat(kReplacement, 2) + "\"";
  CHECK(Quote("\xC0\xAF") == expected);
  CHECK(Quote("\xC1\xBF") == expected);
  // An overlong three-byte form (E0 80 AF) fails as a whole, byte by byte.
  CHECK(Quote("\xE0\x80\xAF") == "\"" + Repeat(kReplacement, 3) + "\"");
  // Overlong four-byte form (F0 80 80 AF).
  CHECK(Quote("\xF0\x80\x80\xAF") == "\"" + Repeat(kReplacement, 4) + "\"");
  CHECK(Decode(Quote("\xC0\xAF")) == Repeat(kReplacement, 2));
}

TEST_CASE("json_text: a sequence truncated by the end of the text becomes U+FFFD per byte") {
  CHECK(Quote("ab\xE2\x82") == "\"ab" + Repeat(kReplacement, 2) + "\"");
  CHECK(Quote("ab\xC3") == "\"ab" + std::string(kReplacement) + "\"");
  CHECK(Quote("\xF0\x9F\x98") == "\"" + Repeat(kReplacement, 3) + "\"");
  CHECK(Decode(Quote("ab\xE2\x82")) == "ab" + Repeat(kReplacement, 2));
}

TEST_CASE("json_text: a sequence cut short by an ASCII byte keeps the ASCII byte") {
  CHECK(Quote("\xE2\x82" "A") == "\"" + Repeat(kReplacement, 2) + "A\"");
  CHECK(Quote("\xC3\"") == "\"" + std::string(kReplacement) + "\\\"\"");
}

TEST_CASE("json_text: UTF-16 surrogates encoded in UTF-8 are invalid") {
  CHECK(Quote("\xED\xA0\x80") == "\"" + Repeat(kReplacement, 3) + "\"");  // U+D800
  CHECK(Quote("\xED\xBF\xBF") == "\"" + Repeat(kReplacement, 3) + "\"");  // U+DFFF
  CHECK(Decode(Quote("x\xED\xA0\x80y")) == "x" + Repeat(kReplacement, 3) + "y");
}

TEST_CASE("json_text: lead bytes F5 and above and code points past U+10FFFF are invalid") {
  for (const char *lead : {"\xF5", "\xF8", "\xFB", "\xFC", "\xFE", "\xFF"}) {
    CAPTURE(lead);
    CHECK(Quote(lead) == "\"" + std::string(kReplacement) + "\"");
  }
  // F5 followed by continuation bytes: every byte is replaced.
  CHECK(Quote("\xF5\x80\x80\x80") == "\"" + Repeat(kReplacement, 4) + "\"");
  // F4 90 80 80 would be U+110000.
  CHECK(Quote("\xF4\x90\x80\x80") == "\"" + Repeat(kReplacement, 4) + "\"");
  CHECK(Decode(Quote("\xFF\xFE")) == Repeat(kReplacement, 2));
}

TEST_CASE("json_text: valid text resumes right after an invalid byte") {
  const std::string text = "\x80\xC3\xA9\xFF\xE2\x82\xAC";
  const std::string expected = std::string(kReplacement) + "\xC3\xA9" +
                               std::string(kReplacement) + "\xE2\x82\xAC";
  CHECK(Quote(text) == "\"" + expected + "\"");
  CHECK(Decode(Quote(text)) == expected);
}

TEST_CASE("json_text: every single byte value yields a parseable JSON string") {
  for (int value = 0; value < 256; ++value) {
    CAPTURE(value);
    const std::string text(1, static_cast<char>(value));
    const std::string decoded = Decode(Quote(text));
    if (value < 0x80) {
      CHECK(decoded == text);
    } else {
      CHECK(decoded == kReplacement);
    }
  }
}

TEST_CASE("json_text: FormatMicros writes microseconds with exactly three decimals") {
  CHECK(Micros(0) == "0.000");
  CHECK(Micros(1) == "0.001");
  CHECK(Micros(10) == "0.010");
  CHECK(Micros(100) == "0.100");
  CHECK(Micros(999) == "0.999");
  CHECK(Micros(1000) == "1.000");
  CHECK(Micros(1500) == "1.500");
  CHECK(Micros(1234567) == "1234.567");
  CHECK(Micros(1000000007) == "1000000.007");
}

TEST_CASE("json_text: FormatMicros writes negative values with a leading minus") {
  CHECK(Micros(-1) == "-0.001");
  CHECK(Micros(-999) == "-0.999");
  CHECK(Micros(-1000) == "-1.000");
  CHECK(Micros(-1234567) == "-1234.567");
}

TEST_CASE("json_text: FormatMicros handles the int64 extremes") {
  CHECK(Micros(std::numeric_limits<int64_t>::max()) == "9223372036854775.807");
  CHECK(Micros(std::numeric_limits<int64_t>::min()) == "-9223372036854775.808");
  CHECK(Micros(std::numeric_limits<int64_t>::min() + 1) == "-9223372036854775.807");
  // A realistic CLOCK_MONOTONIC timestamp (about 11.5 days of uptime).
  CHECK(Micros(987654321012345) == "987654321012.345");
}

TEST_CASE("json_text: FormatMicros returns the length it wrote and writes nothing past it") {
  char buffer[32];
  std::fill(std::begin(buffer), std::end(buffer), '#');
  const size_t length = FormatMicros(-1234567, buffer);
  CHECK(length == 9);
  CHECK(std::string_view(buffer, length) == "-1234.567");
  CHECK(buffer[length] == '#');
}

TEST_CASE("json_text: FormatMicros agrees with printf at every digit count of the whole part") {
  // The short whole parts take their own path (pairs of digits); each length boundary is checked
  // against the C library's formatting of the same value.
  for (int64_t whole = 1; whole <= 100000000; whole *= 10) {
    for (int64_t micros : {whole - 1, whole, whole + 1, 2 * whole - 1, 9 * whole, 10 * whole - 1}) {
      for (int64_t fraction : {int64_t{0}, int64_t{7}, int64_t{45}, int64_t{999}}) {
        for (int64_t sign : {int64_t{1}, int64_t{-1}}) {
          const int64_t ns = sign * (micros * 1000 + fraction);
          char expected[40];
          std::snprintf(expected, sizeof expected, "%s%lld.%03lld", ns < 0 ? "-" : "",
                        static_cast<long long>(micros), static_cast<long long>(fraction));
          CAPTURE(ns);
          CHECK(Micros(ns) == std::string(ns == 0 ? "0.000" : expected));
        }
      }
    }
  }
}

TEST_CASE("json_text: FormatMicros output parses as the same JSON number") {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{1500}, int64_t{1234567},
                     int64_t{-987654321}}) {
    CAPTURE(ns);
    const double parsed = nlohmann::json::parse(Micros(ns)).get<double>();
    CHECK(parsed == doctest::Approx(static_cast<double>(ns) / 1000.0));
  }
}

TEST_CASE("json_text: FormatDouble writes the shortest round-trip form") {
  CHECK(Double(0.0) == "0");
  CHECK(Double(1.0) == "1");
  CHECK(Double(-2.5) == "-2.5");
  CHECK(Double(0.1) == "0.1");
  CHECK(Double(1.0 / 3.0) == "0.3333333333333333");
  CHECK(Double(123456789.0) == "123456789");
  CHECK(Double(1e21) == "1e+21");
  CHECK(Double(5e-324) == "5e-324");
  CHECK(Double(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");

  for (double value : {0.1, 1.0 / 3.0, 2.0 / 7.0, 1e-300, 6.02214076e23, -123.456,
                       std::numeric_limits<double>::min(), std::numeric_limits<double>::max()}) {
    CAPTURE(value);
    const std::string text = Double(value);
    CHECK(std::stod(text) == value);
    CHECK(nlohmann::json::parse(text).get<double>() == value);
  }
}

TEST_CASE("json_text: FormatDouble quotes NaN and infinities, and NonFiniteAt reads them back") {
  CHECK(Double(std::numeric_limits<double>::quiet_NaN()) == "\"NaN\"");
  CHECK(Double(-std::numeric_limits<double>::quiet_NaN()) == "\"NaN\"");
  CHECK(Double(std::numeric_limits<double>::infinity()) == "\"Infinity\"");
  CHECK(Double(-std::numeric_limits<double>::infinity()) == "\"-Infinity\"");
  // Still JSON: a string where the number would be.
  CHECK(nlohmann::json::parse(Double(std::nan(""))) == "NaN");
  size_t size = 0;
  const std::optional<double> nan = tfprof::NonFiniteAt("\"NaN\"}", &size);
  REQUIRE(nan.has_value());
  CHECK(std::isnan(*nan));
  CHECK(size == 5);
  CHECK(tfprof::NonFiniteAt("\"Infinity\",", &size) == std::numeric_limits<double>::infinity());
  CHECK(size == 10);
  CHECK(tfprof::NonFiniteAt("\"-Infinity\"", &size) == -std::numeric_limits<double>::infinity());
  CHECK(size == 11);
  // Anything else (another string, a cut spelling, other case) is not one.
  CHECK_FALSE(tfprof::NonFiniteAt("\"nan\"", &size).has_value());
  CHECK_FALSE(tfprof::NonFiniteAt("\"Infin", &size).has_value());
  CHECK_FALSE(tfprof::NonFiniteAt("\"NaNa\"", &size).has_value());
  CHECK_FALSE(tfprof::NonFiniteAt("NaN", &size).has_value());
}

TEST_CASE("json_text: MicrosFormatter writes what FormatMicros writes, for streams of timestamps") {
  MicrosFormatter formatter;
  const auto check = [&](int64_t ns) {
    char expected[32];
    char got[32];
    const size_t expected_size = FormatMicros(ns, expected);
    const size_t got_size = formatter.Format(ns, got);
    INFO(ns);
    REQUIRE(std::string(got, got_size) == std::string(expected, expected_size));
  };
  // Across the reuse boundary (10 ms of whole microseconds), small values, negatives, extremes.
  for (int64_t ns = 9'990'000'000; ns < 10'020'000'000; ns += 777) check(ns);
  for (int64_t ns = 1'795'604'202'256'044'677; ns < 1'795'604'202'296'044'677; ns += 99'991) check(ns);
  for (const int64_t ns : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{9'999'999}, int64_t{10'000'000},
                           int64_t{-1}, int64_t{-10'000'001}, std::numeric_limits<int64_t>::max(),
                           std::numeric_limits<int64_t>::min(), int64_t{4'953'770'559'455'123}}) {
    check(ns);
  }
  // Going back to a high part seen before still formats it afresh.
  check(20'000'000'000);
  check(10'000'000'000);
  check(20'000'000'001);
}

TEST_CASE("json_text: MicrosFormatter's FormatWhole writes ns / 1000 as C++ divides") {
  MicrosFormatter formatter;
  const auto check = [&](int64_t ns) {
    char got[32];
    const size_t got_size = formatter.FormatWhole(ns, got);
    INFO(ns);
    REQUIRE(std::string(got, got_size) == std::to_string(ns / 1000));
  };
  for (int64_t ns = 9'990'000'000; ns < 10'020'000'000; ns += 777) check(ns);
  for (int64_t ns = 1'700'000'000'000'000'000; ns < 1'700'000'000'040'000'000; ns += 99'991) {
    check(ns);
  }
  for (const int64_t ns : {int64_t{0}, int64_t{999}, int64_t{1000}, int64_t{9'999'999},
                           int64_t{10'000'000}, int64_t{-1}, int64_t{-999}, int64_t{-1000},
                           int64_t{-10'000'001}, std::numeric_limits<int64_t>::max(),
                           std::numeric_limits<int64_t>::min()}) {
    check(ns);
  }
  // Whole and fractional forms share the cached high digits.
  char text[32];
  CHECK(std::string(text, formatter.Format(12'345'678'901, text)) == "12345678.901");
  CHECK(std::string(text, formatter.FormatWhole(12'345'999'999, text)) == "12345999");
  CHECK(std::string(text, formatter.Format(12'345'999'999, text)) == "12345999.999");
}
