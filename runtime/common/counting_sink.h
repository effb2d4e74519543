// Writes through an OutputSink, counting the bytes and reporting them as progress ("writing
// out.json: 12.3 MB"; the size before compression).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/common/output_sink.h"
#include "runtime/common/progress_listener.h"

namespace tfprof {

class CountingSink {
 public:
  // `progress` may be null.
  CountingSink(OutputSink &sink, ProgressListener *progress, std::string label)
      : sink_(sink), progress_(progress), label_(std::move(label)) {}

  void Write(std::string_view bytes) {
    sink_.Write(bytes);
    written_ += bytes.size();
    if (progress_ != nullptr) progress_->Update(label_, written_, 0);
  }

  // Shows progress for `pending` bytes assembled in memory but not yet written.
  void ShowPending(uint64_t pending) {
    if (progress_ != nullptr) progress_->Update(label_, written_ + pending, 0);
  }

  uint64_t written() const { return written_; }

 private:
  OutputSink &sink_;
  ProgressListener *progress_;
  std::string label_;
  uint64_t written_ = 0;
};

}  // namespace tfprof
