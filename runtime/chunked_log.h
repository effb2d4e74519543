// Append-only storage for a session's record lists, in chunks that can leave memory: a chunk may
// be spilled to the session's spill file (and read back when visited) or evicted for good.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/chunk_store.h"

namespace tfprof {

// Records live in chunks that never move once allocated. The first chunk is small and each new
// one doubles up to `kMaxChunk` records, so a thread that records little costs little. Indices
// are stable for the log's life: spilling or evicting chunks never renumbers the records.
//
// Allocation never throws: when memory runs out, Append() drops the record and counts it in the
// store. Not thread-safe; a session's logs are used under its model lock.
template <typename T, size_t kMaxChunk = 64 * 1024>
class ChunkedLog {
  static_assert(std::is_trivially_copyable_v<T>, "records are spilled as bytes");

 public:
  static constexpr size_t kFirstChunk = kMaxChunk < 64 ? kMaxChunk : 64;

  ChunkedLog() = default;
  ~ChunkedLog() { Clear(); }
  ChunkedLog(const ChunkedLog &) = delete;
  ChunkedLog &operator=(const ChunkedLog &) = delete;
  ChunkedLog(ChunkedLog &&other) noexcept { *this = std::move(other); }
  ChunkedLog &operator=(ChunkedLog &&other) noexcept {
    if (this != &other) {
      Clear();
      chunks_ = std::move(other.chunks_);
      size_ = std::exchange(other.size_, 0);
      first_kept_ = std::exchange(other.first_kept_, 0);
      store_ = other.store_;
      hint_ = std::exchange(other.hint_, 0);
      other.chunks_.clear();
    }
    return *this;
  }

  // The store this log accounts its memory in and spills to; null: plain memory, no limits.
  void set_store(ChunkStore *store) { store_ = store; }

  // Returns false when no memory was left for a new chunk: the record is dropped and counted.
  bool Append(const T &record) {
    // A chunk read back from the spill file is not appended to: its spilled copy would go stale.
    if (chunks_.empty() || chunks_.back().state != kResident ||
        chunks_.back().spill_offset >= 0 || chunks_.back().count == chunks_.back().capacity) {
      if (!AddChunk()) {
        if (store_ != nullptr) ++store_->records_lost;
        return false;
      }
    }
    Chunk &chunk = chunks_.back();
    chunk.records[chunk.count++] = record;
    ++size_;
    return true;
  }

  // Records ever appended, including those spilled or evicted.
  size_t size() const { return size_; }
  // The index of the oldest record not evicted.
  size_t first_kept() const { return first_kept_; }

  // The record at `index`. A spilled chunk is read back into memory (it stays there until the
  // next Spill), so the reference stays valid until then. An evicted or lost record reads as T{}.
  const T &operator[](size_t index) const {
    static const T kMissing{};
    if (index < first_kept_ || index >= size_) return kMissing;
    Chunk &chunk = chunks_[FindChunk(index)];
    if (chunk.state == kSpilled) Reload(chunk);
    if (chunk.state != kResident) return kMissing;
    return chunk.records[index - chunk.first];
  }

  template <typename Visitor>
  void ForEach(Visitor &&visit) const {
    ForEachFrom(0, visit);
  }

  // Visits the records from index `first` on, skipping evicted and lost ones: lets incremental
  // readers continue where they were. Spilled chunks are read through one temporary buffer and
  // stay on disk.
  template <typename Visitor>
  void ForEachFrom(size_t first, Visitor &&visit) const {
    first = std::max(first, first_kept_);
    if (first >= size_) return;
    std::unique_ptr<T[]> buffer;
    for (size_t at = FindChunk(first); at < chunks_.size(); ++at) {
      Chunk &chunk = chunks_[at];
      const T *records = chunk.records.get();
      if (chunk.state == kSpilled) {
        if (buffer == nullptr) buffer.reset(new (std::nothrow) T[kMaxChunk]);
        if (buffer == nullptr || !ReadSpilled(chunk, buffer.get())) continue;
        records = buffer.get();
      } else if (chunk.state != kResident) {
        continue;
      }
      for (size_t i = first > chunk.first ? first - chunk.first : 0; i < chunk.count; ++i) {
        visit(records[i]);
      }
    }
  }

  // Moves resident chunks to the store's spill file and frees their memory: all of them with
  // `include_last`, else all but the one being appended to. A chunk the file cannot take is
  // dropped and counted, as is every chunk when there is no spill file (memory stays bounded
  // either way). Returns the bytes freed.
  int64_t Spill(bool include_last) {
    int64_t freed = 0;
    if (store_ == nullptr || !store_->spill_enabled) return 0;
    const size_t end = include_last ? chunks_.size() : (chunks_.empty() ? 0 : chunks_.size() - 1);
    for (size_t at = 0; at < end; ++at) {
      Chunk &chunk = chunks_[at];
      if (chunk.state != kResident) continue;
      SpillFile *file = store_->SpillTarget();
      if (file != nullptr && chunk.spill_offset < 0) {
        chunk.spill_offset = file->Append(chunk.records.get(), chunk.count * sizeof(T));
      }
      if (chunk.spill_offset < 0) {
        store_->records_lost += chunk.count;
        chunk.state = kLost;
      } else {
        chunk.state = kSpilled;
      }
      freed += FreeRecords(chunk);
    }
    return freed;
  }

