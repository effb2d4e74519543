/* A separate C program built against the installed tfprof: records a few spans and exports them.
 * Usage: consumer OUTPUT.json */
#include <stdio.h>

#include <tfprof/tfprof.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer OUTPUT.json\n");
    return 2;
  }
  if (prof_start(NULL) != PROF_OK) return 1;
  prof_begin_step(1);
  prof_span_begin("consumer_op");
  prof_span_end();
  prof_end_step();
  if (prof_stop() != PROF_OK) return 1;
  const int rc = prof_export(argv[1]);
  if (rc != PROF_OK) {
    fprintf(stderr, "consumer: %s: %s\n", prof_strerror(rc), prof_last_error());
    return 1;
  }
  printf("consumer linked against tfprof %s wrote %s\n", prof_version_string(), argv[1]);
  return 0;
}
