/* What the hot-path benchmarks (bench_overhead.c, bench_hot_paths.c) share: the raw timestamp the
 * runtime reads (the floor of a recorded span is two of them), the clock option that makes the
 * runtime read the same one, a monotonic clock for timing loops, and the unrolling macro. */
#ifndef TFPROF_BENCH_TIMING_H_
#define TFPROF_BENCH_TIMING_H_

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t MonotonicNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TIMESTAMP() __rdtsc()
#define CLOCK_OPTION "clock=tsc"
#else
#define TIMESTAMP() MonotonicNs()
#define CLOCK_OPTION "clock=monotonic"
#endif

/* For timing loops: exact below 2^53 ns (104 days of uptime). */
static inline double NowNs(void) { return (double)MonotonicNs(); }

/* Loops are unrolled eight times so that the loop's own increment and branch, which no real call
 * site pays per span, weigh the same (and little) in every figure. */
#define REPEAT8(x) x x x x x x x x

#endif /* TFPROF_BENCH_TIMING_H_ */
