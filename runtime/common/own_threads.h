// Which threads are tfprof's own. The preload library records the program's thread starts (its
// pthread_create hook) and must leave out the threads tfprof starts: the collector, the writer,
// a capture's threads, CUPTI's. A thread counts as creating tfprof's threads while it runs a
// control call (prof_start, prof_export, ... and the capture start inside a program's
// prof_begin_step) or is itself one of tfprof's threads; prof__creating_own_threads() (internal
// entry point) tells the hook.
#pragma once

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

}  // namespace tfprof
