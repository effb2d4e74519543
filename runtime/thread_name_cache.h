// Per-thread name interning without locks or allocation.
//
// A thread turns each name it records into a small thread-local id by copying the bytes once
// into its own fixed-size arena. Lookups go through a pointer-keyed cache (string literals and
// long-lived strings hit it) and then a content hash table (transient buffers with a known
// name). The collector reads the arena, published entry by entry, to map local ids to global
// ones. All memory is allocated up front when the thread records its first event.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

namespace tfprof {

// What NULL and empty names are recorded as.
inline constexpr char kUnnamed[] = "(unnamed)";

class ThreadNameCache {
 public:
  static constexpr uint32_t kMaxNames = 4096;
  static constexpr uint32_t kArenaBytes = 128 * 1024;
  static constexpr uint32_t kNotFound = UINT32_MAX;

  ThreadNameCache();

  // Owner thread only. Returns the local id for `name` (length `length`, no NUL inside),
  // adding it if new. Returns kNotFound when the arena or the table is full; the caller then
  // records the name's bytes inline.
  uint32_t Lookup(const char *name, uint32_t length);

  // Owner thread only: Lookup() for a NUL-terminated string, with the pointer cache in front.
  // The empty string is looked up as kUnnamed.
  uint32_t LookupCString(const char *name) {
    const PointerEntry &entry = pointer_cache_[PointerSlot(name)];
    if (entry.pointer == name && MatchesCopy(entry, name)) return entry.id;
    return LookupCStringSlow(name);
  }

  // Any thread: how many names are published (safe to read with NameAt()).
  uint32_t PublishedCount() const { return published_.load(std::memory_order_acquire); }
  // Any thread, for `id` < PublishedCount().
  std::string_view NameAt(uint32_t id) const {
    return std::string_view(arena_.get() + offsets_[id], lengths_[id]);
  }

 private:
  static constexpr uint32_t kPointerSlots = 256;
  static constexpr uint32_t kPointerCopyWords = 8;  // names up to 56 bytes use the pointer cache

  // A recently seen name pointer and a copy of the text it pointed to (with its NUL), laid out
  // in words at the same alignment as the pointer, plus per word the mask of the bytes that
  // belong to the text. MatchesCopy() then compares aligned words without looking for the end.
  struct PointerEntry {
    const char *pointer;
    uint32_t id;
    uint32_t word_count;
    uint64_t words[kPointerCopyWords];
    uint64_t masks[kPointerCopyWords];
  };

  static uint32_t PointerSlot(const char *name) {
    return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(name) >> 3) % kPointerSlots);
  }

  // Whether the NUL-terminated text at `name` (the entry's pointer) still equals the entry's
  // copy. Reads the caller's string in aligned 8-byte words, like glibc's strlen: an aligned word
  // never crosses a page boundary, so the bytes read around the text are always mapped; they are
  // masked out. The comparison stops at the first word that differs, and the word holding the
  // caller's NUL always differs from a copy of another length, so no word past the caller's
  // string is ever read. This keeps a name seen before at the same address free of strcmp.
  __attribute__((no_sanitize_address, no_sanitize_thread)) static bool MatchesCopy(
      const PointerEntry &entry, const char *name) {
    const uint64_t *word =
        reinterpret_cast<const uint64_t *>(reinterpret_cast<uintptr_t>(name) & ~uintptr_t{7});
    for (uint32_t index = 0; index < entry.word_count; ++index) {
      if (((word[index] ^ entry.words[index]) & entry.masks[index]) != 0) return false;
    }
    return true;
  }

  __attribute__((cold)) uint32_t LookupCStringSlow(const char *name);
  __attribute__((cold)) void RememberPointer(const char *name, size_t length, uint32_t id);

  struct HashEntry {
    uint64_t hash;
    uint32_t id;  // kNotFound when empty
  };
  static constexpr uint32_t kHashSlots = kMaxNames * 2;

  uint32_t Insert(const char *name, uint32_t length, uint64_t hash);

  std::unique_ptr<char[]> arena_;
  std::unique_ptr<uint32_t[]> offsets_;
  std::unique_ptr<uint32_t[]> lengths_;
  std::unique_ptr<HashEntry[]> table_;
  PointerEntry pointer_cache_[kPointerSlots] = {};
  uint32_t arena_used_ = 0;
  uint32_t count_ = 0;
  std::atomic<uint32_t> published_{0};
};

}  // namespace tfprof
