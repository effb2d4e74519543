/* A program that knows nothing of tfprof: NVTX ranges, steps, marks, a domain with a registered
 * string and a named category, named threads, a range that ends on another thread, and then an
 * ending chosen on the command line. tests/bindings/preload/test_preload.py runs it under the
 * preload library and checks the trace against what this program did.
 *
 * Usage: nvtx_app [return|exit|sigterm|sigint|abort|fork|fork-exec PROGRAM] [STEPS]
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void spin_for_microseconds(long microseconds) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 <
           microseconds);
}

static nvtxRangeId_t g_cross_thread_range;

static void *loader_thread(void *unused) {
  (void)unused;
  nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "loader");
  for (int batch = 0; batch < 3; ++batch) {
    nvtxRangePushA("load_batch");
    spin_for_microseconds(200);
    nvtxRangePop();
  }
  nvtxRangeEnd(g_cross_thread_range); /* started by the main thread */
  return NULL;
}

int main(int argc, char **argv) {
  const char *ending = argc > 1 ? argv[1] : "return";
  const int steps = argc > 2 ? atoi(argv[2]) : 3;

  nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "trainer");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("MyLib");
  nvtxStringHandle_t allreduce = nvtxDomainRegisterStringA(domain, "allreduce");
  /* Registered in the default domain and pushed without a category: the preload's fast case. */
  nvtxEventAttributes_t optimizer;
  memset(&optimizer, 0, sizeof optimizer);
  optimizer.version = NVTX_VERSION;
  optimizer.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  optimizer.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  optimizer.message.registered = nvtxDomainRegisterStringA(NULL, "optimizer");
  nvtxDomainNameCategoryA(domain, 7, "comm");
  nvtxMarkA("setup done");

  g_cross_thread_range = nvtxRangeStartA("data epoch");
  pthread_t loader;
  pthread_create(&loader, NULL, loader_thread, NULL);
  pthread_join(loader, NULL);

  for (int step = 0; step < steps; ++step) {
    char name[32];
    snprintf(name, sizeof name, "step %d", step);
    nvtxRangePushA(name);
    nvtxRangePushA("forward");
    spin_for_microseconds(300);
    nvtxRangePop();
    nvtxRangePushA("backward");
    spin_for_microseconds(300);
    nvtxEventAttributes_t attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = allreduce;
    attributes.category = 7;
    nvtxDomainRangePushEx(domain, &attributes);
    spin_for_microseconds(100);
    nvtxDomainRangePop(domain);
    nvtxRangePop();
    nvtxDomainRangePushEx(NULL, &optimizer);
    nvtxDomainRangePop(NULL);
    nvtxRangePop();
  }

  fflush(stdout);
  if (strcmp(ending, "exit") == 0) exit(0);
  if (strcmp(ending, "sigterm") == 0) raise(SIGTERM);
  if (strcmp(ending, "sigint") == 0) raise(SIGINT);
  if (strcmp(ending, "abort") == 0) abort();
  if (strcmp(ending, "fork") == 0 || strcmp(ending, "fork-exec") == 0) {
    const pid_t child = fork();
    if (child == 0) {
      if (strcmp(ending, "fork-exec") == 0 && argc > 3) {
        execv(argv[3], argv + 3);
        _exit(127);
      }
      nvtxRangePushA("child work");
      spin_for_microseconds(200);
      nvtxRangePop();
      printf("child %d\n", (int)getpid());
      exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("parent %d child %d status %d\n", (int)getpid(), (int)child, status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return 0;
}
