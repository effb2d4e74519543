// A thread that does a session's slow writes (spilled chunks, streamed step records), so the
// collector never waits on storage: it keeps draining rings while a write is under way, and a
// writer that falls behind by more than its byte budget makes the collector drop and count, not
// block.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tfprof {

class BackgroundWriter {
 public:
  // `max_queued_bytes`: how far the writer may fall behind before TrySubmit() refuses.
  explicit BackgroundWriter(size_t max_queued_bytes) : max_queued_bytes_(max_queued_bytes) {}
  // Runs what was submitted, then joins the thread.
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter &) = delete;
  BackgroundWriter &operator=(const BackgroundWriter &) = delete;

  // Queues `write` (which handles about `bytes` bytes) to run on the writer thread, in submission
  // order. Returns false, running nothing, when that would put the writer more than its budget
  // behind, or when no memory or thread was left: the caller drops and counts instead.
  bool TrySubmit(size_t bytes, std::function<void()> write);

  // Whether TrySubmit() would take a write of `bytes` now (memory aside). Only the submitting
  // thread's own submissions can make the answer go from yes to no.
  bool WouldAccept(size_t bytes) const;

  // Waits until everything submitted so far has run.
  void WaitIdle();

  // Bytes submitted and not yet written.
  size_t queued_bytes() const;

  // Jobs that ended in an exception (caught here: one escaping the thread would end the
  // program). Jobs are written to count their own failures, so this stays 0 unless one missed.
  uint64_t failed_jobs() const { return failed_jobs_.load(std::memory_order_relaxed); }

 private:
  struct Job {
    size_t bytes;
    std::function<void()> write;
  };
  void Run();

  const size_t max_queued_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // work arrived, or stop
  std::condition_variable idle_;  // a job finished
  std::deque<Job> jobs_;
  size_t queued_bytes_ = 0;
  bool running_job_ = false;
  bool stop_ = false;
  std::atomic<uint64_t> failed_jobs_{0};
  std::thread thread_;
};

}  // namespace tfprof
