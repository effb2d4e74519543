// The process-wide list of thread buffers: attaches a thread's buffer on its first event of a
// session, retires it when the thread exits, and lets the collector visit and free buffers.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include <mutex>
#include "runtime/collector/thread_buffer.h"

namespace tfprof {

class ThreadRegistry {
 public:
  // The one registry. Never destroyed: threads may exit after static destructors ran.
  static ThreadRegistry &Get();

  // Ring capacity for buffers attached from now on (a power of two).
  void SetRingCapacity(uint32_t capacity) {
    ring_capacity_.store(capacity, std::memory_order_relaxed);
  }

  // Calling thread only. Makes a buffer for session `word`, carrying over the explicit thread
  // name of `previous` (the thread's buffer of an earlier session, or null) and retiring it.
  // Returns null if memory ran out (the event is then lost; nothing else breaks).
  ThreadBuffer *AttachCurrentThread(uint64_t word, ThreadBuffer *previous);

  // Calls `visit(ThreadBuffer &buffer, bool final)` for every buffer with the registry locked,
  // so at most one drain runs at a time. `final` is true for a retired buffer, which is freed
  // right after its visit: the visitor must take all its records then.
  template <typename Visitor>
  void DrainAll(Visitor &&visit) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t kept = 0;
    for (ThreadBuffer *buffer : buffers_) {
      const bool final = buffer->retired.load(std::memory_order_acquire);
      visit(*buffer, final);
      if (final) {
        delete buffer;
      } else {
        buffers_[kept++] = buffer;
      }
    }
    buffers_.resize(kept);
  }

  // Around fork() (the profiler's atfork handlers): no other thread holds the registry meanwhile.
  void LockForFork() { mutex_.lock(); }
  void UnlockAfterFork() { mutex_.unlock(); }

  // Calls `visit(const ThreadBuffer &buffer)` for every buffer, freeing none.
  template <typename Visitor>
  void ForEach(Visitor &&visit) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const ThreadBuffer *buffer : buffers_) visit(*buffer);
  }

 private:
  ThreadRegistry();
  static void OnThreadExit(void *buffer);

  std::mutex mutex_;
  std::vector<ThreadBuffer *> buffers_;
  std::atomic<uint32_t> ring_capacity_{65536};
  pthread_key_t exit_key_;
};

}  // namespace tfprof
