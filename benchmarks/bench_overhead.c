/* tfprof overhead and export benchmark.
 *
 * Prints, from one run on one machine:
 *   floor      two raw timestamp reads (the least an enabled span can cost: one per end)
 *   enabled    prof_span_begin("op") + prof_span_end() with a session running
 *   disabled   the same pair with no session running
 *   export     prof_export() throughput for N spans written as Chrome trace JSON
 * and the ratios the targets are stated in (benchmarks/RESULTS.md), as medians of repetitions in
 * this one process (benchmarks/bench_hot_paths.py measures over processes and counts
 * instructions). Exits 1 if events were dropped, since that would make the enabled figure
 * meaningless.
 *
 * Usage: bench_overhead [SPANS_FOR_OVERHEAD [SPANS_FOR_EXPORT [EXPORT_PATH]]]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <tfprof/tfprof.h>

#include "bench_timing.h"

static volatile uint64_t g_sink;

static double FloorNs(long iterations) {
  uint64_t sum = 0;
  const double start = NowNs();
  for (long i = 0; i < iterations; i += 8) {
    REPEAT8(sum += TIMESTAMP(); sum += TIMESTAMP();)
  }
  const double per = (NowNs() - start) / (double)iterations;
  g_sink = sum;
  return per;
}

/* Spans are timed in batches that fill half of a default-sized ring; between batches (outside
 * the timed region) prof_get_stats() drains the rings, as the collector thread would. This is a
 * thread's steady state: its ring is reused and stays in cache. */
enum { kBatchSpans = 16384 };

#define DEFINE_SPAN_PAIR_BENCHMARK(function_name, span_pair)                                \
  static double function_name(long iterations) {                                            \
    double elapsed = 0;                                                                     \
    prof_stats_t stats = {.struct_size = sizeof stats};                                     \
    for (long done = 0; done < iterations; done += kBatchSpans) {                           \
      const double start = NowNs();                                                         \
      for (long i = 0; i < kBatchSpans; i += 8) {                                           \
        REPEAT8(span_pair)                                                                  \
      }                                                                                     \
      elapsed += NowNs() - start;                                                           \
      if (prof_is_running()) prof_get_stats(&stats);                                        \
    }                                                                                       \
    return elapsed / (double)((iterations + kBatchSpans - 1) / kBatchSpans * kBatchSpans); \
  }

/* Through the header's inline check: what a C caller gets by default. */
DEFINE_SPAN_PAIR_BENCHMARK(SpanPairNs, prof_span_begin("op"); prof_span_end();)
/* The same pair called as functions, past the inline check (what a caller gets through a
 * function pointer, or with TFPROF_NO_INLINE_CHECK). */
DEFINE_SPAN_PAIR_BENCHMARK(DirectSpanPairNs, (prof_span_begin)("op"); (prof_span_end)();)

/* Each figure is the median of several repetitions, the floor and the enabled span measured in
 * alternation so that both see the same machine. One process only: on a shared VM the next
 * process may read the clock twice as slowly, so benchmarks/bench_hot_paths.py reports medians
 * over processes, each beside its own floor, and instruction counts that hold on any machine. */
enum { kRepetitions = 9 };

