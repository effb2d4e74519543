// The streaming JSON scanner the Chrome trace reader walks its files with: numbers to scaled
// integers, strings with their escapes and UTF-8, errors at their byte offsets, and values cut by
// the window's end, scanned again whole after a refill.
#include "runtime/common/json_scanner.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/string_byte_source.h"

namespace {

using tfprof::JsonNumber;
using tfprof::JsonScanner;
using tfprof::Scan;
using tfprof_test::StringSource;

// A scanner over `text` with a window of `window` bytes filled `chunk` bytes a read.
struct Scanner {
  Scanner(std::string text, size_t window = 1 << 16, size_t chunk = 1 << 16,
          bool decompressed = false)
      : source(std::move(text), chunk), json(source, path, decompressed, window) {}

  // Scans one unit with `scan(p, end)` as a reader does: from the unit's start again after each
  // refill, until it is whole (kOk), wrong (kError), or the data ends first (kMore).
  template <typename Unit>
  Scan Run(Unit &&unit) {
    while (true) {
      const char *p = JsonScanner::SkipWhitespace(json.position(), json.end());
      json.set_position(p);
      if (p != json.end()) {
        const Scan scan = unit(p, json.end());
        if (scan == Scan::kOk) json.set_position(p);
        if (scan != Scan::kMore) return scan;
      }
      if (json.eof()) return Scan::kMore;
      REQUIRE(json.Refill().ok());
    }
  }

  // The decoded string at the data's start.
  std::string String() {
    std::string_view text;
    std::string scratch;
    const Scan scan =
        Run([&](const char *&p, const char *end) { return json.String(p, end, &text, &scratch); });
    REQUIRE(scan == Scan::kOk);
    return std::string(text);
  }

  // The error message of scanning the value at the data's start.
  std::string SkipError() {
    const Scan scan =
        Run([&](const char *&p, const char *end) { return json.SkipValue(p, end, 0); });
    REQUIRE(scan == Scan::kError);
    return std::string(json.error().message());
  }

