// Thread lifetimes: pthread_create is wrapped so that each thread the program starts records a
// "thread start" instant as it begins and a "thread exit" instant as it ends (returning or
// calling pthread_exit, which unwinds through the guard below). With the thread's name, the
// trace then shows when each thread lived, even one that recorded nothing else.
#include <dlfcn.h>
#include <pthread.h>

#include <cerrno>
#include <cstdlib>

#include "bindings/c/internal_entry_points.h"
#include "bindings/preload/preload_session.h"
#include "tfprof/tfprof.h"

namespace tfprof::preload {
namespace {

using CreateFunction = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct ThreadStart {
  void *(*routine)(void *);
  void *argument;
};

struct ExitMark {
  ~ExitMark() { prof_instant("thread exit"); }
};

void *RunThread(void *start_pointer) {
  const ThreadStart start = *static_cast<ThreadStart *>(start_pointer);
  std::free(start_pointer);
  prof_instant("thread start");
  ExitMark exit_mark;
  return start.routine(start.argument);
}

CreateFunction RealCreate() {
  static CreateFunction real = reinterpret_cast<CreateFunction>(dlsym(RTLD_NEXT, "pthread_create"));
  return real;
}

}  // namespace
}  // namespace tfprof::preload

extern "C" __attribute__((visibility("default"))) int pthread_create(
    pthread_t *thread, const pthread_attr_t *attributes, void *(*routine)(void *), void *argument) {
  using namespace tfprof::preload;
  const CreateFunction real = RealCreate();
  if (real == nullptr) return EAGAIN;  // cannot happen with glibc; never call ourselves
  // Threads tfprof itself starts (collector, writers, a capture's, signal watcher, CUPTI's) are not
  // the program's: the preload's own (InsideOwnStart) and the runtime's, wherever its control
  // calls run (a capture's session starts inside the program's prof_begin_step()).
  if (!HooksEnabled() || prof_session_active == 0 || InsideOwnStart() ||
      prof__creating_own_threads() != 0) {
    return real(thread, attributes, routine, argument);
  }
  auto *start = static_cast<ThreadStart *>(std::malloc(sizeof(ThreadStart)));
  if (start == nullptr) return real(thread, attributes, routine, argument);
  *start = ThreadStart{routine, argument};
  const int result = real(thread, attributes, &RunThread, start);
  if (result != 0) std::free(start);
  return result;
}
