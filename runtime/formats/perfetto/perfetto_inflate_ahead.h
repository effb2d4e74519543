// Inflates a Perfetto file's compressed_packets batches on a thread of its own, ahead of the
// reader: the reader reads one batch's packets while the next batches inflate (inflating was a
// fifth of reading tfprof's own .pftrace). The thread walks the file's top-level packets as the
// reader does and inflates each batch it finds, in file order, keeping a few MiB inflated ahead.
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

  // Inflated bytes kept ready before the thread waits for the reader.
  static constexpr size_t kAheadBytes = size_t{4} << 20;
  // Buffers the reader gave back, kept for the next batches.
  static constexpr size_t kSpareBuffers = 4;

  const std::string_view data_;
  std::mutex mutex_;
  std::condition_variable changed_;  // a batch queued or taken, the walk ended, or stop
  std::deque<Batch> ready_;          // under mutex_, in file order
  size_t ready_bytes_ = 0;
  std::vector<std::string> spare_;  // under mutex_
  bool walked_ = false;  // the thread queues no more
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tfprof
