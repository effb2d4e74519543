/* tfprof memory over a long run: records spans at a fixed rate for a while and samples the
 * process's resident memory once a second.
 *
 * Usage: bench_memory RATE SECONDS STEP_MS OPTIONS
 *   RATE     events per second (a span is two events), paced in 1 ms slices
 *   SECONDS  how long to record
 *   STEP_MS  a training step every STEP_MS milliseconds (prof_begin_step), 0 for none
 *   OPTIONS  prof_start()'s option string ("" for defaults; "-" records nothing, the baseline)
 * Prints one JSON object: the RSS samples in KiB, the events issued, and the session's counts
 * (recorded, dropped, memory_dropped, discarded, memory_bytes, spill_bytes) after prof_stop(),
 * which writes `output=` when the options name one, and how long that stop took.
 * benchmarks/bench_memory.py runs it for each output and rate.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfprof/tfprof.h>

static int64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long ResidentKb(void) {
  FILE *status = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (status == NULL) return -1;
  while (fgets(line, sizeof line, status) != NULL) {
    if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
  }
  fclose(status);
  return kb;
}

// The session's collected records held in memory now, in KiB.
static long RecordsKb(void) {
  prof_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  if (prof_get_stats(&stats) != 0) return -1;
  return (long)(stats.memory_bytes / 1024);
}

static void SleepUntil(int64_t deadline_ns) {
  struct timespec ts;
  ts.tv_sec = (time_t)(deadline_ns / 1000000000);
  ts.tv_nsec = (long)(deadline_ns % 1000000000);
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s RATE SECONDS STEP_MS OPTIONS\n", argv[0]);
    return 2;
  }
  const int64_t rate = strtoll(argv[1], NULL, 10);
  const int64_t seconds = strtoll(argv[2], NULL, 10);
  const int64_t step_ms = strtoll(argv[3], NULL, 10);
  const char *options = argv[4];
  const int baseline = strcmp(options, "-") == 0;
  if (!baseline && prof_start(options) != 0) {
    fprintf(stderr, "prof_start(\"%s\"): %s\n", options, prof_last_error());
    return 1;
  }
  const int64_t spans_per_ms = rate / 2000;
  const int64_t start_ns = NowNs();
  int64_t issued = 0;
  int64_t step = 0;
  long samples[4096];
  long record_samples[4096];  // the session's records held in memory (prof_stats.memory_bytes)
  int sample_count = 0;
  for (int64_t slice = 0; slice < seconds * 1000; ++slice) {
    if (slice % 1000 == 0 && sample_count < 4096) {
      record_samples[sample_count] = baseline ? 0 : RecordsKb();
      samples[sample_count++] = ResidentKb();
    }
    if (step_ms > 0 && slice % step_ms == 0) {
      if (!baseline) prof_begin_step(step);
      ++step;
      ++issued;
    }
    for (int64_t i = 0; i < spans_per_ms; ++i) {
      if (!baseline) {
        prof_span_begin("op");
        prof_span_end();
      }
      issued += 2;
    }
    SleepUntil(start_ns + (slice + 1) * 1000000);
  }
  record_samples[sample_count] = baseline ? 0 : RecordsKb();
  samples[sample_count++] = ResidentKb();
  const int64_t record_end_ns = NowNs();
  prof_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  double stop_s = 0;
  if (!baseline) {
    const int64_t stop_start = NowNs();
    if (prof_stop() != 0) fprintf(stderr, "prof_stop: %s\n", prof_last_error());
    stop_s = (double)(NowNs() - stop_start) / 1e9;
    prof_get_stats(&stats);
  }
  printf("{\"options\":\"%s\",\"rate\":%lld,\"seconds\":%lld,\"record_s\":%.3f,\"issued\":%lld,",
         options, (long long)rate, (long long)seconds, (double)(record_end_ns - start_ns) / 1e9,
         (long long)issued);
  printf("\"recorded\":%llu,\"dropped\":%llu,\"memory_dropped\":%llu,\"discarded\":%llu,"
         "\"memory_bytes\":%llu,\"spill_bytes\":%llu,\"stop_s\":%.3f,\"peak_rss_after_stop_kb\":%ld,"
         "\"rss_kb\":[",
         (unsigned long long)stats.events_recorded, (unsigned long long)stats.events_dropped,
         (unsigned long long)stats.events_memory_dropped, (unsigned long long)stats.events_discarded,
         (unsigned long long)stats.memory_bytes, (unsigned long long)stats.spill_bytes, stop_s,
         ResidentKb());
  for (int i = 0; i < sample_count; ++i) printf("%s%ld", i ? "," : "", samples[i]);
  printf("],\"records_kb\":[");
  for (int i = 0; i < sample_count; ++i) printf("%s%ld", i ? "," : "", record_samples[i]);
  printf("]}\n");
  return 0;
}
