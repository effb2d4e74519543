#include "runtime/common/byte_source.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

absl::StatusOr<size_t> PlainSource::Read(char *out, size_t capacity) {
  while (true) {
    const ssize_t got = read(fd_, out, capacity);
    if (got >= 0) {
      done_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
    if (errno == EINTR) continue;
    return absl::UnavailableError(
        absl::StrCat(path_, ": cannot read at byte ", done_, ": ", std::strerror(errno)));
  }
}

GzipSource::GzipSource(int fd, const std::string &path)
    : file_(fd, path), path_(path), input_(1 << 20) {
  initialized_ = inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK;
}

GzipSource::~GzipSource() {
  if (initialized_) inflateEnd(&stream_);
}

absl::StatusOr<size_t> GzipSource::Read(char *out, size_t capacity) {
  if (!initialized_) return absl::UnavailableError(absl::StrCat(path_, ": cannot start zlib"));
  const auto wanted = static_cast<uInt>(std::min<size_t>(capacity, 1u << 30));
  stream_.next_out = reinterpret_cast<Bytef *>(out);
  stream_.avail_out = wanted;
  while (stream_.avail_out == wanted) {
    if (stream_.avail_in == 0 && !input_ended_) {
      absl::StatusOr<size_t> got = file_.Read(input_.data(), input_.size());
      if (!got.ok()) return got.status();
      if (*got == 0) input_ended_ = true;
      stream_.next_in = reinterpret_cast<Bytef *>(input_.data());
      stream_.avail_in = static_cast<uInt>(*got);
    }
    if (member_ended_) {
      if (stream_.avail_in == 0) {
        if (input_ended_) return 0;
        continue;
      }
      if (stream_.next_in[0] != 0x1f) return Damage("data after the end of the gzip stream");
      inflateReset(&stream_);
      member_ended_ = false;
    }
    if (stream_.avail_in == 0 && input_ended_) {
      ended_inside_stream_ = true;
      return Damage("the gzip stream is truncated (the file ends inside the compressed data)");
    }
    const int result = inflate(&stream_, Z_NO_FLUSH);
    if (result == Z_STREAM_END) {
      member_ended_ = true;
    } else if (result != Z_OK && !(result == Z_BUF_ERROR && stream_.avail_in == 0)) {
      return Damage(absl::StrCat("corrupt gzip data (",
                                 stream_.msg != nullptr ? stream_.msg : "zlib error", ")"));
    }
  }
  return static_cast<size_t>(wanted - stream_.avail_out);
}

absl::Status GzipSource::Damage(std::string_view problem) const {
  return absl::DataLossError(
      absl::StrCat(path_, ": byte ", file_bytes_read(), ": ", ToAbsl(problem)));
}

}  // namespace tfprof
