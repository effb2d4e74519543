// Append-only storage for the trace model's large record lists.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace tfprof {

// Append-only storage in fixed-size chunks: appending never moves what is stored, so memory
// grows in steps of one chunk and huge traces need no giant reallocation.
// `kChunkEvents` records per chunk: large for host events, smaller for bulky GPU records so a
// short session does not pay for a huge first chunk.
template <typename T, size_t kChunk = 64 * 1024>
class ChunkedLog {
 public:
  static constexpr size_t kChunkEvents = kChunk;

  void Append(const T &event) {
    if (size_ % kChunkEvents == 0) chunks_.emplace_back(new T[kChunkEvents]);
    chunks_.back()[size_ % kChunkEvents] = event;
    ++size_;
  }

  size_t size() const { return size_; }

  const T &operator[](size_t index) const {
    return chunks_[index / kChunkEvents][index % kChunkEvents];
  }

  template <typename Visitor>
  void ForEach(Visitor &&visit) const {
    ForEachFrom(0, visit);
  }

  // Visits the events from index `first` on: lets incremental readers continue where they were.
  template <typename Visitor>
  void ForEachFrom(size_t first, Visitor &&visit) const {
    for (size_t index = first; index < size_;) {
      const T *chunk = chunks_[index / kChunkEvents].get();
      const size_t end = std::min(size_, (index / kChunkEvents + 1) * kChunkEvents);
      for (; index < end; ++index) visit(chunk[index % kChunkEvents]);
    }
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace tfprof
