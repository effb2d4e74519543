// The preload library's messages: one line each on stderr, prefixed "tfprof: ", filtered by
// TFPROF_LOG_LEVEL.
#pragma once

#include <atomic>

#include "bindings/preload/preload_config.h"

namespace tfprof::preload {

extern std::atomic<int> g_log_level;

inline bool Logs(LogLevel level) {
  return static_cast<int>(level) <= g_log_level.load(std::memory_order_relaxed);
}

// printf-style; writes nothing when `level` is above TFPROF_LOG_LEVEL.
__attribute__((format(printf, 2, 3))) void Log(LogLevel level, const char *format, ...);

}  // namespace tfprof::preload
