// TFRecord framing: byte layout, round trips, and damage reported with its offset while the
// records before it stay readable.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "runtime/common/crc32c.h"
#include "runtime/formats/tensorflow/tfrecord.h"

namespace tfprof {

namespace {

uint32_t Le32(const std::string &bytes, size_t at) {
  uint32_t value = 0;
  for (int index = 3; index >= 0; --index) {
    value = value << 8 | static_cast<unsigned char>(bytes[at + static_cast<size_t>(index)]);
  }
  return value;
}

std::vector<std::string> ReadAll(std::string_view data, absl::Status *end) {
  TfRecordReader reader(data);
  std::vector<std::string> records;
  std::string_view record;
  while ((*end = reader.Next(&record)).ok()) records.emplace_back(record);
  return records;
}

}  // namespace

TEST_CASE("tfrecord: a record is length, masked length CRC, data, masked data CRC") {
  std::string framed;
  AppendTfRecord("abc", &framed);
  REQUIRE(framed.size() == 12 + 3 + 4);
  CHECK(framed.substr(0, 8) == std::string("\x03\0\0\0\0\0\0\0", 8));
  CHECK(Le32(framed, 8) == MaskCrc32c(Crc32c(framed.substr(0, 8))));
  CHECK(framed.substr(12, 3) == "abc");
  CHECK(Le32(framed, 15) == MaskCrc32c(Crc32c("abc")));
}

TEST_CASE("tfrecord: records of any size read back in order, then a clean end") {
  const std::vector<std::string> payloads = {"", "x", std::string(1 << 20, 'z'), "last"};
  std::string data;
  for (const std::string &payload : payloads) AppendTfRecord(payload, &data);
  absl::Status end;
  CHECK(ReadAll(data, &end) == payloads);
  CHECK(absl::IsOutOfRange(end));
}

TEST_CASE("tfrecord: damage names the offset and the problem - earlier records survive") {
  std::string data;
  AppendTfRecord("first", &data);
  const size_t second_offset = data.size();
  AppendTfRecord("second", &data);
  const std::string second_at = "record at byte offset " + std::to_string(second_offset) + ": ";
  absl::Status end;

  SUBCASE("a flipped data byte") {
    std::string damaged = data;
    damaged[second_offset + 12] ^= 0x01;
    CHECK(ReadAll(damaged, &end) == std::vector<std::string>{"first"});
    CHECK(absl::IsDataLoss(end));
    CHECK(std::string(end.message()) == second_at + "data CRC mismatch over 6 bytes (corrupted)");
  }
  SUBCASE("a truncated file") {
    CHECK(ReadAll(std::string_view(data).substr(0, data.size() - 1), &end) ==
          std::vector<std::string>{"first"});
    CHECK(std::string(end.message()) ==
          second_at + "truncated: the record holds 6 bytes but only 5 follow its header");
  }
  SUBCASE("a truncated header") {
    CHECK(ReadAll(std::string_view(data).substr(0, second_offset + 5), &end).size() == 1);
    CHECK(std::string(end.message()) == second_at + "truncated header (5 of 12 bytes)");
  }
  SUBCASE("a corrupted length") {
    std::string damaged = data;
    damaged[second_offset] = 'X';
    CHECK(ReadAll(damaged, &end).size() == 1);
    CHECK(std::string(end.message()) ==
          second_at + "length CRC mismatch (not a TFRecord file, or corrupted)");
  }
}

TEST_CASE("tfrecord: a file that is not TFRecord fails at offset 0") {
  absl::Status end;
  CHECK(ReadAll("{\"traceEvents\": []}", &end).empty());
  CHECK(std::string(end.message()) ==
        "record at byte offset 0: length CRC mismatch (not a TFRecord file, or corrupted)");
}

TEST_CASE("tfrecord: a huge length with a valid CRC is reported, not allocated") {
  std::string data(8, '\xff');  // length 2^64-1
  const uint32_t masked = MaskCrc32c(Crc32c(data));
  for (int index = 0; index < 4; ++index) data.push_back(static_cast<char>(masked >> (8 * index)));
  absl::Status end;
  CHECK(ReadAll(data, &end).empty());
  CHECK(std::string(end.message()) == "record at byte offset 0: truncated: the record holds "
                                      "18446744073709551615 bytes but only 0 follow its header");
}

}  // namespace tfprof