static int CompareDoubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double Median(double *values, int count) {
  qsort(values, (size_t)count, sizeof values[0], CompareDoubles);
  return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

static int Check(int rc, const char *what) {
  if (rc != PROF_OK) {
    fprintf(stderr, "bench_overhead: %s: %s (%s)\n", what, prof_strerror(rc), prof_last_error());
    exit(1);
  }
  return rc;
}

int main(int argc, char **argv) {
  const long overhead_spans = (argc > 1 ? atol(argv[1]) : 1000000) / 8 * 8;
  const long export_spans = argc > 2 ? atol(argv[2]) : 10000000;
  const char *export_path = argc > 3 ? argv[3] : "/tmp/tfprof_bench_export.json";

  double floors[kRepetitions], disabled[kRepetitions], enabled[kRepetitions];
  double direct_disabled[kRepetitions], direct_enabled[kRepetitions];
  for (int rep = 0; rep < kRepetitions; ++rep) {
    disabled[rep] = SpanPairNs(overhead_spans);
    direct_disabled[rep] = DirectSpanPairNs(overhead_spans);
  }
  /* No collector thread: the timed loops then share the machine with nothing of tfprof's. */
  Check(prof_start(CLOCK_OPTION ",buffer_events=65536,flush_interval_ms=0"), "prof_start");
  for (int rep = 0; rep < kRepetitions; ++rep) {
    floors[rep] = FloorNs(overhead_spans);
    enabled[rep] = SpanPairNs(overhead_spans);
    direct_enabled[rep] = DirectSpanPairNs(overhead_spans);
  }
  Check(prof_stop(), "prof_stop");
  const double floor_ns = Median(floors, kRepetitions);
  const double disabled_ns = Median(disabled, kRepetitions);
  const double enabled_ns = Median(enabled, kRepetitions);
  const double direct_disabled_ns = Median(direct_disabled, kRepetitions);
  const double direct_enabled_ns = Median(direct_enabled, kRepetitions);
  prof_stats_t stats = {.struct_size = sizeof stats};
  Check(prof_get_stats(&stats), "prof_get_stats");
  if (stats.events_dropped != 0) {
    fprintf(stderr, "bench_overhead: %llu events dropped; enlarge buffer_events\n",
            (unsigned long long)stats.events_dropped);
    return 1;
  }

  /* Export: one span = one Chrome trace event (two ring records). The collected events stay in
   * memory (max_memory_mb=0), as they did before 0.3, so the figure measures the writer alone;
   * an export that reads a spill file back is measured by bench_memory.py. The ring holds every
   * record and no collector runs (prof_stop drains it): a collector racing a tight loop on a
   * small machine drops events, and the figure would then be of fewer events than it says. */
  const long ring = 2 * export_spans < 67108864 ? 2 * export_spans : 67108864;
  char export_options[160];
  snprintf(export_options, sizeof export_options,
           CLOCK_OPTION ",buffer_events=%ld,flush_interval_ms=0,max_memory_mb=0", ring);
  Check(prof_start(export_options), "prof_start");
  for (long i = 0; i < export_spans; ++i) {
    prof_span_begin((i & 1) ? "MatMul" : "Conv2D");
    prof_span_end();
  }
  Check(prof_stop(), "prof_stop");
  Check(prof_get_stats(&stats), "prof_get_stats");
  if (stats.events_dropped != 0) {
    fprintf(stderr, "bench_overhead: %llu events dropped during the export run\n",
            (unsigned long long)stats.events_dropped);
    return 1;
  }
  const double export_start = NowNs();
  Check(prof_export(export_path), "prof_export");
  const double export_seconds = (NowNs() - export_start) / 1e9;
  struct stat file_info;
  const double megabytes = stat(export_path, &file_info) == 0 ? (double)file_info.st_size / 1e6 : 0;
  remove(export_path);
  const double events_per_second = (double)export_spans / export_seconds;

  printf("tfprof %s benchmark (median of %d repetitions, %ld spans each, one process)\n",
         prof_version_string(), kRepetitions, overhead_spans);
  printf("  floor: two raw timestamp reads     %8.2f ns\n", floor_ns);
  printf("  enabled span (begin+end)           %8.2f ns   ratio to floor %.3f  (target <= 1.30)\n",
         enabled_ns, enabled_ns / floor_ns);
  printf("  disabled span (begin+end)          %8.2f ns   (target <= 1.00 ns)\n", disabled_ns);
  printf("  same, direct calls (no inline check): enabled %.2f ns (ratio %.3f), disabled %.2f ns\n",
         direct_enabled_ns, direct_enabled_ns / floor_ns, direct_disabled_ns);
  printf("  export %ld spans to .json: %.2f s, %.0f MB, %.2f M events/s  (target >= 2.00)\n",
         export_spans, export_seconds, megabytes, events_per_second / 1e6);
  printf("  events recorded %llu, dropped %llu\n", (unsigned long long)stats.events_recorded,
         (unsigned long long)stats.events_dropped);
  const int met = enabled_ns / floor_ns <= 1.30 && disabled_ns <= 1.00 && events_per_second >= 2e6;
  printf("  targets: %s\n", met ? "all met" : "NOT all met");
  return 0;
}
