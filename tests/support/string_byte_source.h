// A ByteSource over a string, handing out at most `chunk` bytes a read, as a slow pipe or a
// gzip stream would: the JSON scanner's tests walk values cut anywhere by the window with it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "runtime/common/byte_source.h"

namespace tfprof_test {

class StringSource final : public tfprof::ByteSource {
 public:
  explicit StringSource(std::string text, size_t chunk = SIZE_MAX)
      : text_(std::move(text)), chunk_(chunk) {}

  absl::StatusOr<size_t> Read(char *out, size_t capacity) override {
    const size_t size = std::min({capacity, chunk_, text_.size() - done_});
    std::memcpy(out, text_.data() + done_, size);
    done_ += size;
    return size;
  }
  uint64_t file_bytes_read() const override { return done_; }

 private:
  std::string text_;
  size_t chunk_;
  size_t done_ = 0;
};

}  // namespace tfprof_test
