// A thread's memo of which NVTX range names mark steps, so that a name pushed again costs a few
// word compares instead of the pattern match (StepMarker::IsMarker: literal prefixes, then
// fnmatch). Keyed by the name's address, with a copy of its text (runtime/common/aligned_text.h): a
// buffer rewritten in place with another name is noticed, as in tfprof's own name cache. Names
// longer than the copy are not remembered (they are matched every time).
#pragma once

#include <cstdint>

namespace tfprof::preload {

class MarkerVerdicts {
 public:
  enum Verdict : uint8_t { kUnknown, kNotMarker, kMarker };

  // Owner thread only: the verdict remembered for the text at `name`, or kUnknown.
  Verdict Find(const char *name) const;

  // Owner thread only: remembers `marker` for the text at `name` (if it fits the copy).
  void Remember(const char *name, bool marker);

 private:
  static constexpr uint32_t kSlots = 64;
  static constexpr uint32_t kWords = 4;  // names of up to 24 to 31 bytes, by alignment

  struct Entry {
    const char *pointer = nullptr;
    uint32_t word_count = 0;
    Verdict verdict = kUnknown;
    uint64_t words[kWords] = {};
    uint64_t masks[kWords] = {};
  };

  static uint32_t SlotOf(const char *name) {
    return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(name) >> 3) % kSlots);
  }

  Entry entries_[kSlots];
};

}  // namespace tfprof::preload
