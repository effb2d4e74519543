// Comparing a NUL-terminated text with a copy kept from an earlier call, a word at a time, without
// looking for its end: what tfprof's per-thread name cache and the preload's step-marker memo do
// to notice a buffer rewritten in place at an address seen before.
//
// The copy is laid out in 8-byte words at the text's own alignment, with per word the mask of
// the bytes that belong to the text (through its NUL). The caller's text is read in aligned words,
// like glibc's strlen: an aligned word never crosses a page, so the bytes read around the text are
// mapped; the masks cut them out. A comparison stops at the first word that differs, and the word
// holding the caller's NUL differs from a copy of another length, so no word past the caller's
// text is read (hence no_sanitize: the bytes around the text are read on purpose).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tfprof::aligned_text {

inline const uint64_t *AlignedWords(const char *text) {
  return reinterpret_cast<const uint64_t *>(reinterpret_cast<uintptr_t>(text) & ~uintptr_t{7});
}

// Copies `text` (`length` bytes and its NUL) into `words` and `masks` (`max_words` each, zeroed
// here) at its own alignment. Returns the words used, or 0 (nothing copied) if it needs more.
inline uint32_t CopyWords(const char *text, size_t length, uint64_t *words, uint64_t *masks,
                          uint32_t max_words) {
  const size_t offset = reinterpret_cast<uintptr_t>(text) & 7;
  const size_t end = offset + length + 1;  // through the NUL
  if (end > max_words * sizeof(uint64_t)) return 0;
  std::memset(words, 0, max_words * sizeof(uint64_t));
  std::memset(masks, 0, max_words * sizeof(uint64_t));
  std::memcpy(reinterpret_cast<char *>(words) + offset, text, length + 1);
  std::memset(reinterpret_cast<char *>(masks) + offset, 0xff, length + 1);
  return static_cast<uint32_t>((end + 7) / 8);
}

// Whether the text's aligned words `text_words[0..count)` equal the copy's.
__attribute__((no_sanitize_address, no_sanitize_thread)) inline bool WordsMatch(
    const uint64_t *text_words, const uint64_t *words, const uint64_t *masks, uint32_t count) {
  for (uint32_t index = 0; index < count; ++index) {
    if (((text_words[index] ^ words[index]) & masks[index]) != 0) return false;
  }
  return true;
}

}  // namespace tfprof::aligned_text
