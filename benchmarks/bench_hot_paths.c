/* Hot-path benchmark: the program side of benchmarks/bench_hot_paths.py.
 *
 * One mode per process, each a loop of pairs as an instrumented program makes them:
 *   span             prof_span_begin("op") + prof_span_end() through the header's inline check:
 *                    under a session started with prof_start(OPTIONS), or none when OPTIONS is "-"
 *   span-id          the same with prof_span_begin_id() and "op" registered once
 *                    (prof_register_name)
 *   span-long        the same with a 23-byte name, "decoder.layer.attention"
 *   nvtx             nvtxRangePushA("op") + nvtxRangePop() through the header-only NVTX v3 API:
 *                    run plain, NVTX has no tool to call; under LD_PRELOAD=libtfprof_preload.so
 *                    each pair becomes a tfprof span
 *   nvtx-registered  the same with a string registered once (nvtxDomainRegisterStringA) and pushed
 *                    with nvtxDomainRangePushEx, as NVTX recommends for hot ranges
 *   step             prof_begin_step(i) alone, as a loop that marks each iteration calls it (each
 *                    begin ends the step before): one call per "pair"; with no session only
 *   empty            the loop alone: what the unrolled loop adds per pair (subtracted from
 *                    instruction counts)
 *   dormant SECONDS  the wake check (issue 38): prof_listen("cuda=off"), then a line
 *                    {"phase": "listening", "pid"}, disabled spans for SECONDS, a line
 *                    {"phase": "spun", "pairs"}, and it waits for stdin to close before it exits,
 *                    so that bench_hot_paths.py reads its threads' context switches meanwhile
 * OPTIONS "-" runs with no session; "listen" or "listen:OPTS" runs with no session either, after
 * prof_listen(OPTS) (the dormant, capturable process of issue 38), and fails if its listener
 * thread ran meanwhile: a capture came (`tfprof capture --all` of this user elsewhere).
 * Pairs come in bursts of BURST (a multiple of 8), each timed with clock_gettime(CLOCK_MONOTONIC)
 * and followed by a pause of PAUSE_MS, outside the timed region, in which tfprof's collector
 * thread drains the thread's ring (every flush_interval_ms, 10 by default): a burst must fit in
 * the ring (two events per pair), which is then reused from burst to burst as in a thread's
 * steady state. Before each timed burst of the mode comes a timed burst of the floor: two raw
 * timestamp reads per pair (rdtsc, or clock_gettime where there is none), the least a recorded
 * span can cost, measured the same way in the same process, because on a shared VM a process may
 * draw a clock twice as slow as the next one. WARMUP_BURSTS untimed bursts come first (NVTX loads
 * its tool, the thread gets its ring and name cache, every page of the ring is touched once).
 *
 * Prints one JSON line:
 *   {"mode", "session", "listening", "timed_pairs", "total_pairs" (all pairs of the mode made),
 *    "ns_per_pair" (mean over the timed bursts), "best_burst_ns_per_pair",
 *    "floor_ns_per_pair", "best_floor_ns_per_pair", "events_recorded", "events_dropped"}
 * and fails if a span session dropped an event (a dropped event costs less than a recorded one).
 * The burst functions are not inlined, so that callgrind can count one mode's instructions alone
 * (--toggle-collect=SpanBurst and so on).
 *
 * Usage: bench_hot_paths span|span-id|span-long|step|nvtx|nvtx-registered|empty
 *                        [BURSTS [BURST [OPTIONS]]]   (defaults: 10 20000 -)
 *        bench_hot_paths dormant SECONDS
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#ifdef TFPROF_BENCH_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif
#include <tfprof/tfprof.h>

#include "bench_timing.h"

#define NOINLINE __attribute__((noinline))

static volatile uint64_t g_sink;

NOINLINE void FloorBurst(long pairs) {
  uint64_t sum = 0;
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(sum += TIMESTAMP(); sum += TIMESTAMP();)
  }
  g_sink = sum;
}

/* "op" aligned, as kLongName below: where the linker put the literal moved with any change to
 * this file, and with it the count (76 or 82 instructions a pair on 2026-11-29). */
static const char kOpName[] __attribute__((aligned(8))) = "op";

NOINLINE void SpanBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(prof_span_begin(kOpName); prof_span_end();)
  }
}

/* A typical op name of three aligned words (23 bytes and the NUL), where a literal's placement
 * would make the count depend on the linker: names that cross more words cost a few instructions
 * more (benchmarks/RESULTS.md). */
static const char kLongName[] __attribute__((aligned(8))) = "decoder.layer.attention";

NOINLINE void SpanLongBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(prof_span_begin(kLongName); prof_span_end();)
  }
}

static prof_name_id_t g_op_id;

