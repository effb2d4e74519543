#include "runtime/formats/read_threads.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace tfprof {

namespace {

constexpr unsigned kMaxDefaultThreads = 8;

}  // namespace

unsigned DefaultReadThreads() {
  if (const char *text = std::getenv("TFPROF_READ_THREADS"); text != nullptr && *text != '\0') {
    char *rest = nullptr;
    const unsigned long threads = std::strtoul(text, &rest, 10);
    if (*rest == '\0' && threads >= 1 && threads <= 64) return static_cast<unsigned>(threads);
  }
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxDefaultThreads);
}

}  // namespace tfprof
