/* Bursts: events faster than the collector drains them, in three shapes, one per process
 * (bench_bursts.py runs each against every output format and tabulates what is lost, by cause):
 *
 *   bench_bursts spans RATE THREADS SPANS OPTIONS   SPANS span pairs per thread, paced at RATE
 *                                                   pairs/s per thread, a step every 1000
 *   bench_bursts ranges THREADS PER OPTIONS         the main thread starts THREADS x PER ranges,
 *                                                   then THREADS threads end PER each
 *   bench_bursts names COUNT OPTIONS                COUNT distinct span names, one pair each
 *
 * Prints one JSON line: the session's counters after prof_stop() (events recorded, dropped by
 * full rings, lost to memory or a slow writer, discarded), the seconds spent recording and in
 * prof_stop() (which finishes the output). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfprof/tfprof.h"

static double Now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static long g_spans;
static double g_rate;

static void *PacedSpans(void *arg) {
  const int marks_steps = arg == NULL;
  const double start = Now();
  for (long i = 0; i < g_spans; ++i) {
    if (i % 1000 == 0) {
      while (g_rate > 0 && Now() - start < (double)i / g_rate) {
      }
      if (marks_steps) {
        if (i > 0) prof_end_step();
        prof_begin_step(i / 1000);
      }
    }
    prof_span_begin("op");
    prof_span_end();
  }
  if (marks_steps) prof_end_step();
  return NULL;
}

static uint64_t *g_range_ids;
static long g_ranges_per_thread;

static void *EndRanges(void *arg) {
  const long first = (long)(size_t)arg * g_ranges_per_thread;
  for (long i = 0; i < g_ranges_per_thread; ++i) prof_range_end(g_range_ids[first + i]);
  return NULL;
}

static void Start(const char *options) {
  if (prof_start(options) != PROF_OK) {
    fprintf(stderr, "bench_bursts: prof_start(\"%s\"): %s\n", options, prof_last_error());
    exit(2);
  }
}

/* Thread i gets (void *)i, except that with `first_marks_steps` thread 0 gets NULL (PacedSpans:
 * it marks the steps) and the others 1. */
static void RunThreads(int threads, void *(*body)(void *), int first_marks_steps) {
  pthread_t ids[64];
  for (int i = 0; i < threads; ++i) {
    void *arg = first_marks_steps ? (i == 0 ? NULL : (void *)1) : (void *)(size_t)i;
    pthread_create(&ids[i], NULL, body, arg);
  }
  for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_bursts spans|ranges|names ARGS... OPTIONS\n");
    return 2;
  }
  const char *mode = argv[1];
  const char *options = argv[argc - 1];
  double recording = 0;
  const double begin = Now();
  if (strcmp(mode, "spans") == 0 && argc == 6) {
    g_rate = atof(argv[2]);
    const int threads = atoi(argv[3]);
    g_spans = atol(argv[4]);
    if (threads < 1 || threads > 64) return 2;
    Start(options);
    RunThreads(threads, PacedSpans, 1);
  } else if (strcmp(mode, "ranges") == 0 && argc == 5) {
    const int threads = atoi(argv[2]);
    g_ranges_per_thread = atol(argv[3]);
    if (threads < 1 || threads > 64) return 2;
    g_range_ids = malloc(sizeof(uint64_t) * (size_t)threads * (size_t)g_ranges_per_thread);
    Start(options);
    for (long i = 0; i < threads * g_ranges_per_thread; ++i) g_range_ids[i] = prof_range_start("r");
    RunThreads(threads, EndRanges, 0);
  } else if (strcmp(mode, "names") == 0 && argc == 4) {
    const long count = atol(argv[2]);
    /* Every name its own string at its own address: each is interned once. */
    char *names = malloc((size_t)count * 24);
    for (long i = 0; i < count; ++i) snprintf(names + i * 24, 24, "name%ld", i);
    Start(options);
    for (long i = 0; i < count; ++i) {
      prof_span_begin(names + i * 24);
      prof_span_end();
    }
  } else {
    fprintf(stderr, "bench_bursts: bad arguments for mode '%s'\n", mode);
    return 2;
  }
  recording = Now() - begin;
  const double stop_begin = Now();
  const int stopped = prof_stop();
  const double stopping = Now() - stop_begin;
  prof_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  prof_get_stats(&stats);
  printf("{\"stop_status\":%d,\"recorded\":%llu,\"ring_dropped\":%llu,\"memory_dropped\":%llu,"
         "\"discarded\":%llu,\"record_s\":%.3f,\"stop_s\":%.3f}\n",
         stopped, (unsigned long long)stats.events_recorded,
         (unsigned long long)stats.events_dropped,
         (unsigned long long)stats.events_memory_dropped,
         (unsigned long long)stats.events_discarded, recording, stopping);
  return 0;
}