NOINLINE void SpanIdBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(prof_span_begin_id(g_op_id); prof_span_end();)
  }
}

NOINLINE void StepBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(prof_begin_step(i);)
  }
}

NOINLINE void EmptyBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(__asm__ volatile("");)
  }
}

#ifdef TFPROF_BENCH_HAVE_NVTX
NOINLINE void NvtxBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(nvtxRangePushA("op"); nvtxRangePop();)
  }
}

static nvtxEventAttributes_t g_registered_op;

NOINLINE void NvtxRegisteredBurst(long pairs) {
  for (long i = 0; i < pairs; i += 8) {
    REPEAT8(nvtxDomainRangePushEx(NULL, &g_registered_op); nvtxDomainRangePop(NULL);)
  }
}

static void RegisterOp(void) {
  memset(&g_registered_op, 0, sizeof g_registered_op);
  g_registered_op.version = NVTX_VERSION;
  g_registered_op.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  g_registered_op.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  g_registered_op.message.registered = nvtxDomainRegisterStringA(NULL, "op");
}
#endif

enum { WARMUP_BURSTS = 4, PAUSE_MS = 50 };

static void Pause(void) {
  const struct timespec pause = {0, PAUSE_MS * 1000000L};
  nanosleep(&pause, NULL);
}

typedef struct {
  double mean_ns, best_ns;             /* per pair: over all timed bursts, in the fastest one */
  double floor_mean_ns, floor_best_ns; /* the same for the floor's bursts */
} Timing;

static double TimeOne(void (*burst)(long), long pairs) {
  const double start = NowNs();
  burst(pairs);
  return NowNs() - start;
}

/* Per-pair times over `bursts` timed bursts of `burst` and of the floor, after WARMUP_BURSTS
 * untimed ones of `burst`. */
static Timing TimeBursts(void (*burst)(long), long bursts, long pairs_per_burst) {
  for (int b = 0; b < WARMUP_BURSTS; ++b) {
    burst(pairs_per_burst);
    Pause();
  }
  double elapsed = 0, best = 1e300, floor_elapsed = 0, floor_best = 1e300;
  for (long b = 0; b < bursts; ++b) {
    const double floor_took = TimeOne(FloorBurst, pairs_per_burst);
    floor_elapsed += floor_took;
    if (floor_took < floor_best) floor_best = floor_took;
    const double took = TimeOne(burst, pairs_per_burst);
    elapsed += took;
    if (took < best) best = took;
    Pause();
  }
  const double pairs = (double)(bursts * pairs_per_burst);
  const Timing timing = {elapsed / pairs, best / (double)pairs_per_burst, floor_elapsed / pairs,
                         floor_best / (double)pairs_per_burst};
  return timing;
}

static void Fail(const char *what, int rc) {
  fprintf(stderr, "bench_hot_paths: %s: %s (%s)\n", what, prof_strerror(rc), prof_last_error());
  exit(1);
}

/* Context switches of this process's threads but the main one, summed: the listener's (tfprof's
 * only thread while dormant). It changes only when something connects to the endpoint, such as
 * a `tfprof capture --all` of this user run meanwhile, which would make a listening run measure
 * a capture instead of the dormant path. */
static long OtherThreadsSwitches(void) {
  DIR *tasks = opendir("/proc/self/task");
  if (tasks == NULL) return -1;
  long total = 0;
  const long self = (long)getpid();
  for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) {
    const long tid = atol(entry->d_name);
    if (tid <= 0 || tid == self) continue;
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    FILE *status = fopen(path, "r");
    if (status == NULL) continue;
    while (fgets(line, sizeof line, status) != NULL) {
      long count = 0;
      if (sscanf(line, "voluntary_ctxt_switches: %ld", &count) == 1 ||
          sscanf(line, "nonvoluntary_ctxt_switches: %ld", &count) == 1) {
        total += count;
      }
    }
    fclose(status);
  }
  closedir(tasks);
  return total;
}

/* OtherThreadsSwitches() once two readings 50 ms apart agree (2 s at most): the listener has
 * started and blocked in accept(), which on a loaded machine may take a while. */
static long SettledSwitches(void) {
  const struct timespec pause = {0, 50 * 1000000L};
  long last = OtherThreadsSwitches();
  for (int i = 0; i < 40; ++i) {
    nanosleep(&pause, NULL);
    const long now = OtherThreadsSwitches();
    if (now == last) break;
    last = now;
  }
  return last;
}

/* Listens, then spins on disabled spans for `seconds` while bench_hot_paths.py watches the
 * threads tfprof started: a dormant process must wake none of them. */