  // Evicts every record before `index` for good (the keep= window): whole chunks are freed, and
  // their spill space given back. Counts the records in the store's `records_discarded`.
  void EvictBefore(size_t index) {
    index = std::min(index, size_);
    if (index <= first_kept_) return;
    size_t drop = 0;
    for (; drop < chunks_.size(); ++drop) {
      Chunk &chunk = chunks_[drop];
      const size_t begin = std::max(chunk.first, first_kept_);
      const size_t end = std::min(chunk.first + chunk.count, index);
      if (store_ != nullptr && end > begin && chunk.state != kLost) {
        store_->records_discarded += end - begin;
      }
      if (chunk.first + chunk.count > index) break;
      ReleaseChunk(chunk);
    }
    chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(drop));
    first_kept_ = index;
    hint_ = 0;
  }

  // The index of the first record at or after `from` for which `keep(record)` holds, scanning
  // forward (the records' order is the caller's: time order for one thread's events).
  template <typename Predicate>
  size_t FindFirst(size_t from, Predicate &&keep) const {
    size_t index = std::max(from, first_kept_);
    size_t found = size_;
    bool done = false;
    ForEachFrom(index, [&](const T &record) {
      if (done) return;
      if (keep(record)) {
        found = index;
        done = true;
      }
      ++index;
    });
    return found;
  }

 private:
  enum State : uint8_t { kResident, kSpilled, kLost };
  struct Chunk {
    size_t first = 0;
    uint32_t count = 0;
    uint32_t capacity = 0;
    std::unique_ptr<T[]> records;
    int64_t spill_offset = -1;  // where its bytes are in the spill file, once written
    State state = kResident;
  };

  bool AddChunk() {
    const size_t shift = std::min<size_t>(chunks_.size(), 30);
    const size_t capacity = std::min<size_t>(kMaxChunk, kFirstChunk << shift);
    std::unique_ptr<T[]> records(new (std::nothrow) T[capacity]);
    if (records == nullptr) return false;
    Chunk chunk;
    chunk.first = size_;
    chunk.capacity = static_cast<uint32_t>(capacity);
    chunk.records = std::move(records);
    if (store_ != nullptr) store_->resident_bytes += static_cast<int64_t>(capacity * sizeof(T));
    chunks_.push_back(std::move(chunk));
    return true;
  }

  int64_t FreeRecords(Chunk &chunk) const {
    if (chunk.records == nullptr) return 0;
    const int64_t bytes = static_cast<int64_t>(chunk.capacity * sizeof(T));
    chunk.records.reset();
    if (store_ != nullptr) store_->resident_bytes -= bytes;
    return bytes;
  }

  void ReleaseChunk(Chunk &chunk) {
    FreeRecords(chunk);
    if (chunk.spill_offset >= 0 && store_ != nullptr && store_->spill != nullptr) {
      store_->spill->Release(chunk.spill_offset, chunk.count * sizeof(T));
    }
    chunk.spill_offset = -1;
  }

  void Clear() {
    for (Chunk &chunk : chunks_) ReleaseChunk(chunk);
    chunks_.clear();
  }

  bool ReadSpilled(const Chunk &chunk, T *into) const {
    SpillFile *file = store_ != nullptr ? store_->spill.get() : nullptr;
    return file != nullptr && file->Read(chunk.spill_offset, into, chunk.count * sizeof(T));
  }

  // Brings a spilled chunk back into memory (its spill copy stays valid, so spilling it again
  // costs no write). A failed read loses the chunk, counted.
  void Reload(Chunk &chunk) const {
    std::unique_ptr<T[]> records(new (std::nothrow) T[chunk.capacity]);
    if (records == nullptr || !ReadSpilled(chunk, records.get())) {
      if (store_ != nullptr && records != nullptr) {
        store_->records_lost += chunk.count;
        chunk.state = kLost;
      }
      return;
    }
    chunk.records = std::move(records);
    chunk.state = kResident;
    if (store_ != nullptr) store_->resident_bytes += static_cast<int64_t>(chunk.capacity * sizeof(T));
  }

  // The chunk holding `index` (which must be kept and below size_).
  size_t FindChunk(size_t index) const {
    if (hint_ < chunks_.size() && chunks_[hint_].first <= index &&
        index < chunks_[hint_].first + chunks_[hint_].count) {
      return hint_;
    }
    auto after = std::upper_bound(chunks_.begin(), chunks_.end(), index,
                                  [](size_t value, const Chunk &chunk) { return value < chunk.first; });
    hint_ = static_cast<size_t>(after - chunks_.begin()) - 1;
    return hint_;
  }

  // Mutable: reading a spilled record brings its chunk back into memory.
  mutable std::vector<Chunk> chunks_;
  size_t size_ = 0;
  size_t first_kept_ = 0;
  ChunkStore *store_ = nullptr;
  mutable size_t hint_ = 0;
};

}  // namespace tfprof
