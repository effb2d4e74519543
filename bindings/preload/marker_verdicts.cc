#include "bindings/preload/marker_verdicts.h"

#include <cstring>

#include "runtime/common/aligned_text.h"

namespace tfprof::preload {

MarkerVerdicts::Verdict MarkerVerdicts::Find(const char *name) const {
  const Entry &entry = entries_[SlotOf(name)];
  if (entry.pointer != name || name == nullptr) return kUnknown;
  return aligned_text::WordsMatch(aligned_text::AlignedWords(name), entry.words, entry.masks,
                                  entry.word_count)
             ? entry.verdict
             : kUnknown;
}

void MarkerVerdicts::Remember(const char *name, bool marker) {
  if (name == nullptr) return;
  Entry &entry = entries_[SlotOf(name)];
  entry = Entry{};
  entry.word_count =
      aligned_text::CopyWords(name, std::strlen(name), entry.words, entry.masks, kWords);
  if (entry.word_count == 0) return;  // too long: matched every time
  entry.verdict = marker ? kMarker : kNotMarker;
  entry.pointer = name;
}

}  // namespace tfprof::preload
