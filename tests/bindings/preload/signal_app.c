/* A program for the signal tests: it records many spans through the C API (so that writing the
 * trace takes a while), then, by the mode named on the command line:
 *   stats|export|stop  a second thread calls prof_get_stats() / prof_export(EXPORT_PATH) in a loop,
 *                      or prof_stop() once; it is the only thread that takes signals, so a
 *                      signal arrives while it holds the session's control lock.
 *   exit               main returns at once: the preload library writes the trace at exit.
 * It prints "ready" when the signal may be sent, then waits to be killed.
 *
 * Usage: signal_app MODE SPANS [EXPORT_PATH]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfprof/tfprof.h"

static const char *g_mode;
static const char *g_export_path;

static void block_fatal_signals(int how) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(how, &set, NULL);
}

static void *control_thread(void *unused) {
  (void)unused;
  block_fatal_signals(SIG_UNBLOCK);
  printf("ready\n");
  fflush(stdout);
  if (strcmp(g_mode, "stop") == 0) {
    int status = prof_stop();
    fprintf(stderr, "signal_app: prof_stop returned %d\n", status);
  } else {
    for (;;) {
      if (strcmp(g_mode, "stats") == 0) {
        prof_stats_t stats;
        memset(&stats, 0, sizeof stats);
        stats.struct_size = sizeof stats;
        prof_get_stats(&stats);
      } else {
        prof_export(g_export_path);
      }
    }
  }
  for (;;) pause();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  g_mode = argv[1];
  const long spans = atol(argv[2]);
  g_export_path = argc > 3 ? argv[3] : "export.json";
  if (!prof_is_running()) {
    fprintf(stderr, "signal_app: run me under libtfprof_preload.so\n");
    return 2;
  }
  for (long index = 0; index < spans; ++index) {
    if (index % 1000 == 0) {
      prof_end_step();
      prof_begin_step(index / 1000);
    }
    if (index % 20000 == 0) usleep(1000); /* the collector keeps up: nothing is dropped */
    prof_span_begin("op");
    prof_span_end();
  }
  prof_end_step();
  if (strcmp(g_mode, "exit") == 0) {
    printf("ready\n");
    fflush(stdout);
    return 0;
  }
  block_fatal_signals(SIG_BLOCK);  /* from here on only the control thread takes them */
  pthread_t thread;
  pthread_create(&thread, NULL, control_thread, NULL);
  for (;;) pause();
}
