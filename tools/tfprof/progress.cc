#include "tools/tfprof/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace tfprof::cli {
namespace {

int64_t NowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

std::string Size(uint64_t bytes) {
  char text[32];
  if (bytes >= (1ull << 30)) {
    std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / (1ull << 30));
  } else {
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / (1ull << 20));
  }
  return text;
}

}  // namespace

Progress::Progress(bool enabled) {
  const char *forced = std::getenv("TFPROF_PROGRESS");
  if (forced != nullptr && forced[0] != '\0') {
    shown_ = enabled && std::string_view(forced) != "0";
  } else {
    shown_ = enabled && isatty(STDERR_FILENO) == 1;
  }
}

Progress::~Progress() { Finish(); }

void Progress::Update(std::string_view what, uint64_t done_bytes, uint64_t total_bytes) {
  if (!shown_ || (calls_++ & 4095u) != 0) return;
  const int64_t now = NowNs();
  if (line_drawn_ && now - last_draw_ns_ < 100'000'000) return;
  last_draw_ns_ = now;
  line_drawn_ = true;
  if (total_bytes > 0) {
    const int percent = static_cast<int>(100.0 * static_cast<double>(done_bytes) /
                                         static_cast<double>(total_bytes));
    std::fprintf(stderr, "\r\033[K%.*s: %d%% (%s of %s)", static_cast<int>(what.size()),
                 what.data(), percent, Size(done_bytes).c_str(), Size(total_bytes).c_str());
  } else {
    std::fprintf(stderr, "\r\033[K%.*s: %s", static_cast<int>(what.size()), what.data(),
                 Size(done_bytes).c_str());
  }
  std::fflush(stderr);
}

void Progress::Finish() {
  if (!line_drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  line_drawn_ = false;
}

}  // namespace tfprof::cli
