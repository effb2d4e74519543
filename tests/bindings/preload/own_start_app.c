/* A program that starts its own session, as the CUDA example does, while the preload library's
 * runs: prof_start fails with PROF_EALREADY and leaves a message in the thread's last error; the
 * preload then stops its session from an atexit handler, after glibc destroyed the main thread's
 * thread_local objects. That handler once wrote into the freed message (valgrind: invalid write;
 * glibc: "malloc(): unsorted double linked list corrupted" at exit on an H200). */
#include <stdio.h>

#include "tfprof/tfprof.h"

int main(int argc, char **argv) {
  const int status = prof_start(argc > 1 ? argv[1] : "output=own_start_app.unused.json");
  printf("%d %s\n", status, prof_last_error());
  prof_span_begin("own work");
  prof_span_end();
  return status == PROF_EALREADY ? 0 : 1;
}