  std::string path = "t.json";
  StringSource source;
  JsonScanner json;
};

// The JSON number `text` scanned whole and scaled by 10^scale; false when it is out of range.
bool Scaled(const std::string &text, int scale, int64_t *out) {
  Scanner scanner(text);
  JsonNumber number;
  REQUIRE(scanner.Run([&](const char *&p, const char *end) {
    return scanner.json.Number(p, end, &number);
  }) == Scan::kOk);
  CHECK(number.text == text);
  const bool fits = ToScaled(number, scale, out);
  int64_t again = 0;
  CHECK(tfprof::DecimalToScaledInt(text, scale, &again) == fits);  // the slow path agrees
  if (fits) CHECK(again == *out);
  return fits;
}

TEST_CASE("json_scanner: numbers become integers scaled by powers of ten, rounded to nearest") {
  int64_t value = 0;
  CHECK(Scaled("12.345", 3, &value));
  CHECK(value == 12345);
  CHECK(Scaled("12", 3, &value));
  CHECK(value == 12000);
  CHECK(Scaled("-7.25", 0, &value));
  CHECK(value == -7);
  CHECK(Scaled("0.0005", 3, &value));  // half a unit rounds away from zero
  CHECK(value == 1);
  CHECK(Scaled("-0.0005", 3, &value));
  CHECK(value == -1);
  CHECK(Scaled("0.00049", 3, &value));
  CHECK(value == 0);
  CHECK(Scaled("1.5e3", 3, &value));  // exponents take the exact path
  CHECK(value == 1500000);
  CHECK(Scaled("25E-1", 0, &value));
  CHECK(value == 3);
  CHECK(Scaled("123456789012345678", 0, &value));  // 18 digits: the fast path
  CHECK(value == 123456789012345678);
  CHECK(Scaled("9223372036854775807", 0, &value));  // 19 digits: the exact path, INT64_MAX
  CHECK(value == INT64_MAX);
  CHECK(Scaled("-9223372036854775808", 0, &value));
  CHECK(value == INT64_MIN);
  CHECK_FALSE(Scaled("9223372036854775808", 0, &value));
  CHECK_FALSE(Scaled("1e400", 0, &value));
  CHECK(Scaled("1e-400", 0, &value));
  CHECK(value == 0);
  CHECK_FALSE(tfprof::DecimalToScaledInt("1.", 0, &value));
  CHECK_FALSE(tfprof::DecimalToScaledInt("+1", 0, &value));
  CHECK_FALSE(tfprof::DecimalToScaledInt("1x", 0, &value));
}

TEST_CASE("json_scanner: the fast number path reads what the exact path reads, or declines") {
  // Followed by enough bytes for the fast path; each number is read at scales 0 and 3 and must
  // give DecimalToScaledInt()'s answer and end where the number does, or decline (false, `p`
  // unmoved) and leave it to Number().
  const std::string after = ",                        ";
  std::vector<std::string> numbers = {
      "0", "-0", "7", "211", "4242", "2000000000", "1000302.000", "3.500", "0.001", "0.0005",
      "-7.25", "0.00049", "123456789012345678", "12345678901234567.8", "9223372036854775.807",
      "1234567890123456789", "1.5e3", "25E-1", "01", "-01", "1.", "-", "-a", "1.x", "00.5",
      "9223372036854775807", "999999999999999999"};
  for (int digits = 1; digits <= 20; ++digits) {
    numbers.push_back(std::string(static_cast<size_t>(digits), '9'));
    numbers.push_back("0." + std::string(static_cast<size_t>(digits), '5'));
  }
  int declined = 0;
  for (const std::string &text : numbers) {
    for (const int scale : {0, 3}) {
      CAPTURE(text);
      CAPTURE(scale);
      const std::string data = text + after;
      const char *p = data.data();
      int64_t fast = 0;
      if (!JsonScanner::ReadScaledFast(p, data.data() + data.size(), scale, &fast)) {
        CHECK(p == data.data());
        ++declined;
        continue;
      }
      int64_t exact = 0;
      REQUIRE(tfprof::DecimalToScaledInt(text, scale, &exact));
      CHECK(fast == exact);
      CHECK(p == data.data() + text.size());
    }
  }
  CHECK(declined > 20);  // exponents, 19+ digits, leading zeros and malformed ones decline
  // Near the window's end it declines: the byte-by-byte path knows where the data ends.
  const std::string short_data = "12";
  const char *p = short_data.data();
  int64_t value = 0;
  CHECK_FALSE(JsonScanner::ReadScaledFast(p, p + short_data.size(), 0, &value));
  // Through the readers that use it, with known answers.
  Scanner scanner("[211, 1000302.125, 18446744073709551616, -3" + std::string(30, ' ') + "]");
  std::vector<int64_t> integers;
  std::vector<bool> present;
  REQUIRE(scanner.Run([&](const char *&q, const char *end) {
    return scanner.json.ForEachItem(q, end, 0, [&](const char *&r, const char *e) {
      int64_t v = 0;
      bool is = false;
      TFPROF_SCAN(scanner.json.ReadInteger(r, e, &v, &is));
      integers.push_back(v);
      present.push_back(is);
      return Scan::kOk;
    });
  }) == Scan::kOk);
  REQUIRE(integers.size() == 4);
  CHECK(integers[0] == 211);
  CHECK(integers[1] == 1000302);  // an integer read of a decimal rounds
  CHECK_FALSE(present[2]);        // beyond int64
  CHECK(integers[3] == -3);
}

TEST_CASE("json_scanner: malformed numbers are errors at their byte") {
  CHECK(Scanner("-a").SkipError() == "t.json: byte 1: invalid number");
  CHECK(Scanner("1.x").SkipError() == "t.json: byte 2: invalid number");
  CHECK(Scanner("1e]").SkipError() == "t.json: byte 2: invalid number");
  CHECK(Scanner("-").SkipError() == "t.json: byte 1: truncated number");
  CHECK(Scanner("[1.]").SkipError() == "t.json: byte 3: invalid number");
  CHECK(Scanner("tru").SkipError() == "t.json: byte 3: truncated JSON value");
  CHECK(Scanner("nul!").SkipError() == "t.json: byte 0: invalid JSON value");
}

TEST_CASE("json_scanner: strings decode their escapes and keep UTF-8 as it is") {
  CHECK(Scanner(R"("plain")").String() == "plain");
  CHECK(Scanner(R"("a\n\"b\\c\/\t")").String() == "a\n\"b\\c/\t");
  CHECK(Scanner(R"("caf\u00e9 \u20ac")").String() == "caf\xC3\xA9 \xE2\x82\xAC");
  CHECK(Scanner("\"\xE6\x97\xA5\xE6\x9C\xAC\"").String() == "\xE6\x97\xA5\xE6\x9C\xAC");
  // A surrogate pair is one code point; a lone half is U+FFFD.
  CHECK(Scanner(R"("\ud83d\ude00")").String() == "\xF0\x9F\x98\x80");
  CHECK(Scanner(R"("\ud83dx")").String() == "\xEF\xBF\xBDx");
  CHECK(Scanner(R"("\ude00")").String() == "\xEF\xBF\xBD");
  CHECK(Scanner(R"("\ud83d\u0041")").String() == "\xEF\xBF\xBD" "A");
}

TEST_CASE("json_scanner: a string without escapes views the window; with them, the scratch") {
  Scanner plain(R"("name")");
  std::string_view text;
  std::string scratch = "untouched";
  REQUIRE(plain.Run([&](const char *&p, const char *end) {
    return plain.json.String(p, end, &text, &scratch);
  }) == Scan::kOk);
  CHECK(text.data() >= plain.json.begin());
  CHECK(text.data() < plain.json.end());
  CHECK(scratch == "untouched");

  Scanner escaped(R"("a\tb")");
  REQUIRE(escaped.Run([&](const char *&p, const char *end) {
    return escaped.json.String(p, end, &text, &scratch);
  }) == Scan::kOk);
  CHECK(text.data() == scratch.data());
  CHECK(text == "a\tb");
}

TEST_CASE("json_scanner: bad escapes are errors at the backslash") {
  CHECK(Scanner(R"("ab\x")").SkipError() == "t.json: byte 3: invalid escape in a string");
  CHECK(Scanner(R"("\u12g4")").SkipError() == "t.json: byte 1: invalid \\u escape in a string");
}

TEST_CASE("json_scanner: structure errors name their byte; offsets in decompressed data say so") {
  CHECK(Scanner(R"({"a":1 "b":2})").SkipError() ==
        "t.json: byte 7: expected ',' or '}' in an object");
  CHECK(Scanner(R"({"a" 1})").SkipError() == "t.json: byte 5: expected ':' after a key");
  CHECK(Scanner(R"({1:2})").SkipError() == "t.json: byte 1: expected a key");
  CHECK(Scanner("[1 2]").SkipError() == "t.json: byte 3: expected ',' or ']' in an array");
  CHECK(Scanner("[1,]").SkipError() == "t.json: byte 3: invalid JSON value");
  CHECK(Scanner(std::string(201, '[')).SkipError() == "t.json: byte 200: JSON nested too deeply");
  Scanner gzip("[1 2]", 1 << 16, 1 << 16, /*decompressed=*/true);
  CHECK(gzip.SkipError() ==
        "t.json: byte 3: expected ',' or ']' in an array (offset in the decompressed data)");
  CHECK(absl::IsDataLoss(gzip.json.error()));
  CHECK(gzip.json.error_offset() == 3);
}

TEST_CASE("json_scanner: a value the data ends inside is kMore at the end, not an error") {
  for (const std::string text : {R"({"a":[1,2)", R"("abc)", R"("\u12)", "[", "{\"k\""}) {
    Scanner scanner(text);
    CHECK_MESSAGE(scanner.Run([&](const char *&p, const char *end) {
      return scanner.json.SkipValue(p, end, 0);
    }) == Scan::kMore, text);
    CHECK(scanner.json.eof());
  }
}

TEST_CASE("json_scanner: a number or literal the data ends inside is an error at the end") {
  // The reader takes an error at the very end of the data as the file ending early.
  Scanner number("12.5e");
  CHECK(number.SkipError() == "t.json: byte 5: invalid number");
  CHECK(number.json.error_offset() == number.json.OffsetOf(number.json.end()));
  Scanner literal("[fals");
  CHECK(literal.SkipError() == "t.json: byte 5: truncated JSON value");
}

TEST_CASE("json_scanner: members and items, in order, with their keys decoded") {
  Scanner scanner(R"({"a": 1, "b\n": [true, null, "x", {"c": -2.5e1}], "": {}})");
  std::vector<std::string> keys;
  std::vector<std::string> items;
  REQUIRE(scanner.Run([&](const char *&p, const char *end) {
    keys.clear();
    items.clear();
    return scanner.json.ForEachMember(p, end, 0, [&](std::string_view key, const char *&q,
                                                     const char *e) {
      keys.emplace_back(key);
      if (*q != '[') return scanner.json.SkipValue(q, e, 1);
      return scanner.json.ForEachItem(q, e, 1, [&](const char *&r, const char *f) {
        const char *const start = r;
        const Scan scan = scanner.json.SkipValue(r, f, 2);
        items.emplace_back(start, static_cast<size_t>(r - start));
        return scan;
      });
    });
  }) == Scan::kOk);
  CHECK(keys == std::vector<std::string>{"a", "b\n", ""});
  CHECK(items == std::vector<std::string>{"true", "null", "\"x\"", R"({"c": -2.5e1})"});
}

TEST_CASE("json_scanner: typed reads take their type and pass over any other value") {
  Scanner scanner(R"([7, -3, "text", {"n": 1}, 12.6, "esc\u0041ped"])");
  int64_t integer = 0;
  uint64_t count = 99;
  bool present = false;
  std::string owned;
  std::string_view text;
  std::string scratch;
  int item = 0;
  REQUIRE(scanner.Run([&](const char *&p, const char *end) {
    item = 0;
    return scanner.json.ForEachItem(p, end, 0, [&](const char *&q, const char *e) {
      switch (item++) {
        case 0: {
          const Scan scan = scanner.json.ReadInteger(q, e, &integer, &present);
          CHECK((present && integer == 7));
          return scan;
        }
        case 1: {
          present = false;  // ReadUnsigned only ever sets it
          const Scan scan = scanner.json.ReadUnsigned(q, e, &count, &present);
          CHECK_FALSE(present);  // negative: not a count, left as it was
          CHECK(count == 99);
          return scan;
        }
        case 2: {
          const Scan scan = scanner.json.ReadInteger(q, e, &integer, &present);
          CHECK_FALSE(present);
          return scan;
        }
        case 3:
          return scanner.json.ReadOwnedText(q, e, &owned);  // not a string: passed over
        case 4: {
          const Scan scan = scanner.json.ReadInteger(q, e, &integer, &present);
          CHECK((present && integer == 13));  // rounded
          return scan;
        }
        default: {
          const Scan scan = scanner.json.ReadText(q, e, &text, &scratch);
          CHECK(text == "escAped");
          return scan;
        }
      }
    });
  }) == Scan::kOk);
  CHECK(item == 6);
  CHECK(owned.empty());
}

// The members of `text`'s top-level object as "key=value" lines (strings decoded, other values as
// written), scanned through a window of `window` bytes filled `chunk` bytes a read.
std::string MembersThrough(const std::string &text, size_t window, size_t chunk) {
  Scanner scanner(text, window, chunk);
  std::string lines;
  const Scan scan = scanner.Run([&](const char *&p, const char *end) {
    lines.clear();
    return scanner.json.ForEachMember(p, end, 0, [&](std::string_view key, const char *&q,
                                                     const char *e) {
      const char *const start = q;
      std::string_view decoded;
      std::string scratch;
      const Scan value = *q == '"' ? scanner.json.String(q, e, &decoded, &scratch)
                                   : scanner.json.SkipValue(q, e, 1);
      if (value == Scan::kOk) {
        lines += std::string(key) + "=" +
                 (*start == '"' ? std::string(decoded)
                                : std::string(start, static_cast<size_t>(q - start))) +
                 "\n";
      }
      return value;
    });
  });
  REQUIRE(scan == Scan::kOk);
  return lines;
}

TEST_CASE("json_scanner: a value cut anywhere by the window reads the same after refills") {
  const std::string text =
      R"({"name":"a \"quoted\" caf\u00e9","ts":1234567.891,"args":{"grid":[1,2,3]},)"
      R"("long":")" + std::string(300, 'x') + R"(","pair":"\ud83d\ude00","ok":true,)"
      R"("n":-0.5e-3})";
  const std::string whole = MembersThrough(text, 1 << 16, 1 << 16);
  CHECK(whole.find("name=a \"quoted\" caf\xC3\xA9\n") != std::string::npos);
  CHECK(whole.find("pair=\xF0\x9F\x98\x80\n") != std::string::npos);
  CHECK(whole.find("n=-0.5e-3\n") != std::string::npos);
  for (size_t window : {1, 2, 5, 16, 64}) {
    for (size_t chunk : {1, 3, 7, 1000}) {
      CHECK_MESSAGE(MembersThrough(text, window, chunk) == whole, window, " ", chunk);
    }
  }
}

