// Keys remembered by their place in an object (JsonKeyMemory), and the scanner's walk over
// members that uses them (ForEachCodedMember): a remembered key is known from its bytes alone,
// so any byte that differs, a key near the window's end, an escaped key or one with spaces
// before its colon must still come out as the key it is, with the code its classifier gives.
#include "runtime/common/json_key_memory.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/common/json_scanner.h"
#include "support/string_byte_source.h"

namespace {

using tfprof::JsonKeyMemory;
using tfprof::JsonScanner;
using tfprof::Scan;
using tfprof_test::StringSource;

// `text` padded with spaces, so Match() may look at its 32 bytes.
std::string Padded(std::string text) {
  text.append(JsonKeyMemory::kMaxBytes, ' ');
  return text;
}

// Match() on `text` copied into a buffer of exactly its size: ASan sees any read past `end`.
const JsonKeyMemory::Key *MatchAt(const JsonKeyMemory &memory, size_t place,
                                  const std::string &text) {
  static std::vector<std::unique_ptr<char[]>> buffers;  // the keys returned point into memory
  buffers.push_back(std::make_unique<char[]>(text.size()));
  std::memcpy(buffers.back().get(), text.data(), text.size());
  return memory.Match(place, buffers.back().get(), buffers.back().get() + text.size());
}

TEST_CASE("json_key_memory: a key matches only its own bytes, in every word") {
  JsonKeyMemory memory;
  const std::string long_key = R"("registers per thread....":)";  // 27 bytes: four words
  REQUIRE(long_key.size() == 27);
  memory.Remember(0, long_key.data(), long_key.size(), 9);
  const std::string same = Padded(long_key + "32");
  const JsonKeyMemory::Key *found = MatchAt(memory, 0, same);
  REQUIRE(found != nullptr);
  CHECK(found->code == 9);
  CHECK(found->size == 27);
  // One byte changed in the first, second, third and fourth word: no match.
  for (size_t byte : {1u, 9u, 17u, 25u, 26u}) {
    std::string changed = same;
    changed[byte] ^= 0x20;
    CHECK_MESSAGE(MatchAt(memory, 0, changed) == nullptr, byte);
  }
  // The bytes after the colon are not the key's: anything may follow.
  std::string after = same;
  after[27] = '"';
  after[30] = 'x';
  CHECK(MatchAt(memory, 0, after) != nullptr);
  // Another place remembers nothing yet.
  CHECK(MatchAt(memory, 1, same) == nullptr);
  // A longer key that starts the same is another key: the colon is compared.
  memory.Remember(1, R"("ph":)", 5, 2);
  CHECK(MatchAt(memory, 1, Padded(R"("ph":"X")")) != nullptr);
  CHECK(MatchAt(memory, 1, Padded(R"("phase":"X")")) == nullptr);
  CHECK(MatchAt(memory, 1, Padded(R"("ph" :"X")")) == nullptr);
}

TEST_CASE("json_key_memory: fewer bytes than a full compare left: no match, not a read past") {
  JsonKeyMemory memory;
  memory.Remember(0, R"("ts":)", 5, 3);
  const std::string text = R"("ts":1)";
  // Only 6 bytes before `end`: Match declines instead of loading 8.
  CHECK(MatchAt(memory, 0, text) == nullptr);
  CHECK(MatchAt(memory, 0, Padded(text)) != nullptr);
}

TEST_CASE("json_key_memory: two keys per place, and a third pushes out the older") {
  JsonKeyMemory memory;
  memory.Remember(0, R"("cbid":)", 7, 1);
  memory.Remember(0, R"("device":)", 9, 2);
  CHECK(MatchAt(memory, 0, Padded(R"("cbid":211)"))->code == 1);
  CHECK(MatchAt(memory, 0, Padded(R"("device":0)"))->code == 2);
  // The same key again (as near a window's end, where Match declines) is not a second copy.
  memory.Remember(0, R"("device":)", 9, 2);
  CHECK(MatchAt(memory, 0, Padded(R"("cbid":211)"))->code == 1);
  memory.Remember(0, R"("bytes":)", 8, 3);
  CHECK(MatchAt(memory, 0, Padded(R"("bytes":8)"))->code == 3);
  CHECK(MatchAt(memory, 0, Padded(R"("device":0)"))->code == 2);
  CHECK(MatchAt(memory, 0, Padded(R"("cbid":211)")) == nullptr);
  // Places past kPlaces, and keys longer than kMaxBytes, are not remembered.
  memory.Remember(JsonKeyMemory::kPlaces, R"("x":)", 4, 5);
  CHECK(MatchAt(memory, JsonKeyMemory::kPlaces, Padded(R"("x":1)")) == nullptr);
  const std::string too_long = "\"" + std::string(30, 'k') + "\":";
  memory.Remember(1, too_long.data(), too_long.size(), 6);
  CHECK(MatchAt(memory, 1, Padded(too_long + "1")) == nullptr);
}

struct Member {
  std::string key;
  int code;
  std::string value;
  bool operator==(const Member &) const = default;
};

TEST_CASE("json_key_memory: objects walked with remembered keys give every key and its code") {
  // Objects in one order, then others that differ from it in each way a key can: another key
  // at a place, an escaped spelling of a remembered key, spaces before a colon, a key that
  // starts like a remembered one, more members than places, and the data's last bytes.
  std::string many = "{";
  for (int index = 0; index < 30; ++index) {
    many += (index ? "," : "") + std::string("\"k") + std::to_string(index) + "\":" +
            std::to_string(index);
  }
  many += "}";
  const std::vector<std::string> objects = {
      R"({"ph":"X","cat":"kernel","name":"a","ts":1})",
      R"({"ph":"X","cat":"kernel","name":"b","ts":2})",
      R"({"ph":"X","cat":"cuda_runtime","nam":"c","ts":3})",
      R"({"ph":"X","ca\u0074":"kernel","name":"d","ts":4})",
      R"({"ph" : "X","cat"	:"kernel","name":"e","ts":5})",
      R"({"phase":"X","cat":"kernel","name":"f","ts":6})",
      many,
      many,
      R"({"ph":"X","cat":"kernel","name":"g","ts":7})",
  };
  std::string text = "[";
  for (size_t index = 0; index < objects.size(); ++index) {
    text += (index ? "," : "") + objects[index];
  }
  text += "]";
  // Codes: a key's length, plus 100 for "ph" (the classifier is what gives codes).
  int classified = 0;
  const auto classify = [&](std::string_view key) {
    ++classified;
    return static_cast<uint8_t>(key == "ph" ? 100 : key.size());
  };
  const auto walk = [&](bool coded, std::vector<std::vector<Member>> *out, int *calls) {
    const std::string path = "t.json";
    StringSource source(text);
    JsonScanner json(source, path, false, text.size() + 1);
    REQUIRE(json.Refill().ok());
    REQUIRE(json.Refill().ok());
    REQUIRE(json.eof());
    JsonKeyMemory memory;
    classified = 0;
    const char *p = json.position();
    const Scan scan = json.ForEachItem(p, json.end(), 0, [&](const char *&q, const char *e) {
      std::vector<Member> &members = out->emplace_back();
      const auto member = [&](uint8_t code, std::string_view key, const char *&r,
                              const char *f) {
        const char *const start = r;
        const Scan skipped = json.SkipValue(r, f, 2);
        members.push_back({std::string(key), code, std::string(start, r)});
        return skipped;
      };
      if (coded) return json.ForEachCodedMember(q, e, 1, memory, classify, member);
      return json.ForEachMember(q, e, 1, [&](std::string_view key, const char *&r,
                                             const char *f) {
        return member(classify(key), key, r, f);
      });
    });
    REQUIRE(scan == Scan::kOk);
    *calls = classified;
  };
  std::vector<std::vector<Member>> plain, coded;
  int plain_calls = 0, coded_calls = 0;
  walk(false, &plain, &plain_calls);
  walk(true, &coded, &coded_calls);
  REQUIRE(plain.size() == objects.size());
  CHECK(coded == plain);

  // The same objects through small windows filled a few bytes a read, one object at a time as
  // the reader walks events: an object the window ends inside is kMore, refilled and walked
  // again from its start with the memory as it stands (keys then sit at other addresses, and
  // near the window's end).
  for (const size_t window : {size_t{16}, size_t{40}, size_t{100}}) {
    for (const size_t chunk : {size_t{1}, size_t{7}, size_t{33}}) {
      const std::string path = "t.json";
      StringSource source(text, chunk);
      JsonScanner json(source, path, false, window);
      JsonKeyMemory memory;
      std::vector<std::vector<Member>> refilled;
      bool whole = false;
      for (int reads = 0; reads < 100000 && !whole; ++reads) {
        const char *p = JsonScanner::SkipWhitespace(json.position(), json.end());
        if (p < json.end() && (*p == '[' || *p == ',')) {
          p = JsonScanner::SkipWhitespace(p + 1, json.end());
        }
        json.set_position(p);
        if (p < json.end() && *p == ']') {
          whole = true;
          break;
        }
        if (p < json.end()) {
          std::vector<Member> members;
          const Scan scan = json.ForEachCodedMember(
              p, json.end(), 1, memory, classify,
              [&](uint8_t code, std::string_view key, const char *&r, const char *f) {
                const char *const start = r;
                const Scan skipped = json.SkipValue(r, f, 2);
                if (skipped == Scan::kOk) {
                  members.push_back({std::string(key), code, std::string(start, r)});
                }
                return skipped;
              });
          REQUIRE(scan != Scan::kError);
          if (scan == Scan::kOk) {
            refilled.push_back(std::move(members));
            json.set_position(p);
            continue;
          }
        }
        REQUIRE_FALSE(json.eof());
        REQUIRE(json.Refill().ok());
      }
      CAPTURE(window);
      CAPTURE(chunk);
      CHECK(whole);
      CHECK(refilled == plain);
    }
  }
  CHECK(plain[3][1].key == "cat");  // the escape decoded
  CHECK(plain[3][1].code == 3);
  CHECK(plain[0][0].code == 100);
  CHECK(plain[5][0].code == 5);  // "phase" is not "ph"
  // Keys classified with the memory, object by object: the first's 4; the second's none; "nam"
  // (another key at its place); "ca\u0074" (escaped: never remembered, while "name" is still
  // found in the second way); `"ph" :` and `"cat"\t:` (a space before the colon); "phase";
  // the first "many"'s 30; the second's 6 past kPlaces; the last object's "ph" (pushed out of
  // its place by "k0" and "phase"), "name" and "ts" (within kMaxBytes of the data's end).
  CHECK(plain_calls == 6 * 4 + 2 * 30 + 4);
  CHECK(coded_calls == 4 + 0 + 1 + 1 + 2 + 1 + 30 + 6 + 3);
}

}  // namespace
