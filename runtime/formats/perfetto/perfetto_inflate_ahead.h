// Inflates a Perfetto file's compressed_packets batches on a thread of its own, ahead of the
// reader: the reader reads one batch's packets while the next batches inflate (inflating was a
// fifth of reading tfprof's own .pftrace). The thread walks the file's top-level packets as the
// reader does and inflates each batch it finds, in file order, keeping a few MiB inflated ahead
// and walking at most 32 MiB of the file ahead of the reader.
// Anything it cannot walk or inflate it leaves to the reader, which inflates that batch itself
// and says what is wrong: the trace read, and any error, are the same with it or without it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace tfprof {

class InflateAhead {
 public:
  // Starts walking `data` (a whole file's bytes, which must outlive this) on a new thread; when
  // no thread can be had, Take() finds nothing.
  explicit InflateAhead(std::string_view data);
  // Stops the thread and waits for it.
  ~InflateAhead();
  InflateAhead(const InflateAhead &) = delete;
  InflateAhead &operator=(const InflateAhead &) = delete;

  // The batch whose compressed payload is `payload` (a view into the data), inflated into
  // `*packets` (swapped in): true. False when it was not inflated ahead, or did not inflate:
  // the caller inflates it itself. Batches are taken in file order; asking for one drops those
  // before it. Waits while the thread has not yet come to `payload`.
  bool Take(std::string_view payload, std::string *packets);

 private:
  struct Batch {
    const char *payload = nullptr;  // where its compressed bytes start in the data
    bool inflated = false;
    std::string packets;
  };

  void Walk();         // the thread: WalkBatches(), then the walk is over
  void WalkBatches();  // inflates and queues the batches until the data ends, damage or stop
  // Queues `batch` once fewer than kAheadBytes wait; false when told to stop.
  bool Push(Batch batch);

  // What a queued batch holds in memory: its buffer's capacity, and the bookkeeping.
  static size_t Cost(const Batch &batch);

  // Memory the queued batches may hold before the thread waits for the reader (a batch of up
  // to kMaxInflatedBatchBytes still goes into an empty queue).
  static constexpr size_t kAheadBytes = size_t{4} << 20;
  static constexpr size_t kBatchOverheadBytes = 256;
  // How far the walk may run ahead of the batch the reader last took: a file with few or no
  // batches is not walked (and its pages touched) far beyond where the reader is.
  static constexpr size_t kWalkAheadBytes = size_t{32} << 20;
  static constexpr size_t kWalkCheckBytes = size_t{1} << 20;  // checked once a MiB of the walk
  // Buffers the reader gave back, kept for the next batches, when they are no larger than this.
  static constexpr size_t kSpareBuffers = 4;
  static constexpr size_t kSpareBufferBytes = size_t{1} << 20;

  const std::string_view data_;
  std::mutex mutex_;
  std::condition_variable changed_;  // a batch queued or taken, the walk ended, or stop
  std::deque<Batch> ready_;          // under mutex_, in file order
  size_t ready_cost_ = 0;           // Cost() of the queued batches
  std::vector<std::string> spare_;  // under mutex_
  size_t reader_at_ = 0;            // where the payload the reader last asked for lies in data_
  bool walked_ = false;  // the thread queues no more
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tfprof
