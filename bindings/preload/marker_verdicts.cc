#include "bindings/preload/marker_verdicts.h"

#include <cstring>

namespace tfprof::preload {

// Reads the caller's string in aligned words, like glibc's strlen: an aligned word never crosses
// a page, so the bytes read around the text are mapped; the masks cut them out. The comparison
// stops at the first word that differs, and the word holding the caller's NUL differs from a
// copy of another length, so no word past the caller's string is read.
__attribute__((no_sanitize_address, no_sanitize_thread)) MarkerVerdicts::Verdict
MarkerVerdicts::Find(const char *name) const {
  const Entry &entry = entries_[SlotOf(name)];
  if (entry.pointer != name || name == nullptr) return kUnknown;
  const uint64_t *word =
      reinterpret_cast<const uint64_t *>(reinterpret_cast<uintptr_t>(name) & ~uintptr_t{7});
  for (uint32_t index = 0; index < entry.word_count; ++index) {
    if (((word[index] ^ entry.words[index]) & entry.masks[index]) != 0) return kUnknown;
  }
  return entry.verdict;
}

void MarkerVerdicts::Remember(const char *name, bool marker) {
  if (name == nullptr) return;
  const size_t offset = reinterpret_cast<uintptr_t>(name) & 7;
  const size_t end = offset + std::strlen(name) + 1;  // through the NUL
  if (end > kWords * sizeof(uint64_t)) return;
  Entry &entry = entries_[SlotOf(name)];
  entry = Entry{};
  std::memcpy(reinterpret_cast<char *>(entry.words) + offset, name, end - offset);
  std::memset(reinterpret_cast<char *>(entry.masks) + offset, 0xff, end - offset);
  entry.word_count = static_cast<uint32_t>((end + 7) / 8);
  entry.verdict = marker ? kMarker : kNotMarker;
  entry.pointer = name;
}

}  // namespace tfprof::preload
