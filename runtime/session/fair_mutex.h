// A mutex that serves its waiters in the order they came (a ticket lock).
//
// std::mutex is not fair: a thread that unlocks and locks again at once - a program calling
// prof_export() or prof_get_stats() in a loop - can keep another thread waiting for ever, and the
// preload library's signal flush (prof_stop, then prof_get_stats) must get its turn within its
// deadline. Here a waiter waits for at most the holders that came before it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>

namespace tfprof {

class FairMutex {
 public:
  void lock() {
    std::unique_lock<std::mutex> guard(mutex_);
    const uint64_t ticket = next_ticket_++;
    turn_.wait(guard, [&] { return serving_ == ticket; });
  }

  void unlock() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      ++serving_;
    }
    turn_.notify_all();
  }

  // In a fork() child, the only thread, after fork() copied the state mid-way: starts unlocked,
  // with no waiters (the copies of the parent's may be mid-update).
  void ResetAfterFork() {
    new (&mutex_) std::mutex();
    new (&turn_) std::condition_variable();
    next_ticket_ = 0;
    serving_ = 0;
  }

 private:
  std::mutex mutex_;
  std::condition_variable turn_;
  uint64_t next_ticket_ = 0;  // guarded by mutex_
  uint64_t serving_ = 0;      // guarded by mutex_
};

}  // namespace tfprof
