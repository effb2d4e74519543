// Progress of long work, shown on stderr only when stderr is a terminal: one line redrawn with
// '\r' at most ten times a second, erased when the work is done. Piped or redirected output
// never sees it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/common/progress_listener.h"

namespace tfprof::cli {

class Progress : public ProgressListener {
 public:
  // Shown only when `enabled` and stderr is a terminal. TFPROF_PROGRESS=1 forces it on (tests),
  // TFPROF_PROGRESS=0 off.
  explicit Progress(bool enabled = true);
  ~Progress() override;
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  bool shown() const { return shown_; }

  // "reading trace.json: 42% (1.1 of 2.6 GB)"; `total` 0 when unknown. Cheap to call per event:
  // it looks at the clock only every 4096 calls.
  void Update(std::string_view what, uint64_t done_bytes, uint64_t total_bytes) override;

  // Erases the line.
  void Finish() override;

 private:
  bool shown_ = false;
  bool line_drawn_ = false;
  uint32_t calls_ = 0;
  int64_t last_draw_ns_ = 0;
};

}  // namespace tfprof::cli
