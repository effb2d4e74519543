#include "runtime/collector/thread_name_cache.h"

#include <cstring>

namespace tfprof {

namespace {

// FNV-1a over 8-byte words: fast on short names and good enough for a table that is only a
// cache in front of exact comparisons.
uint64_t HashBytes(const char *bytes, uint32_t length) {
  uint64_t hash = 0xcbf29ce484222325ull ^ length;
  uint32_t offset = 0;
  for (; offset + 8 <= length; offset += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + offset, 8);
    hash = (hash ^ word) * 0x100000001b3ull;
  }
  for (; offset < length; ++offset) {
    hash = (hash ^ static_cast<unsigned char>(bytes[offset])) * 0x100000001b3ull;
  }
  return hash ^ (hash >> 29);
}

}  // namespace

ThreadNameCache::ThreadNameCache()
    : arena_(new char[kArenaBytes]),
      offsets_(new uint32_t[kMaxNames]),
      lengths_(new uint32_t[kMaxNames]),
      table_(new HashEntry[kHashSlots]) {
  for (uint32_t slot = 0; slot < kHashSlots; ++slot) table_[slot] = HashEntry{0, kNotFound};
  for (PointerHead &head : pointer_heads_) head = PointerHead{NoPointer(), kNotFound, 1, {}, {}};
}

uint32_t ThreadNameCache::LookupCStringSlow(const char *name) {
  const size_t length = std::strlen(name);
  if (length >= kArenaBytes) return kNotFound;
  const uint32_t id = length == 0 ? Lookup(kUnnamed, sizeof(kUnnamed) - 1)
                                  : Lookup(name, static_cast<uint32_t>(length));
  if (id != kNotFound) RememberPointer(name, length, id);
  return id;
}

void ThreadNameCache::RememberPointer(const char *name, size_t length, uint32_t id) {
  uint64_t words[kPointerCopyWords];
  uint64_t masks[kPointerCopyWords];
  const uint32_t word_count =
      aligned_text::CopyWords(name, length, words, masks, kPointerCopyWords);
  if (word_count == 0) return;  // long names take the hash path every time
  const uint32_t slot = PointerSlot(name);
  PointerHead &head = pointer_heads_[slot];
  head.pointer = name;
  head.id = id;
  head.word_count = word_count;
  std::memcpy(head.words, words, sizeof head.words);
  std::memcpy(head.masks, masks, sizeof head.masks);
  PointerTail &tail = pointer_tails_[slot];
  std::memcpy(tail.words, words + kHeadWords, sizeof tail.words);
  std::memcpy(tail.masks, masks + kHeadWords, sizeof tail.masks);
}

uint32_t ThreadNameCache::Lookup(const char *name, uint32_t length) {
  const uint64_t hash = HashBytes(name, length);
  for (uint32_t probe = 0; probe < kHashSlots; ++probe) {
    HashEntry &slot = table_[(hash + probe) % kHashSlots];
    if (slot.id == kNotFound) return Insert(name, length, hash);
    if (slot.hash == hash && lengths_[slot.id] == length &&
        std::memcmp(arena_.get() + offsets_[slot.id], name, length) == 0) {
      return slot.id;
    }
  }
  return kNotFound;
}

uint32_t ThreadNameCache::Insert(const char *name, uint32_t length, uint64_t hash) {
  // Keep the table at most half full so probes stay short; names are stored NUL-terminated so
  // the pointer cache can strcmp against them.
  if (count_ >= kMaxNames || arena_used_ + length + 1 > kArenaBytes) return kNotFound;
  const uint32_t id = count_;
  std::memcpy(arena_.get() + arena_used_, name, length);
  arena_[arena_used_ + length] = '\0';
  offsets_[id] = arena_used_;
  lengths_[id] = length;
  arena_used_ += length + 1;
  for (uint32_t probe = 0;; ++probe) {
    HashEntry &slot = table_[(hash + probe) % kHashSlots];
    if (slot.id == kNotFound) {
      slot = HashEntry{hash, id};
      break;
    }
  }
  count_ = id + 1;
  published_.store(count_, std::memory_order_release);
  return id;
}

}  // namespace tfprof
