// How long reads and writes report how far they are, so that a front end (the `tfprof` command's
// terminal line) can show it. The library never prints progress itself.
#pragma once

#include <cstdint>
#include <string_view>

namespace tfprof {

class ProgressListener {
 public:
  virtual ~ProgressListener() = default;

  // "reading trace.json", bytes done so far, and the total (0 when unknown). Called often, up to
  // once per event read or written: implementations must be cheap.
  virtual void Update(std::string_view what, uint64_t done_bytes, uint64_t total_bytes) = 0;

  // The current piece of work is done.
  virtual void Finish() = 0;
};

}  // namespace tfprof
