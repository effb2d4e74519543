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
  uint32_t LookupCString(const char *name);

  // Any thread: how many names are published (safe to read with NameAt()).
  uint32_t PublishedCount() const { return published_.load(std::memory_order_acquire); }
  // Any thread, for `id` < PublishedCount().
  std::string_view NameAt(uint32_t id) const {
    return std::string_view(arena_.get() + offsets_[id], lengths_[id]);
  }

 private:
  struct PointerEntry {
    const char *pointer;
    uint32_t id;
  };
  struct HashEntry {
    uint64_t hash;
    uint32_t id;  // kNotFound when empty
  };
  static constexpr uint32_t kPointerSlots = 256;
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
