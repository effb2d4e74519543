// Paths a signal handler may have to remove before the process ends (hidden staging files,
// directories created for an output): fixed storage, so that reading the list from a handler
// needs neither locks nor allocation.
#pragma once

#include <limits.h>

#include <atomic>
#include <cstring>
#include <string>

namespace tfprof {

template <int kSlots>
class SignalSafePaths {
 public:
  // The slot now holding `path`; -1 when every slot is taken or the path is too long (the path is
  // then simply not listed).
  int Add(const std::string &path) {
    if (path.size() >= PATH_MAX) return -1;
    for (int slot = 0; slot < kSlots; ++slot) {
      int expected = kFree;
      if (!slots_[slot].state.compare_exchange_strong(expected, kBusy)) continue;
      std::memcpy(slots_[slot].path, path.c_str(), path.size() + 1);
      slots_[slot].state.store(kListed, std::memory_order_release);
      return slot;
    }
    return -1;
  }

  void Remove(int slot) {
    if (slot >= 0) slots_[slot].state.store(kFree, std::memory_order_release);
  }

  // Calls `visit(path)` for each path listed. Async-signal-safe when `visit` is.
  template <typename Visitor>
  void ForEach(Visitor &&visit) {
    for (Slot &slot : slots_) {
      if (slot.state.load(std::memory_order_acquire) == kListed) visit(slot.path);
    }
  }

 private:
  // A slot is free, being filled or emptied, or lists a path.
  static constexpr int kFree = 0, kBusy = 1, kListed = 2;
  struct Slot {
    std::atomic<int> state{kFree};
    char path[PATH_MAX];
  };
  Slot slots_[kSlots];
};

}  // namespace tfprof
