/* A program for the kill matrix (kill_matrix.py): it streams a session to OUTPUT (output=, so
 * the file grows piece by piece while it runs) with steps of a known shape, until it is killed.
 * Every step holds exactly SPANS spans named "work": half on the main thread, which marks the
 * step, half on a helper thread, so each streamed piece holds several rows whose order the
 * readers must not mistake for steps. A step's spans all begin and end inside it.
 * It prints "ready" once the session runs; then it loops, stepping, until killed (or until STEPS
 * steps when STEPS is given, then stops the session and exits 0).
 *
 * Usage: stream_steps OUTPUT FORMAT SPANS [STEPS]   (FORMAT: json|tfrecord|tensorboard|perfetto)
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tfprof/tfprof.h"

static long g_helper_spans;
static long g_step_wanted; /* the step the helper is asked to fill; -1: none */
static long g_step_done = -1;
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_changed = PTHREAD_COND_INITIALIZER;
static volatile double g_sink;

/* Short, honest work, so spans have nonzero durations. */
static void Work(void) {
  double sum = 0;
  for (int i = 0; i < 300; ++i) sum += (double)i * 0.5;
  g_sink = sum;
}

static void Spans(long count) {
  for (long i = 0; i < count; ++i) {
    prof_span_begin("work");
    Work();
    prof_span_end();
  }
}

/* The helper: fills each step it is asked to, then says so. */
static void *Helper(void *unused) {
  (void)unused;
  long filled = -1;
  for (;;) {
    pthread_mutex_lock(&g_mutex);
    while (g_step_wanted == filled) pthread_cond_wait(&g_changed, &g_mutex);
    const long step = g_step_wanted;
    pthread_mutex_unlock(&g_mutex);
    Spans(g_helper_spans);
    pthread_mutex_lock(&g_mutex);
    g_step_done = step;
    filled = step;
    pthread_cond_broadcast(&g_changed);
    pthread_mutex_unlock(&g_mutex);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: stream_steps OUTPUT FORMAT SPANS [STEPS]\n");
    return 2;
  }
  const long spans = strtol(argv[3], NULL, 10);
  const long steps = argc == 5 ? strtol(argv[4], NULL, 10) : -1;
  if (spans < 2 || spans % 2 != 0) {
    fprintf(stderr, "stream_steps: SPANS must be even and at least 2\n");
    return 2;
  }
  char options[4096];
  snprintf(options, sizeof options, "output=%s,format=%s,flush_interval_ms=1,buffer_events=1048576,cuda=off", argv[1],
           argv[2]);
  if (prof_start(options) != 0) {
    fprintf(stderr, "stream_steps: prof_start: %s\n", prof_last_error());
    return 1;
  }
  g_helper_spans = spans / 2;
  g_step_wanted = -1;
  pthread_t helper;
  if (pthread_create(&helper, NULL, Helper, NULL) != 0) return 1;
  printf("ready\n");
  fflush(stdout);
  for (long step = 0; steps < 0 || step < steps; ++step) {
    prof_begin_step(step);
    pthread_mutex_lock(&g_mutex);
    g_step_wanted = step;
    pthread_cond_broadcast(&g_changed);
    pthread_mutex_unlock(&g_mutex);
    Spans(spans / 2);
    pthread_mutex_lock(&g_mutex);
    while (g_step_done != step) pthread_cond_wait(&g_changed, &g_mutex);
    pthread_mutex_unlock(&g_mutex);
    prof_end_step();
  }
  const int stopped = prof_stop();
  if (stopped != 0) fprintf(stderr, "stream_steps: prof_stop: %s\n", prof_last_error());
  return stopped == 0 ? 0 : 1;
}
