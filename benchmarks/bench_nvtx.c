/* NVTX overhead benchmark: the program side of benchmarks/bench_nvtx.py.
 *
 * One mode per process:
 *   nvtx   nvtxRangePushA("op") + nvtxRangePop() pairs through the header-only NVTX v3 API, as
 *          an NVTX-instrumented program makes them. Run plain, NVTX has no tool to call and each
 *          pair costs two loads and branches; run under LD_PRELOAD=libtfprof_preload.so, each pair
 *          becomes a tfprof span.
 *   span   prof_span_begin("op") + prof_span_end() pairs, as a C program instrumented for tfprof
 *          makes them: under a session started with prof_start(OPTIONS), or with no session when
 *          OPTIONS is "-".
 * The pairs come in bursts of BURST (a multiple of 8), each timed with
 * clock_gettime(CLOCK_MONOTONIC), with a pause of PAUSE_MS between bursts, outside the timed
 * region, in which tfprof's collector thread drains the thread's ring (every flush_interval_ms,
 * 10 by default): a burst must fit in the ring (two events per pair, fewer than buffer_events),
 * and the ring is then reused from burst to burst as in a thread's steady state. WARMUP_BURSTS
 * untimed bursts come first (NVTX loads its tool, the thread gets its ring and name cache, and
 * every page of the ring is touched once), then BURSTS timed ones. Prints one JSON line:
 *   {"mode": "nvtx", "timed_pairs": N, "total_pairs": all pairs made, "ns_per_pair": mean over
 *    the timed bursts, "best_burst_ns_per_pair": in the fastest one, ...}
 * with, in span mode under a session, the session's recorded and dropped event counts (the run
 * fails if any event was dropped: a dropped event costs less than a recorded one).
 *
 * Usage: bench_nvtx nvtx|span [BURSTS [BURST [OPTIONS]]]   (defaults: 10 20000 -)
 */
#define _POSIX_C_SOURCE 200809L
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfprof/tfprof.h>

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Unrolled eight times, as in bench_overhead.c, so that the loop's own increment and branch weigh
 * the same (and little) in both modes. */
#define REPEAT8(x) x x x x x x x x

static void NvtxBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(nvtxRangePushA("op"); nvtxRangePop();)
  }
}

static void SpanBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(prof_span_begin("op"); prof_span_end();)
  }
}

enum { WARMUP_BURSTS = 4, PAUSE_MS = 50 };

static void Pause(void) {
  const struct timespec pause = {0, PAUSE_MS * 1000000L};
  nanosleep(&pause, NULL);
}

typedef struct {
  double mean_ns;  /* per pair, over all timed bursts */
  double best_ns;  /* per pair, in the fastest timed burst: the least disturbed by other tenants */
} Timing;

/* Per-pair times over `bursts` timed bursts, after WARMUP_BURSTS untimed ones. */
static Timing TimeBursts(void (*burst)(long), long bursts, long pairs_per_burst) {
  for (int b = 0; b < WARMUP_BURSTS; ++b) {
    burst(pairs_per_burst);
    Pause();
  }
  double elapsed = 0, best = 1e300;
  for (long b = 0; b < bursts; ++b) {
    const double start = NowNs();
    burst(pairs_per_burst);
    const double took = NowNs() - start;
    elapsed += took;
    if (took < best) best = took;
    Pause();
  }
  const Timing timing = {elapsed / (double)(bursts * pairs_per_burst), best / (double)pairs_per_burst};
  return timing;
}

static void Fail(const char *what, int rc) {
  fprintf(stderr, "bench_nvtx: %s: %s (%s)\n", what, prof_strerror(rc), prof_last_error());
  exit(1);
}

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "nvtx") != 0 && strcmp(argv[1], "span") != 0)) {
    fprintf(stderr, "usage: bench_nvtx nvtx|span [BURSTS [BURST [OPTIONS]]]\n");
    return 2;
  }
  const int nvtx_mode = strcmp(argv[1], "nvtx") == 0;
  const long bursts = argc > 2 ? atol(argv[2]) : 10;
  const long burst = argc > 3 ? atol(argv[3]) : 20000;
  const char *options = argc > 4 ? argv[4] : "-";
  if (bursts < 1 || burst < 8 || burst % 8 != 0) {
    fprintf(stderr, "bench_nvtx: BURSTS must be >= 1 and BURST a positive multiple of 8\n");
    return 2;
  }
  const long total_pairs = (bursts + WARMUP_BURSTS) * burst;

  if (nvtx_mode) {
    const Timing timing = TimeBursts(NvtxBurst, bursts, burst);
    printf("{\"mode\": \"nvtx\", \"timed_pairs\": %ld, \"total_pairs\": %ld, \"ns_per_pair\": %.3f, "
           "\"best_burst_ns_per_pair\": %.3f}\n",
           bursts * burst, total_pairs, timing.mean_ns, timing.best_ns);
    return 0;
  }

  const int with_session = strcmp(options, "-") != 0;
  if (with_session) {
    const int rc = prof_start(options);
    if (rc != PROF_OK) Fail("prof_start", rc);
  }
  const Timing timing = TimeBursts(SpanBurst, bursts, burst);
  prof_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  if (with_session) {
    int rc = prof_stop();
    if (rc != PROF_OK) Fail("prof_stop", rc);
    rc = prof_get_stats(&stats);
    if (rc != PROF_OK) Fail("prof_get_stats", rc);
  }
  printf("{\"mode\": \"span\", \"session\": %s, \"timed_pairs\": %ld, \"total_pairs\": %ld, "
         "\"ns_per_pair\": %.3f, \"best_burst_ns_per_pair\": %.3f, \"events_recorded\": %llu, "
         "\"events_dropped\": %llu}\n",
         with_session ? "true" : "false", bursts * burst, total_pairs, timing.mean_ns, timing.best_ns,
         (unsigned long long)stats.events_recorded, (unsigned long long)stats.events_dropped);
  if (stats.events_dropped != 0) {
    fprintf(stderr, "bench_nvtx: %llu events dropped; enlarge buffer_events\n",
            (unsigned long long)stats.events_dropped);
    return 1;
  }
  return 0;
}
