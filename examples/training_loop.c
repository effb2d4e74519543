/* A small "training loop" profiled with tfprof.
 *
 * An input-pipeline thread decodes and augments batches and hands them to the compute thread
 * through a bounded queue; the compute thread runs a forward pass, a backward pass and an
 * optimizer update per step. Spans are named like the ops in a TensorFlow timeline, so the trace
 * shows where each step's time goes (and whether the compute thread waits on input).
 *
 * Usage: training_loop [--slow-input] [OUTPUT_PATH [STEPS]]   (default: training_loop.json, 20 steps)
 *   --slow-input  read each batch from slow storage (ReadRecord blocks 5 ms, as a read from network storage
 *                 does), so the input pipeline is slower than a step and the compute thread waits for
 *                 input: `tfprof summary` calls it input-bound. A blocking read, not more arithmetic, so
 *                 the wait does not depend on how fast or how busy the CPU is
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfprof/tfprof.h>

enum { kQueueCapacity = 4, kBatchFloats = 1 << 16 };

typedef struct {
  float values[kBatchFloats];
  long index;
} Batch;

typedef struct {
  Batch *slots[kQueueCapacity];
  int head, count;
  int closed;
  pthread_mutex_t mutex;
  pthread_cond_t changed;
} BatchQueue;

static BatchQueue g_queue = {.mutex = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};
static long g_steps = 20;
static long g_read_delay_ns = 0; /* --slow-input: 5 ms per batch */

/* Burns CPU on real arithmetic so spans have honest, nonzero durations. */
static float Work(float *values, int n, int rounds) {
  float sum = 0.0f;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < n; ++i) {
      values[i] = values[i] * 0.999f + 0.001f * (float)round;
      sum += values[i];
    }
  }
  return sum;
}

static void QueuePush(Batch *batch) {
  pthread_mutex_lock(&g_queue.mutex);
  while (g_queue.count == kQueueCapacity) pthread_cond_wait(&g_queue.changed, &g_queue.mutex);
  g_queue.slots[(g_queue.head + g_queue.count) % kQueueCapacity] = batch;
  g_queue.count++;
  prof_counter("input_queue_depth", (double)g_queue.count);
  pthread_cond_broadcast(&g_queue.changed);
  pthread_mutex_unlock(&g_queue.mutex);
}

static Batch *QueuePop(void) {
  pthread_mutex_lock(&g_queue.mutex);
  while (g_queue.count == 0 && !g_queue.closed) pthread_cond_wait(&g_queue.changed, &g_queue.mutex);
  Batch *batch = NULL;
  if (g_queue.count > 0) {
    batch = g_queue.slots[g_queue.head];
    g_queue.head = (g_queue.head + 1) % kQueueCapacity;
    g_queue.count--;
    prof_counter("input_queue_depth", (double)g_queue.count);
    pthread_cond_broadcast(&g_queue.changed);
  }
  pthread_mutex_unlock(&g_queue.mutex);
  return batch;
}

static void *InputPipeline(void *unused) {
  (void)unused;
  prof_set_thread_name("input_pipeline");
  for (long index = 0; index < g_steps; ++index) {
    Batch *batch = malloc(sizeof *batch);
    if (batch == NULL) break;
    batch->index = index;
    prof_span_begin("IteratorGetNext");
    if (g_read_delay_ns > 0) {
      prof_span_begin("ReadRecord");
      const struct timespec delay = {.tv_sec = 0, .tv_nsec = g_read_delay_ns};
      nanosleep(&delay, NULL);
      prof_span_end();
    }
    prof_span_begin("DecodeJpeg");
    for (int i = 0; i < kBatchFloats; ++i) batch->values[i] = (float)((index * 31 + i) % 255) / 255.0f;
    Work(batch->values, kBatchFloats, 1);
    prof_span_end();
    prof_span_begin("RandomCrop");
    Work(batch->values, kBatchFloats, 1);
    prof_span_end();
    prof_span_begin("AdjustBrightness");
    Work(batch->values, kBatchFloats, 1);
    prof_span_end();
    prof_span_end();
    QueuePush(batch);
  }
  pthread_mutex_lock(&g_queue.mutex);
  g_queue.closed = 1;
  pthread_cond_broadcast(&g_queue.changed);
  pthread_mutex_unlock(&g_queue.mutex);
  return NULL;
}

static void TrainStep(Batch *batch) {
  static float weights[kBatchFloats];
  prof_span_begin("forward");
  prof_span_begin("MatMul");
  Work(batch->values, kBatchFloats, 16);
  prof_span_end();
  prof_span_begin("Relu");
  Work(batch->values, kBatchFloats, 4);
  prof_span_end();
  prof_span_begin("SoftmaxCrossEntropyWithLogits");
  Work(batch->values, kBatchFloats, 8);
  prof_span_end();
  prof_span_end();
  prof_span_begin("backward");
  prof_span_begin("MatMul_grad");
  Work(batch->values, kBatchFloats, 24);
  prof_span_end();
  prof_span_end();
  prof_span_begin("ApplyAdam");
  memcpy(weights, batch->values, sizeof weights);
  Work(weights, kBatchFloats, 8);
  prof_span_end();
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--slow-input") == 0) {
    g_read_delay_ns = 5000000;
    argv[1] = argv[0];  /* the positional arguments follow */
    --argc;
    ++argv;
  }
  const char *output = argc > 1 ? argv[1] : "training_loop.json";
  if (argc > 2) g_steps = strtol(argv[2], NULL, 10);
  if (g_steps <= 0) {
    fprintf(stderr, "training_loop: STEPS must be a positive integer\n");
    return 2;
  }

  int rc = prof_start(NULL);
  if (rc != PROF_OK) {
    fprintf(stderr, "training_loop: prof_start: %s (%s)\n", prof_strerror(rc), prof_last_error());
    return 1;
  }
  prof_set_thread_name("compute");

  pthread_t input_thread;
  pthread_create(&input_thread, NULL, InputPipeline, NULL);
  for (long step = 0; step < g_steps; ++step) {
    prof_begin_step(step);
    prof_span_begin("WaitForInput");
    Batch *batch = QueuePop();
    prof_span_end();
    if (batch == NULL) {
      prof_end_step();
      break;
    }
    TrainStep(batch);
    free(batch);
    prof_end_step();
  }
  pthread_join(input_thread, NULL);

  rc = prof_stop();
  if (rc == PROF_OK) rc = prof_export(output);
  if (rc != PROF_OK) {
    fprintf(stderr, "training_loop: %s (%s)\n", prof_strerror(rc), prof_last_error());
    return 1;
  }
  prof_stats_t stats = {.struct_size = sizeof stats};
  prof_get_stats(&stats);
  printf("training_loop: %ld steps, %llu events recorded, %llu dropped, %llu threads -> %s\n",
         g_steps, (unsigned long long)stats.events_recorded,
         (unsigned long long)stats.events_dropped, (unsigned long long)stats.threads, output);
  return 0;
}
