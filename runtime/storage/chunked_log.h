// Append-only storage for a session's record lists, in chunks that can leave memory: a chunk may
// be spilled to the session's spill file (and read back when visited) or evicted for good.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/storage/chunk_store.h"

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
      first_resident_ = std::exchange(other.first_resident_, 0);
      other.chunks_.clear();
    }
    return *this;
  }

  // The store this log accounts its memory in and spills to; null: plain memory, no limits.
  void set_store(ChunkStore *store) { store_ = store; }

  // Returns false when no memory was left for a new chunk: the record is dropped and counted.
  bool Append(const T &record) {
    // A chunk read back from the spill file is not appended to: its spilled copy would go stale.
    if (chunks_.empty() || chunks_.back().state != kResident || chunks_.back().spill_offset >= 0 ||
        chunks_.back().pending != nullptr || chunks_.back().count == chunks_.back().capacity) {
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
    VisitWhile(first, [&](const T &record) {
      visit(record);
      return true;
    });
  }

  // Like ForEachFrom(), but `visit` returns false to stop before that record. Returns the index of
  // the record it stopped at, or size() when it visited every one.
  template <typename Visitor>
  size_t VisitWhile(size_t first, Visitor &&visit) const {
    first = std::max(first, first_kept_);
    if (first >= size_) return size_;
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
        if (!visit(records[i])) return chunk.first + i;
      }
    }
    return size_;
  }

  // Moves resident chunks to the store's spill file, oldest first, until `*excess` bytes are on
  // their way out (it is decreased by what is spilled; <= 0 means stop), never the chunk being
  // appended to unless `include_last`. With a writer, the writes run on its thread and the memory
  // is freed by a later Reap() once they are done; when the writer has no room, the rest wait in
  // memory. Without a spill file, chunks are dropped and counted instead.
  void Spill(bool include_last, int64_t *excess) {
    if (store_ == nullptr || !store_->spill_enabled) return;
    const size_t end = include_last ? chunks_.size() : (chunks_.empty() ? 0 : chunks_.size() - 1);
    for (size_t at = first_resident_; at < end && *excess > 0; ++at) {
      Chunk &chunk = chunks_[at];
      if (chunk.state != kResident || chunk.pending != nullptr) continue;
      const int64_t bytes = ChunkBytes(chunk);
      SpillFile *file = store_->SpillTarget();
      if (chunk.spill_offset >= 0) {  // read back earlier: its spilled copy is still good
        chunk.state = kSpilled;
        FreeRecords(chunk);
      } else if (file == nullptr) {
        Lose(chunk);
      } else if (store_->writer == nullptr) {
        chunk.spill_offset = file->Append(chunk.records.get(), chunk.count * sizeof(T));
        if (chunk.spill_offset < 0) {
          Lose(chunk);
        } else {
          chunk.state = kSpilled;
          FreeRecords(chunk);
        }
      } else if (!SubmitSpill(chunk, file)) {
        break;  // the writer is full: the rest waits for the next pass
      }
      *excess -= bytes;
    }
    AdvanceFirstResident();
  }

  // Memory of the chunk being appended to (0 when none is resident): the limit does not count it.
  int64_t active_bytes() const {
    if (chunks_.empty()) return 0;
    const Chunk &last = chunks_.back();
    return last.state == kResident && last.pending == nullptr ? ChunkBytes(last) : 0;
  }

  // Spill() with no byte target: every chunk it may take.
  void SpillAll(bool include_last) {
    int64_t everything = INT64_MAX;
    Spill(include_last, &everything);
  }

  // Drops the oldest chunks not being written, counted, until `*excess` bytes are freed: for a
  // writer that cannot keep up, so memory stays bounded.
  void DropOldest(bool include_last, int64_t *excess) {
    if (store_ == nullptr) return;
    const size_t end = include_last ? chunks_.size() : (chunks_.empty() ? 0 : chunks_.size() - 1);
    for (size_t at = first_resident_; at < end && *excess > 0; ++at) {
      Chunk &chunk = chunks_[at];
      if (chunk.state != kResident || chunk.pending != nullptr) continue;
      *excess -= ChunkBytes(chunk);
      ++store_->writer_behind;
      Lose(chunk);
    }
    AdvanceFirstResident();
  }

  // Frees the chunks whose spill writes have finished (a failed write loses the chunk, counted).
  void Reap() {
    for (size_t at = first_resident_; at < chunks_.size(); ++at) {
      Chunk &chunk = chunks_[at];
      if (chunk.pending == nullptr || !chunk.pending->done.load(std::memory_order_acquire)) continue;
      const int64_t offset = chunk.pending->offset;
      chunk.pending.reset();
      store_->in_flight_bytes -= ChunkBytes(chunk);
      if (offset < 0) {
        Lose(chunk);
      } else {
        chunk.spill_offset = offset;
        chunk.state = kSpilled;
        FreeRecords(chunk);
      }
    }
    AdvanceFirstResident();
  }

  // Evicts every record before `index` for good: whole chunks are freed, and their spill space
  // given back. Counts the records in the store's `counted_in`: records_discarded for the keep=
  // window, records_released for records a streamed output already holds.
  void EvictBefore(size_t index, uint64_t ChunkStore::*counted_in = &ChunkStore::records_discarded) {
    index = std::min(index, size_);
    if (index <= first_kept_) return;
    size_t drop = 0;
    for (; drop < chunks_.size(); ++drop) {
      Chunk &chunk = chunks_[drop];
      const size_t begin = std::max(chunk.first, first_kept_);
      const size_t end = std::min(chunk.first + chunk.count, index);
      if (store_ != nullptr && end > begin && chunk.state != kLost) {
        store_->*counted_in += end - begin;
      }
      if (chunk.first + chunk.count > index) break;
      ReleaseChunk(chunk);
    }
    first_kept_chunks_ += drop;
    chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(drop));
    first_kept_ = index;
    hint_ = 0;
    first_resident_ = first_resident_ > drop ? first_resident_ - drop : 0;
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
  // A spill write handed to the writer thread. Whichever side comes second (the writer when it is
  // done, or an eviction that no longer wants the bytes) gives the file space back.
  struct SpillWrite {
    static constexpr int kWriting = 0, kDone = 1, kAbandoned = 2;
    std::atomic<int> stage{kWriting};
    std::atomic<bool> done{false};
    int64_t offset = -1;  // set by the writer before `done`
  };
  struct Chunk {
    size_t first = 0;
    uint32_t count = 0;
    uint32_t capacity = 0;
    std::shared_ptr<T[]> records;  // shared with a spill write in flight
    int64_t spill_offset = -1;  // where its bytes are in the spill file, once written
    State state = kResident;
    std::shared_ptr<SpillWrite> pending;  // a spill write in flight: stays resident until done
  };

  bool SubmitSpill(Chunk &chunk, SpillFile *file) {
    try {
      auto write = std::make_shared<SpillWrite>();
      std::shared_ptr<const T[]> records = chunk.records;
      const size_t bytes = chunk.count * sizeof(T);
      if (!store_->writer->TrySubmit(bytes, [write, records, bytes, file] {
            write->offset = file->Append(records.get(), bytes);
            write->done.store(true, std::memory_order_release);
            if (write->stage.exchange(SpillWrite::kDone) == SpillWrite::kAbandoned && write->offset >= 0) {
              file->Release(write->offset, bytes);
            }
          })) {
        return false;
      }
      chunk.pending = std::move(write);
      store_->in_flight_bytes += ChunkBytes(chunk);
      return true;
    } catch (const std::bad_alloc &) {
      return false;
    }
  }

  static int64_t ChunkBytes(const Chunk &chunk) {
    return static_cast<int64_t>(chunk.capacity * sizeof(T));
  }

  void Lose(Chunk &chunk) {
    store_->records_lost += chunk.count;
    chunk.state = kLost;
    FreeRecords(chunk);
  }

  void AdvanceFirstResident() {
    while (first_resident_ < chunks_.size() && chunks_[first_resident_].state != kResident) {
      ++first_resident_;
    }
  }

  bool AddChunk() {
    const size_t shift = std::min<size_t>(chunks_.size() + first_kept_chunks_, 30);
    const size_t capacity = std::min<size_t>(kMaxChunk, kFirstChunk << shift);
    std::shared_ptr<T[]> records;
    if (!Allocate(capacity, &records)) return false;
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

  static bool Allocate(size_t capacity, std::shared_ptr<T[]> *out) {
    T *raw = new (std::nothrow) T[capacity];
    if (raw == nullptr) return false;
    try {
      out->reset(raw);
    } catch (const std::bad_alloc &) {  // no control block: reset() has deleted `raw`
      return false;
    }
    return true;
  }

  void ReleaseChunk(Chunk &chunk) {
    FreeRecords(chunk);
    SpillFile *file = store_ != nullptr ? store_->spill.get() : nullptr;
    if (chunk.pending != nullptr) {
      if (store_ != nullptr) store_->in_flight_bytes -= ChunkBytes(chunk);
      // The write still holds the records; whoever finishes second gives the space back.
      if (chunk.pending->stage.exchange(SpillWrite::kAbandoned) == SpillWrite::kDone &&
          chunk.pending->offset >= 0 && file != nullptr) {
        file->Release(chunk.pending->offset, chunk.count * sizeof(T));
      }
      chunk.pending.reset();
    }
    if (chunk.spill_offset >= 0 && file != nullptr) {
      file->Release(chunk.spill_offset, chunk.count * sizeof(T));
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
    std::shared_ptr<T[]> records;
    if (!Allocate(chunk.capacity, &records) || !ReadSpilled(chunk, records.get())) {
      if (store_ != nullptr && records != nullptr) {
        store_->records_lost += chunk.count;
        chunk.state = kLost;
      }
      return;
    }
    chunk.records = std::move(records);
    chunk.state = kResident;
    first_resident_ = std::min(first_resident_, static_cast<size_t>(&chunk - chunks_.data()));
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
  // Chunks before this one are spilled or lost: the spill passes start here, so a long session's
  // thousands of spilled chunks cost nothing per collector pass.
  mutable size_t first_resident_ = 0;
  size_t first_kept_chunks_ = 0;  // chunks evicted so far: new chunks keep their full size
};

}  // namespace tfprof
