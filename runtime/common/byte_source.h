// Where a streaming reader's bytes come from: an open file read as it is, or a gzip stream
// inflated on the way. The JSON scanner pulls from either the same way; the readers that walk a
// whole file in place use FileBytes (file_bytes.h) instead.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to `capacity` bytes into `out`; 0 only at the end of the data.
  virtual absl::StatusOr<size_t> Read(char *out, size_t capacity) = 0;
  // How much of the file has been consumed (compressed bytes for gzip).
  virtual uint64_t file_bytes_read() const = 0;
  // Whether the error Read() returned was the file ending inside compressed data (a writer
  // killed mid-write) rather than damage: the caller marks it as a cut file.
  virtual bool ended_inside_stream() const { return false; }
};

// The bytes of open file `fd` as they are. `path` names it in messages and must outlive this.
class PlainSource final : public ByteSource {
 public:
  PlainSource(int fd, const std::string &path) : fd_(fd), path_(path) {}

  absl::StatusOr<size_t> Read(char *out, size_t capacity) override;
  uint64_t file_bytes_read() const override { return done_; }

 private:
  int fd_;
  const std::string &path_;
  uint64_t done_ = 0;
};

// The inflated bytes of a gzip file, through zlib's streaming inflate; concatenated members (as
// `cat a.gz b.gz` makes) are read one after another. Errors are DataLoss "PATH: byte N: ...",
// N counting compressed bytes.
class GzipSource final : public ByteSource {
 public:
  GzipSource(int fd, const std::string &path);
  ~GzipSource() override;
  GzipSource(const GzipSource &) = delete;
  GzipSource &operator=(const GzipSource &) = delete;

  absl::StatusOr<size_t> Read(char *out, size_t capacity) override;
  uint64_t file_bytes_read() const override { return file_.file_bytes_read() - stream_.avail_in; }
  bool ended_inside_stream() const override { return ended_inside_stream_; }

 private:
  absl::Status Damage(std::string_view problem) const;

  PlainSource file_;
  const std::string &path_;
  std::vector<char> input_;
  z_stream stream_{};
  bool initialized_ = false;
  bool input_ended_ = false;
  bool member_ended_ = false;
  bool ended_inside_stream_ = false;
};

}  // namespace tfprof
