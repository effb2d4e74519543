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

#include "runtime/common/aligned_text.h"

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
    uint32_t id;
    return FindCachedPointer(name, &id) ? id : LookupCStringSlow(name);
  }

  // Owner thread only: whether `name` was seen before at the same address with the same text;
  // if so `*id` is its id. Otherwise LookupCString() finds or adds it. NULL is never found.
  bool FindCachedPointer(const char *name, uint32_t *id) const {
    const PointerMatch match = MatchCachedPointer(name, id);
    return match == PointerMatch::kYes || (match == PointerMatch::kCheckTail && TailMatches(name));
  }

  // FindCachedPointer() in two steps, for a fast path that keeps the common case free of loops
  // and calls: a name whose text fits the head's kHeadWords aligned words (up to 17 to 24 bytes,
  // by alignment) is answered here; kCheckTail means that `*id` is the name's if
  // TailMatches(name) says so.
  enum class PointerMatch { kNo, kYes, kCheckTail };
  __attribute__((no_sanitize_address, no_sanitize_thread)) PointerMatch MatchCachedPointer(
      const char *name, uint32_t *id) const {
    const PointerHead &head = HeadFor(name);
    if (head.pointer != name) return PointerMatch::kNo;
    // A word is read only when the copy has it: the copy's words end with the one holding the
    // NUL, and a caller's string that differs before it stops the comparison there.
    const uint64_t *word = aligned_text::AlignedWords(name);
    if (((word[0] ^ head.words[0]) & head.masks[0]) != 0) return PointerMatch::kNo;
    if (head.word_count > 1) {
      if (((word[1] ^ head.words[1]) & head.masks[1]) != 0) return PointerMatch::kNo;
      if (head.word_count > 2) {
        if (((word[2] ^ head.words[2]) & head.masks[2]) != 0) return PointerMatch::kNo;
        if (head.word_count > kHeadWords) {
          *id = head.id;
          return PointerMatch::kCheckTail;
        }
      }
    }
    *id = head.id;
    return PointerMatch::kYes;
  }
  // After kCheckTail: whether the words after the head's still match the copy.
  bool TailMatches(const char *name) const {
    const PointerHead &head = HeadFor(name);
    const PointerTail &tail = pointer_tails_[&head - pointer_heads_];
    return aligned_text::WordsMatch(aligned_text::AlignedWords(name) + kHeadWords, tail.words,
                                    tail.masks, head.word_count - kHeadWords);
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

  // A recently seen name pointer and a copy of the text it pointed to, in aligned words with
  // their masks (runtime/common/aligned_text.h), so that a match compares words without looking for the
  // text's end and notices a buffer rewritten in place. The first kHeadWords words sit in the
  // slot's 64-byte head with the pointer and the id (one cache line), the rest in its tail.
  static constexpr uint32_t kHeadWords = 3;
  struct PointerHead {
    const char *pointer;  // NoPointer() while the slot is empty
    uint32_t id;
    uint32_t word_count;  // words of the copy, 1 to kPointerCopyWords
    uint64_t words[kHeadWords];
    uint64_t masks[kHeadWords];
  };
  struct PointerTail {
    uint64_t words[kPointerCopyWords - kHeadWords];
    uint64_t masks[kPointerCopyWords - kHeadWords];
  };

  // What an empty slot's pointer holds: no string starts at address 1, and NULL never matches.
  static const char *NoPointer() { return reinterpret_cast<const char *>(uintptr_t{1}); }

  static uint32_t PointerSlot(const char *name) {
    return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(name) >> 3) % kPointerSlots);
  }

  // pointer_heads_[PointerSlot(name)], computed as a byte offset: the slot times the head's 64
  // bytes is the pointer's bits 3..10 shifted left by 3, one mask and one shift.
  const PointerHead &HeadFor(const char *name) const {
    static_assert(sizeof(PointerHead) == 64 && kPointerSlots == 256, "HeadFor's arithmetic");
    const uintptr_t offset = (reinterpret_cast<uintptr_t>(name) & (uintptr_t{255} << 3)) << 3;
    return *reinterpret_cast<const PointerHead *>(reinterpret_cast<const char *>(pointer_heads_) +
                                                 offset);
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
  alignas(64) PointerHead pointer_heads_[kPointerSlots];
  PointerTail pointer_tails_[kPointerSlots];
  uint32_t arena_used_ = 0;
  uint32_t count_ = 0;
  std::atomic<uint32_t> published_{0};
};

}  // namespace tfprof
