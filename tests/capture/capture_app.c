/* A training loop that waits to be captured (prof_listen()), for tests/tools/tfprof/test_capture.py.
 *
 * usage: capture_app STEPS STEP_MS [--no-steps] [--own-session FROM,TO] [--keep N] [--fork]
 *   STEPS      steps to run, then exit (0: until SIGTERM)
 *   STEP_MS    each step's length: spans forward (STEP_MS/2) and backward (the rest), with
 *              allreduce nested in backward (1 ms)
 *   --no-steps mark no steps: the spans alone
 *   --own-session FROM,TO  prof_start() before step FROM and prof_stop() after step TO (the
 *              program's own session, output=$CAPTURE_APP_OWN_OUTPUT); prints "own session: S"
 *              with prof_start()'s result
 *   --keep N   start the program's own flight recorder (keep=last:N) at once, beside listening
 *   --fork     fork once after listening: the child (which must not be listening) calls
 *              prof_listen() itself and runs the loop too
 * Prints "listening PID" (each process) once it listens, and "step N" lines are not printed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tfprof/tfprof.h>

static volatile sig_atomic_t g_stop = 0;
static pid_t child_pid = 0;

static void on_term(int sig) {
  (void)sig;
  g_stop = 1;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && !g_stop) {
  }
}

static int listen_now(void) {
  if (prof_listen("cuda=off") != PROF_OK) {
    fprintf(stderr, "capture_app: prof_listen: %s\n", prof_last_error());
    return 1;
  }
  printf("listening %d\n", (int)getpid());
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: capture_app STEPS STEP_MS [--no-steps] [--own-session FROM,TO] "
                    "[--keep N] [--fork]\n");
    return 2;
  }
  const long steps = atol(argv[1]);
  const long step_ms = atol(argv[2]);
  int mark_steps = 1, do_fork = 0;
  long own_from = -1, own_to = -1, keep = 0;
  for (int i = 3; i < argc; ++i) {
    if (strcmp(argv[i], "--no-steps") == 0) {
      mark_steps = 0;
    } else if (strcmp(argv[i], "--own-session") == 0 && i + 1 < argc) {
      sscanf(argv[++i], "%ld,%ld", &own_from, &own_to);
    } else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
      keep = atol(argv[++i]);
    } else if (strcmp(argv[i], "--fork") == 0) {
      do_fork = 1;
    }
  }
  signal(SIGTERM, on_term);
  if (listen_now() != 0) return 1;
  if (do_fork) {
    const pid_t child = fork();
    if (child < 0) return 1;
    child_pid = child;
    if (child == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM); /* ends with the parent, whatever ends it */
      if (getppid() == 1) return 0;
      /* The parent's listening is not inherited: the child listens on its own pid. */
      if (prof_is_listening() != 0) {
        fprintf(stderr, "capture_app: a fork child inherited listening\n");
        return 1;
      }
      if (listen_now() != 0) return 1;
      do_fork = 0;
    }
  }
  if (keep > 0) {
    char options[64];
    snprintf(options, sizeof options, "cuda=off,keep=last:%ld", keep);
    if (prof_start(options) != PROF_OK) {
      fprintf(stderr, "capture_app: prof_start: %s\n", prof_last_error());
      return 1;
    }
  }
  for (long step = 0; (steps == 0 || step < steps) && !g_stop; ++step) {
    if (step == own_from) {
      char options[4096];
      const char *output = getenv("CAPTURE_APP_OWN_OUTPUT");
      snprintf(options, sizeof options, "cuda=off,output=%s", output ? output : "own.json");
      const int status = prof_start(options);
      printf("own session: %d %s\n", status, status == PROF_OK ? "" : prof_last_error());
      fflush(stdout);
    }
    if (mark_steps) prof_begin_step(step);
    prof_span_begin("forward");
    sleep_ms(step_ms / 2);
    prof_span_end();
    prof_span_begin("backward");
    sleep_ms(step_ms - step_ms / 2 - 1);
    prof_span_begin("allreduce");
    sleep_ms(1);
    prof_span_end();
    prof_span_end();
    if (mark_steps) prof_end_step();
    if (step == own_to) {
      printf("own session stopped: %d\n", prof_stop());
      fflush(stdout);
    }
  }
  if (do_fork) {
    int status = 0;
    if (child_pid > 0) kill(child_pid, SIGTERM);
    while (wait(&status) > 0) {
    }
  }
  return 0;
}
