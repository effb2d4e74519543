/* prof_export() alone, repeated: records SPANS spans once (all kept in memory), then exports them
 * REPEATS times to PATH and prints each export's seconds and their median. Repeating the export in
 * one process takes the recording's noise out; run it against another libtfprof.so through
 * LD_LIBRARY_PATH to compare builds (benchmarks/RESULTS.md). A path on tmpfs (/dev/shm) keeps the
 * disk's writeback out of the figure.
 *
 *   build/dev/benchmarks/bench_export [SPANS=3000000] [PATH=/dev/shm/tfprof_bench_export.json]
 *                                     [REPEATS=5]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tfprof/tfprof.h"

static double NowSeconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static int CompareDoubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const long spans = argc > 1 ? atol(argv[1]) : 3000000;
  const char *path = argc > 2 ? argv[2] : "/dev/shm/tfprof_bench_export.json";
  const int repeats = argc > 3 ? atoi(argv[3]) : 5;
  if (spans <= 0 || repeats <= 0 || repeats > 100) {
    fprintf(stderr, "usage: bench_export [SPANS>0] [PATH] [REPEATS 1-100]\n");
    return 2;
  }
  /* Every record stays in the ring and in memory: no drops, no spill file. */
  char options[160];
  snprintf(options, sizeof options,
           "clock=tsc,cuda=off,buffer_events=%ld,flush_interval_ms=0,max_memory_mb=0", 2 * spans);
  if (prof_start(options) != PROF_OK) {
    fprintf(stderr, "bench_export: prof_start failed: %s\n", prof_last_error());
    return 1;
  }
  for (long i = 0; i < spans; ++i) {
    prof_span_begin((i & 1) ? "MatMul" : "Conv2D");
    prof_span_end();
  }
  prof_stop();
  double seconds[100];
  for (int r = 0; r < repeats; ++r) {
    const double start = NowSeconds();
    if (prof_export(path) != PROF_OK) {
      fprintf(stderr, "bench_export: prof_export failed: %s\n", prof_last_error());
      return 1;
    }
    seconds[r] = NowSeconds() - start;
    printf("export %d: %.3f s\n", r + 1, seconds[r]);
  }
  remove(path);
  qsort(seconds, (size_t)repeats, sizeof seconds[0], CompareDoubles);
  printf("%s %ld spans to .json: median %.3f s (%.2f M spans/s), min %.3f s, max %.3f s\n",
         prof_version_string(), spans, seconds[repeats / 2], (double)spans / seconds[repeats / 2] / 1e6,
         seconds[0], seconds[repeats - 1]);
  return 0;
}
