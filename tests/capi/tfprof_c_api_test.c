/* The C ABI exercised from C, as a C program would use it: lifecycle, hot-path calls from several
 * threads, statistics, export, and the error paths. Checks the exported file's text for the
 * records it must hold (the C++ integration tests parse it fully).
 *
 * Usage: tfprof_c_api_test OUTPUT_DIR */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tfprof/tfprof.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(condition)                                                        \
  do {                                                                          \
    ++g_checks;                                                                 \
    if (!(condition)) {                                                         \
      ++g_failures;                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, \
              __LINE__, #condition, prof_last_error());                         \
    }                                                                           \
  } while (0)

static char *ReadWholeFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) return NULL;
  fseek(file, 0, SEEK_END);
  const long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  if (text != NULL && fread(text, 1, (size_t)size, file) == (size_t)size) {
    text[size] = '\0';
  } else {
    free(text);
    text = NULL;
  }
  fclose(file);
  return text;
}

static size_t CountOccurrences(const char *text, const char *needle) {
  size_t count = 0;
  for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + 1, needle)) ++count;
  return count;
}

enum { kWorkers = 4, kSpansPerWorker = 1000 };

static void *Worker(void *argument) {
  const int index = *(const int *)argument;
  char name[32];
  snprintf(name, sizeof name, "c_worker_%d", index);
  prof_set_thread_name(name);
  for (int span = 0; span < kSpansPerWorker; ++span) {
    prof_span_begin("c_op");
    prof_span_end();
  }
  return NULL;
}

static void TestErrorsWithoutSession(const char *directory) {
  char path[4096];
  snprintf(path, sizeof path, "%s/none.json", directory);
  CHECK(prof_is_running() == 0);
  CHECK(prof_stop() == PROF_ENOTSTARTED);
  CHECK(prof_export(path) == PROF_ENODATA);
  prof_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  CHECK(prof_get_stats(&stats) == PROF_ENODATA);
  prof_span_end(); /* no session: nothing happens */
  CHECK(prof_start("no_such_option=1") == PROF_EOPTION);
  CHECK(strstr(prof_last_error(), "no_such_option") != NULL);
  CHECK(strcmp(prof_strerror(PROF_EOPTION), "invalid option string") == 0);
  CHECK(prof_version() == TFPROF_VERSION_NUMBER);
}

static void TestSessionFromThreads(const char *directory) {
  char path[4096];
  snprintf(path, sizeof path, "%s/c_api.json", directory);
  CHECK(prof_start("buffer_events=4096,flush_interval_ms=1") == PROF_OK);
  CHECK(prof_is_running() == 1);
  CHECK(prof_start(NULL) == PROF_EALREADY);
  prof_set_thread_name("c_main");
  prof_begin_step(7);
  prof_span_begin("c_outer");
  pthread_t threads[kWorkers];
  int indices[kWorkers];
  for (int index = 0; index < kWorkers; ++index) {
    indices[index] = index;
    pthread_create(&threads[index], NULL, Worker, &indices[index]);
  }
  for (int index = 0; index < kWorkers; ++index) pthread_join(threads[index], NULL);
  prof_instant("c_instant");
  prof_counter("c_counter", 2.5);
  prof_span_end();
  prof_end_step();
  prof_span_end(); /* unmatched: counted, ignored */
  CHECK(prof_stop() == PROF_OK);

  prof_stats_t stats;
  memset(&stats, 0xff, sizeof stats);
  stats.struct_size = sizeof stats;
  CHECK(prof_get_stats(&stats) == PROF_OK);
  CHECK(stats.running == 0);
  CHECK(stats.events_recorded == (uint64_t)kWorkers * kSpansPerWorker * 2 + 2 + 2 + 2);
  CHECK(stats.events_dropped == 0);
  CHECK(stats.threads == kWorkers + 1);
  CHECK(stats.unmatched_span_ends == 1);
  CHECK(stats.unmatched_step_ends == 0);

  CHECK(prof_export("/nonexistent_dir_for_tfprof/c.json") == PROF_EIO);
  CHECK(prof_export("trace.unknown") == PROF_EFORMAT);
  CHECK(prof_export(path) == PROF_OK);
  char *text = ReadWholeFile(path);
  CHECK(text != NULL);
  if (text == NULL) return;
  CHECK(strncmp(text, "{", 1) == 0);
  CHECK(CountOccurrences(text, "\"name\":\"c_op\"") == (size_t)kWorkers * kSpansPerWorker);
  CHECK(CountOccurrences(text, "\"name\":\"c_outer\"") == 1);
  CHECK(CountOccurrences(text, "\"name\":\"step 7\"") == 1);
  CHECK(CountOccurrences(text, "\"name\":\"c_instant\"") == 1);
  CHECK(CountOccurrences(text, "\"name\":\"c_counter\"") == 1);
  CHECK(CountOccurrences(text, "\"args\":{\"name\":\"c_main\"}") == 1);
  CHECK(CountOccurrences(text, "\"args\":{\"name\":\"c_worker_") == kWorkers);
  CHECK(strstr(text, "\"dropped_events\":0") != NULL);
  free(text);
}

int main(int argc, char **argv) {
  const char *directory = argc > 1 ? argv[1] : ".";
  mkdir(directory, 0755);
  TestErrorsWithoutSession(directory);
  TestSessionFromThreads(directory);
  printf("%d passed, %d failed\n", g_checks - g_failures, g_failures);
  return g_failures == 0 ? 0 : 1;
}
