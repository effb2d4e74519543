// The keys an object's members had before, by their place in it, for readers of objects that
// repeat one order of members: tfprof and Kineto write every event's members, and most events'
// args, in the same order. A key whose bytes match the one remembered at its place is known
// without scanning it or looking it up: its caller-given code comes with it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tfprof {

class JsonKeyMemory {
 public:
  // `"key":` with its quotes and colon, as it is compared: longer keys are not remembered.
  static constexpr size_t kMaxBytes = 32;
  // Places past these are not remembered (an event has about 8 members and 10 args).
  static constexpr size_t kPlaces = 24;
  // Keys remembered per place: launches and kernels alternate, each with its own args.
  static constexpr size_t kWays = 2;

  struct Key {
    uint64_t words[kMaxBytes / 8];
    uint64_t masks[kMaxBytes / 8];
    uint8_t size = 0;  // of `"key":`; 0: nothing remembered
    uint8_t code = 0;
  };

  // The key remembered at `place` whose `"key":` the bytes at `p` (on the key's '"') start with;
  // null when none does, or when fewer than kMaxBytes bytes are left before `end`.
  const Key *Match(size_t place, const char *p, const char *end) const {
    if (place >= kPlaces || end - p < static_cast<std::ptrdiff_t>(kMaxBytes)) return nullptr;
    for (const Key &key : places_[place]) {
      if (key.size == 0) return nullptr;  // the ways fill in order
      // Most keys fit one word; the masks are zero past a key, so longer ones compare all.
      uint64_t differ = (Word(p) ^ key.words[0]) & key.masks[0];
      if (key.size > 8) {
        for (size_t word = 1; word < kMaxBytes / 8; ++word) {
          differ |= (Word(p + word * 8) ^ key.words[word]) & key.masks[word];
        }
      }
      if (differ == 0) return &key;
    }
    return nullptr;
  }

  // Remembers `"key":` (`size` bytes at `text`, which hold no escape) at `place` with `code`,
  // before the key remembered there last, which moves to the next way.
  void Remember(size_t place, const char *text, size_t size, uint8_t code) {
    if (place >= kPlaces || size > kMaxBytes) return;
    std::array<Key, kWays> &ways = places_[place];
    // Seen near the window's end, where Match() does not look: already remembered.
    if (ways[0].size == size && std::memcmp(ways[0].words, text, size) == 0) return;
    for (size_t way = kWays - 1; way > 0; --way) ways[way] = ways[way - 1];
    Key &key = ways[0];
    // Zero past the key in the words, and in the masks that say which bytes count.
    char padded[kMaxBytes] = {};
    char counted[kMaxBytes] = {};
    std::memcpy(padded, text, size);
    std::memset(counted, 0xFF, size);
    std::memcpy(key.words, padded, kMaxBytes);
    std::memcpy(key.masks, counted, kMaxBytes);
    key.size = static_cast<uint8_t>(size);
    key.code = code;
  }

 private:
  static uint64_t Word(const char *p) {
    uint64_t word = 0;
    std::memcpy(&word, p, 8);
    return word;
  }

  std::array<std::array<Key, kWays>, kPlaces> places_{};
};

}  // namespace tfprof
