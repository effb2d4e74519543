// Names a program registers once (prof_register_name) and then records by id
// (prof_span_begin_id): the hot path writes the id and never looks at text. Process-wide: ids stay
// valid across sessions and are never reused. Registration takes a lock; lookups by id (the
// collector's) take none.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace tfprof {

// What a span names itself with an id that prof_register_name() never returned.
inline constexpr char kUnregisteredName[] = "(unregistered name)";

class RegisteredNames {
 public:
  // Ids 1..kMaxNames; 0 is never an id.
  static constexpr uint32_t kMaxNames = 65536;

  static RegisteredNames &Get();

  // The id of `name` (the same id for the same text, whichever thread asks), or 0 when the
  // table is full or memory ran out. Any thread.
  uint32_t Register(std::string_view name);

  // Any thread: whether `id` was registered, and if so its text in `*name` (valid forever).
  bool Lookup(uint32_t id, std::string_view *name) const {
    if (id == 0 || id > kMaxNames) return false;
    const std::string *text = texts_[id - 1].load(std::memory_order_acquire);
    if (text == nullptr) return false;
    *name = *text;
    return true;
  }

 private:
  RegisteredNames() = default;

  std::mutex mutex_;
  absl::flat_hash_map<std::string_view, uint32_t> ids_;  // guarded by mutex_; keys in texts_
  uint32_t count_ = 0;                                   // guarded by mutex_
  // Published after the text is complete; never freed (ids outlive sessions). The table is
  // virtual memory until used: 512 KiB of pointers, touched a page per 512 names.
  std::unique_ptr<std::atomic<const std::string *>[]> texts_{
      new std::atomic<const std::string *>[kMaxNames]()};
};

}  // namespace tfprof
