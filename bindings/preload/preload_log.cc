#include "bindings/preload/preload_log.h"

#include <cstdarg>
#include <cstdio>

namespace tfprof::preload {

std::atomic<int> g_log_level{static_cast<int>(LogLevel::kInfo)};

void Log(LogLevel level, const char *format, ...) {
  if (!Logs(level)) return;
  char line[1024];
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(line, sizeof line, format, arguments);
  va_end(arguments);
  // One write, so lines of processes sharing stderr do not interleave.
  std::fprintf(stderr, "tfprof: %s%s\n", level == LogLevel::kError     ? "error: "
                                         : level == LogLevel::kWarning ? "warning: "
                                                                       : "",
               line);
}

}  // namespace tfprof::preload