TEST_CASE("json_scanner: offsets count from the data's start as the window slides") {
  std::string text;
  for (int number = 0; number < 40; ++number) text += std::to_string(number) + " ";
  const size_t bad = text.size();
  text += "x";
  Scanner scanner(text, /*window=*/4, /*chunk=*/3);
  int read = 0;
  Scan scan = Scan::kOk;
  while (scan == Scan::kOk) {
    JsonNumber number;
    scan = scanner.Run([&](const char *&p, const char *end) {
      if (*p == 'x') return scanner.json.SkipValue(p, end, 0);
      return scanner.json.Number(p, end, &number);
    });
    if (scan == Scan::kOk) {
      CHECK(number.text == std::to_string(read));
      ++read;
    }
  }
  CHECK(read == 40);
  REQUIRE(scan == Scan::kError);
  CHECK(scanner.json.error_offset() == bad);
  CHECK(std::string(scanner.json.error().message()) ==
        "t.json: byte " + std::to_string(bad) + ": invalid JSON value");
  CHECK(scanner.json.window_offset() > 0);
}

TEST_CASE("json_scanner: one value larger than the window grows it") {
  const std::string text = "\"" + std::string(10000, 'y') + "\"";
  Scanner scanner(text, /*window=*/8, /*chunk=*/100);
  CHECK(scanner.String() == std::string(10000, 'y'));
}

}  // namespace
