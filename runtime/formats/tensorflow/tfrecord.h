// TFRecord framing, the container of .tfrecord files and TensorBoard event files:
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes | data | uint32 masked
//   CRC-32C of data
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tfprof {

inline constexpr size_t kTfRecordHeaderBytes = 12;  // length + its CRC
inline constexpr size_t kTfRecordFooterBytes = 4;   // the data's CRC

// Appends `payload`, framed, to `out`.
void AppendTfRecord(std::string_view payload, std::string *out);

// Whether `head` (a file's first bytes) begins with a TFRecord header whose length CRC matches:
// a false match has odds of 1 in 2^32, where a record length's first byte alone may look like
// '{' or whitespace.
bool StartsWithTfRecordHeader(std::string_view head);

// Reads the records of a TFRecord byte buffer in order. On damage (truncation, a CRC mismatch,
// a length beyond the end) Next() fails with a status naming the byte offset and the problem;
// every record before the damage has been returned, so callers can salvage them. Truncation (the
// data ends inside a record) is marked as the file ending early (runtime/formats/cut_file.h).
class TfRecordReader {
 public:
  explicit TfRecordReader(std::string_view data) : data_(data) {}

  // Sets `*record` (a view into the buffer) and returns OK; returns OutOfRange at the clean end
  // of the buffer, DataLoss for damage.
  absl::Status Next(std::string_view *record);

  // Where the next record starts (the damaged one's offset after a failure).
  size_t offset() const { return offset_; }

 private:
  std::string_view data_;
  size_t offset_ = 0;
};

}  // namespace tfprof
