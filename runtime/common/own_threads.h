// Which threads are tfprof's own. The preload library records the program's thread starts (its
// pthread_create hook) and must leave out the threads tfprof starts: the collector, the writer,
// a capture's threads, CUPTI's. A thread counts as creating tfprof's threads while it runs a
// control call (prof_start, prof_export, ... and the capture start inside a program's
// prof_begin_step) or is itself one of tfprof's threads; prof__creating_own_threads() (internal
// entry point) tells the hook.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

namespace tfprof {

inline thread_local int t_own_thread_scopes = 0;

// Active for its lifetime on the calling thread; nests.
class OwnThreadsScope {
 public:
  OwnThreadsScope() { ++t_own_thread_scopes; }
  ~OwnThreadsScope() { --t_own_thread_scopes; }
  OwnThreadsScope(const OwnThreadsScope &) = delete;
  OwnThreadsScope &operator=(const OwnThreadsScope &) = delete;
};

inline bool CreatingOwnThreads() { return t_own_thread_scopes > 0; }

// Starts one of tfprof's threads (collector, writer, a capture's): it takes none of the program's
// signals (a handler that waits for a flush, the preload's, must never run on the thread doing
// it) and what it starts is tfprof's too. Throws std::system_error as std::thread does.
template <typename Function>
std::thread StartOwnThread(Function &&function) {
  sigset_t all_signals;
  sigset_t previous;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous);
  try {
    std::thread thread([function = std::forward<Function>(function)]() mutable {
      const OwnThreadsScope own_threads;
      function();
    });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return thread;
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
}

}  // namespace tfprof
