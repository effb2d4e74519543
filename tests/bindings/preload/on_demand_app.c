/* A long-running program that knows nothing of tfprof, for `tfprof run --on-demand`: it marks
 * steps with NVTX ranges ("step N", each holding "forward" and "backward"), with an "idle" range
 * between steps, until STOP_FILE exists (or ten minutes pass). With "fork" it forks first and the
 * child runs the same loop (its ranges named "child forward" and "child backward").
 * tests/bindings/preload/test_preload.py captures it while it runs.
 *
 * Usage: on_demand_app STOP_FILE [fork]
 * Prints "ready PID" for each process once it is in its loop.
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_milliseconds(long milliseconds) {
  struct timespec pause = {milliseconds / 1000, (milliseconds % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

static double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void train(const char *stop_file, int child) {
  nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), child ? "child trainer" : "trainer");
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  const double give_up = seconds_now() + 600;
  for (int step = 0; access(stop_file, F_OK) != 0 && seconds_now() < give_up; ++step) {
    char name[32];
    snprintf(name, sizeof name, "step %d", step);
    nvtxRangePushA(name);
    nvtxRangePushA(child ? "child forward" : "forward");
    sleep_milliseconds(4);
    nvtxRangePop();
    nvtxRangePushA(child ? "child backward" : "backward");
    sleep_milliseconds(4);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePushA("idle");
    sleep_milliseconds(2);
    nvtxRangePop();
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: on_demand_app STOP_FILE [fork]\n");
    return 2;
  }
  const int forks = argc > 2 && strcmp(argv[2], "fork") == 0;
  const pid_t child = forks ? fork() : -1;
  if (child == 0) {
    train(argv[1], 1);
    return 0;
  }
  train(argv[1], 0);
  if (child > 0) {
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return 0;
}