static int Dormant(double seconds) {
  const int rc = prof_listen("cuda=off");
  if (rc != PROF_OK) Fail("prof_listen", rc);
  SettledSwitches(); /* the listener reaches accept() before bench_hot_paths.py reads it */
  printf("{\"phase\": \"listening\", \"pid\": %ld}\n", (long)getpid());
  fflush(stdout);
  const double end = NowNs() + seconds * 1e9;
  long pairs = 0;
  while (NowNs() < end) {
    SpanBurst(8000);
    pairs += 8000;
  }
  printf("{\"phase\": \"spun\", \"pairs\": %ld}\n", pairs);
  fflush(stdout);
  while (getchar() != EOF) {
  }
  return prof_unlisten() == PROF_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "dormant") == 0) return Dormant(argc > 2 ? atof(argv[2]) : 2.0);
  void (*burst_function)(long) = NULL;
  if (strcmp(mode, "span") == 0) burst_function = SpanBurst;
  if (strcmp(mode, "span-long") == 0) burst_function = SpanLongBurst;
  if (strcmp(mode, "span-id") == 0) {
    g_op_id = prof_register_name("op");
    burst_function = SpanIdBurst;
  }
  if (strcmp(mode, "step") == 0) burst_function = StepBurst;
  if (strcmp(mode, "empty") == 0) burst_function = EmptyBurst;
#ifdef TFPROF_BENCH_HAVE_NVTX
  if (strcmp(mode, "nvtx") == 0) burst_function = NvtxBurst;
  if (strcmp(mode, "nvtx-registered") == 0) {
    RegisterOp();
    burst_function = NvtxRegisteredBurst;
  }
#else
  if (strncmp(mode, "nvtx", 4) == 0) {
    fprintf(stderr, "bench_hot_paths: built without the NVTX headers: no NVTX modes\n");
    return 2;
  }
#endif
  if (burst_function == NULL) {
    fprintf(stderr, "usage: bench_hot_paths span|span-id|span-long|step|nvtx|nvtx-registered|empty "
                    "[BURSTS [BURST [OPTIONS]]]\n"
                    "       bench_hot_paths dormant SECONDS\n");
    return 2;
  }
  const long bursts = argc > 2 ? atol(argv[2]) : 10;
  const long burst = argc > 3 ? atol(argv[3]) : 20000;
  const char *options = argc > 4 ? argv[4] : "-";
  if (bursts < 1 || burst < 8 || burst % 8 != 0) {
    fprintf(stderr, "bench_hot_paths: BURSTS must be >= 1 and BURST a positive multiple of 8\n");
    return 2;
  }
  const int listening = strncmp(options, "listen", 6) == 0 &&
                        (options[6] == '\0' || options[6] == ':');
  long listener_switches = 0;
  if (listening) {
    const int rc = prof_listen(options[6] == ':' ? options + 7 : NULL);
    if (rc != PROF_OK) Fail("prof_listen", rc);
    listener_switches = SettledSwitches();
  }
  const int with_session =
      strncmp(mode, "span", 4) == 0 && strcmp(options, "-") != 0 && !listening;
  if (with_session) {
    const int rc = prof_start(options);
    if (rc != PROF_OK) Fail("prof_start", rc);
  }
  const Timing timing = TimeBursts(burst_function, bursts, burst);
  prof_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  if (with_session) {
    int rc = prof_stop();
    if (rc != PROF_OK) Fail("prof_stop", rc);
    rc = prof_get_stats(&stats);
    if (rc != PROF_OK) Fail("prof_get_stats", rc);
  }
  if (listening && OtherThreadsSwitches() != listener_switches) {
    fprintf(stderr, "bench_hot_paths: the listener woke during the run: something connected "
                    "(a `tfprof capture --all` of this user?); these are not the dormant path's "
                    "figures\n");
    return 1;
  }
  printf("{\"mode\": \"%s\", \"session\": %s, \"listening\": %s, \"timed_pairs\": %ld, "
         "\"total_pairs\": %ld, \"ns_per_pair\": %.3f, \"best_burst_ns_per_pair\": %.3f, "
         "\"floor_ns_per_pair\": %.3f, \"best_floor_ns_per_pair\": %.3f, "
         "\"events_recorded\": %llu, \"events_dropped\": %llu}\n",
         mode, with_session ? "true" : "false", listening ? "true" : "false", bursts * burst,
         (bursts + WARMUP_BURSTS) * burst,
         timing.mean_ns, timing.best_ns, timing.floor_mean_ns, timing.floor_best_ns,
         (unsigned long long)stats.events_recorded, (unsigned long long)stats.events_dropped);
  if (listening) {
    const int rc = prof_unlisten();
    if (rc != PROF_OK) Fail("prof_unlisten", rc);
  }
  if (stats.events_dropped != 0) {
    fprintf(stderr, "bench_hot_paths: %llu events dropped; enlarge buffer_events\n",
            (unsigned long long)stats.events_dropped);
    return 1;
  }
  return 0;
}
