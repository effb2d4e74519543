// Time arithmetic on values read from files: a hostile or damaged file may hold any int64, and
// an overflow must clamp, never wrap (or be undefined behaviour).
#pragma once

#include <cstdint>

namespace tfprof {

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

inline int64_t SaturatingMicrosToNanos(int64_t micros) {
  int64_t nanos = 0;
  if (__builtin_mul_overflow(micros, int64_t{1000}, &nanos)) {
    return micros > 0 ? INT64_MAX : INT64_MIN;
  }
  return nanos;
}

}  // namespace tfprof
