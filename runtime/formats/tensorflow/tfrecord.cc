#include "runtime/formats/tensorflow/tfrecord.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/common/crc32c.h"
#include "runtime/formats/cut_file.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

void AppendLittleEndian(uint64_t value, int bytes, std::string *out) {
  for (int index = 0; index < bytes; ++index) out->push_back(static_cast<char>(value >> (8 * index)));
}

uint64_t ReadLittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t index = bytes.size(); index-- > 0;) {
    value = value << 8 | static_cast<unsigned char>(bytes[index]);
  }
  return value;
}

}  // namespace

void AppendTfRecord(std::string_view payload, std::string *out) {
  const size_t header_start = out->size();
  AppendLittleEndian(payload.size(), 8, out);
  const uint32_t length_crc = Crc32c(std::string_view(*out).substr(header_start, 8));
  AppendLittleEndian(MaskCrc32c(length_crc), 4, out);
  out->append(payload);
  AppendLittleEndian(MaskCrc32c(Crc32c(payload)), 4, out);
}

bool StartsWithTfRecordHeader(std::string_view head) {
  if (head.size() < kTfRecordHeaderBytes) return false;
  uint32_t stored = 0;
  for (int byte = 3; byte >= 0; --byte) {
    stored = (stored << 8) | static_cast<unsigned char>(head[8 + static_cast<size_t>(byte)]);
  }
  return UnmaskCrc32c(stored) == Crc32c(head.substr(0, 8));
}

absl::Status TfRecordReader::Next(std::string_view *record) {
  const size_t left = data_.size() - offset_;
  if (left == 0) return absl::OutOfRangeError("end of records");
  const auto damaged = [&](const std::string &problem) {
    return absl::DataLossError(absl::StrCat("record at byte offset ", offset_, ": ", ToAbsl(problem)));
  };
  // The data ends inside the last record: the file ends early (runtime/formats/cut_file.h). Each
  // record is whole or lost, so no record read is partial.
  const auto cut = [&](const std::string &problem) {
    CutFacts facts;
    facts.file_bytes = data_.size();
    facts.problem = "inside the last record";
    facts.steps_may_be_partial = false;
    return MarkFileEndsEarly(damaged(problem), facts);
  };
  if (left < kTfRecordHeaderBytes) {
    return cut(absl::StrCat("truncated header (", left, " of ", kTfRecordHeaderBytes, " bytes)"));
  }
  const std::string_view length_bytes = data_.substr(offset_, 8);
  const uint32_t stored_length_crc =
      static_cast<uint32_t>(ReadLittleEndian(data_.substr(offset_ + 8, 4)));
  if (UnmaskCrc32c(stored_length_crc) != Crc32c(length_bytes)) {
    return damaged(std::string("length CRC mismatch (not a TFRecord file, or corrupted)"));
  }
  const uint64_t length = ReadLittleEndian(length_bytes);
  const size_t body_left = left - kTfRecordHeaderBytes;
  if (body_left < kTfRecordFooterBytes || length > body_left - kTfRecordFooterBytes) {
    return cut(absl::StrCat("truncated: the record holds ", length, " bytes but only ",
                                body_left < kTfRecordFooterBytes ? 0 : body_left - kTfRecordFooterBytes,
                                " follow its header"));
  }
  const std::string_view payload = data_.substr(offset_ + kTfRecordHeaderBytes, length);
  const uint32_t stored_data_crc = static_cast<uint32_t>(
      ReadLittleEndian(data_.substr(offset_ + kTfRecordHeaderBytes + length, 4)));
  if (UnmaskCrc32c(stored_data_crc) != Crc32c(payload)) {
    return damaged(absl::StrCat("data CRC mismatch over ", length, " bytes (corrupted)"));
  }
  *record = payload;
  offset_ += kTfRecordHeaderBytes + length + kTfRecordFooterBytes;
  return absl::OkStatus();
}

}  // namespace tfprof
