// OutputSink: buffered, streamed output to an unnamed file given its name on success.
#include "runtime/common/output_sink.h"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "runtime/common/string_view_bridge.h"
#include "support/test_files.h"

namespace {

using tfprof_test::Gunzip;
using tfprof_test::ReadFile;
using tfprof_test::TempDir;

namespace fs = std::filesystem;
using tfprof::OutputSink;

std::unique_ptr<OutputSink> OpenSink(const std::string &path, bool gzip) {
  absl::StatusOr<std::unique_ptr<OutputSink>> sink = OutputSink::Open(path, gzip);
  INFO("open failed: ", std::string(tfprof::ToStd(sink.status().message())));
  REQUIRE(sink.ok());
  return std::move(*sink);
}

std::string StatusText(const absl::Status &status) {
  return std::string(tfprof::ToStd(status.message()));
}

// Bytes that vary at every position (and compress poorly), including NULs and high bytes.
std::string Pattern(size_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t state = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    state = state * 1664525u + 1013904223u;
    bytes[i] = static_cast<char>(state >> 24);
  }
  return bytes;
}

}  // namespace

TEST_CASE("output_sink: writes exact bytes and leaves only the final file") {
  TempDir dir;
  const std::string path = dir.File("trace.json");
  auto sink = OpenSink(path, false);
  // Before Finish the file has no name at all (O_TMPFILE): a process killed now leaves nothing.
  CHECK_FALSE(fs::exists(path));
  CHECK(dir.Entries().empty());
  sink->Write("{\"a\":");
  sink->Write("");
  sink->Write(std::string_view("1\0}", 3));
  const absl::Status status = sink->Finish();
  CHECK(status.ok());
  CHECK(ReadFile(path) == std::string("{\"a\":1\0}", 8));
  CHECK(dir.Entries() == std::set<std::string>{"trace.json"});
  sink.reset();
  CHECK(ReadFile(path) == std::string("{\"a\":1\0}", 8));  // destroying after Finish keeps it
}

TEST_CASE("output_sink: an empty output is an empty file") {
  TempDir dir;
  const std::string path = dir.File("empty.json");
  auto sink = OpenSink(path, false);
  CHECK(sink->Finish().ok());
  CHECK(fs::exists(path));
  CHECK(fs::file_size(path) == 0);
  CHECK(dir.Entries() == std::set<std::string>{"empty.json"});
}

TEST_CASE("output_sink: Reserve and Commit write in place") {
  TempDir dir;
  const std::string path = dir.File("reserve.json");
  auto sink = OpenSink(path, false);
  sink->Write("head:");
  char *room = sink->Reserve(16);
  std::memcpy(room, "0123456789abcdef", 16);
  sink->Commit(10);  // only the first 10 bytes count
  sink->Write(":tail");
  REQUIRE(sink->Finish().ok());
  CHECK(ReadFile(path) == "head:0123456789:tail");
}

TEST_CASE("output_sink: Reserve flushes a nearly full buffer first") {
  TempDir dir;
  const std::string path = dir.File("reserve_full.bin");
  auto sink = OpenSink(path, false);
  const std::string fill = Pattern(OutputSink::kBufferBytes - 10, 1);
  sink->Write(fill);
  char *room = sink->Reserve(100);
  std::memset(room, 'R', 100);
  sink->Commit(100);
  sink->Write("end");
  REQUIRE(sink->Finish().ok());
  CHECK(ReadFile(path) == fill + std::string(100, 'R') + "end");
}

TEST_CASE("output_sink: writes larger than the buffer round-trip exactly") {
  TempDir dir;
  const std::string path = dir.File("large.bin");
  auto sink = OpenSink(path, false);
  const std::string small = Pattern(1000, 2);
  const std::string exactly_buffer = Pattern(OutputSink::kBufferBytes, 3);
  const std::string huge = Pattern(3 * OutputSink::kBufferBytes + 12345, 4);
  std::string expected;
  sink->Write(small);
  expected += small;
  sink->Write(huge);  // more than the buffer holds: flushes, then goes straight to the file
  expected += huge;
  sink->Write(small);
  expected += small;
  sink->Write(exactly_buffer);  // does not fit behind the small piece
  expected += exactly_buffer;
  // Many small writes that cross the buffer boundary several times.
  for (uint32_t i = 0; i < 5000; ++i) {
    const std::string piece = Pattern(997, i);
    sink->Write(piece);
    expected += piece;
  }
  REQUIRE(sink->Finish().ok());
  const std::string written = ReadFile(path);
  CHECK(written.size() == expected.size());
  CHECK(written == expected);
  CHECK(dir.Entries() == std::set<std::string>{"large.bin"});
}

TEST_CASE("output_sink: gzip output decompresses to the exact bytes") {
  TempDir dir;
  const std::string path = dir.File("trace.json.gz");
  auto sink = OpenSink(path, true);
  std::string expected;
  // Compressible text and incompressible bytes, in total several buffers and compressor blocks.
  for (int i = 0; i < 20000; ++i) {
    const std::string line = "{\"name\":\"op_" + std::to_string(i) + "\",\"ts\":" +
                             std::to_string(i * 1000) + ".000},\n";
    sink->Write(line);
    expected += line;
  }
  const std::string noise = Pattern(2 * OutputSink::kBufferBytes + 7, 5);
  sink->Write(noise);
  expected += noise;
  sink->Write("]}\n");
  expected += "]}\n";
  REQUIRE(sink->Finish().ok());
  CHECK(dir.Entries() == std::set<std::string>{"trace.json.gz"});

  // A gzip member: magic bytes 1f 8b, deflate method.
  const std::string raw = ReadFile(path);
  REQUIRE(raw.size() > 18);
  CHECK(static_cast<unsigned char>(raw[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(raw[1]) == 0x8b);
  CHECK(static_cast<unsigned char>(raw[2]) == 8);
  CHECK(raw.size() < expected.size());
  const std::string decompressed = Gunzip(path);
  CHECK(decompressed.size() == expected.size());
  CHECK(decompressed == expected);
}

TEST_CASE("output_sink: an empty gzip output is a valid gzip file of nothing") {
  TempDir dir;
  const std::string path = dir.File("empty.json.gz");
  auto sink = OpenSink(path, true);
  REQUIRE(sink->Finish().ok());
  CHECK(fs::file_size(path) > 0);  // header and trailer
  CHECK(Gunzip(path).empty());
}

TEST_CASE("output_sink: opening in a missing directory fails naming the path") {
  TempDir dir;
  const std::string path = dir.File("no/such/dir/trace.json");
  absl::StatusOr<std::unique_ptr<OutputSink>> sink = OutputSink::Open(path, false);
  REQUIRE_FALSE(sink.ok());
  const std::string message = StatusText(sink.status());
  CHECK(message.find("'" + path + "'") != std::string::npos);
  CHECK(message.find("No such file or directory") != std::string::npos);
  CHECK(dir.Entries().empty());

  absl::StatusOr<std::unique_ptr<OutputSink>> gz = OutputSink::Open(path + ".gz", true);
  REQUIRE_FALSE(gz.ok());
  CHECK(StatusText(gz.status()).find("'" + path + ".gz'") != std::string::npos);
  CHECK(dir.Entries().empty());
}

TEST_CASE("output_sink: a failed rename removes the temporary file and names the path") {
  TempDir dir;
  // The final path is an existing non-empty directory: rename() over it fails.
  const std::string path = dir.File("occupied");
  fs::create_directory(path);
  { std::ofstream(dir.File("occupied/keep")) << "x"; }
  auto sink = OpenSink(path, false);
  sink->Write("data");
  const absl::Status status = sink->Finish();
  REQUIRE_FALSE(status.ok());
  CHECK(StatusText(status).find("'" + path + "'") != std::string::npos);
  CHECK(dir.Entries() == std::set<std::string>{"occupied"});  // no temporary left behind
  CHECK(fs::is_directory(path));
  CHECK(ReadFile(dir.File("occupied/keep")) == "x");
}

TEST_CASE("output_sink: a directory removed under the sink fails Finish and leaves no file") {
  TempDir dir;
  const fs::path sub = dir.path() / "sub";
  fs::create_directory(sub);
  const std::string path = (sub / "trace.json").string();
  auto sink = OpenSink(path, false);
  sink->Write("data");
  // Remove the temporary file and its directory: the final rename must fail.
  for (const fs::directory_entry &entry : fs::directory_iterator(sub)) fs::remove(entry.path());
  fs::remove(sub);
  const absl::Status status = sink->Finish();
  REQUIRE_FALSE(status.ok());
  CHECK(StatusText(status).find("'" + path + "'") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
  CHECK(dir.Entries().empty());
}

TEST_CASE("output_sink: a failed write is reported by Finish and removes the temporary") {
  // A file-size limit makes write() fail with EFBIG once the file reaches it.
  TempDir dir;
  const std::string path = dir.File("too_big.bin");
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < (1u << 20)) {
    MESSAGE("skipped: the hard file-size limit is already below 1 MiB");
    return;
  }
  void (*saved_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = 1u << 20;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
  absl::Status status;
  {
    auto sink = OpenSink(path, false);
    sink->Write(Pattern(3 * OutputSink::kBufferBytes, 8));
    sink->Write("more after the failure");
    status = sink->Finish();
  }
  REQUIRE(setrlimit(RLIMIT_FSIZE, &saved) == 0);
  std::signal(SIGXFSZ, saved_handler);

  REQUIRE_FALSE(status.ok());
  const std::string message = StatusText(status);
  CHECK(message.find("cannot write '" + path + "'") != std::string::npos);
  CHECK(message.find("File too large") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
  CHECK(dir.Entries().empty());
}

TEST_CASE("output_sink: destroying a sink without Finish leaves no file") {
  TempDir dir;
  const std::string path = dir.File("abandoned.json");
  const std::string gz_path = dir.File("abandoned.json.gz");
  {
    auto sink = OpenSink(path, false);
    auto gz_sink = OpenSink(gz_path, true);
    CHECK(dir.Entries().empty());  // both unnamed
    sink->Write(Pattern(3 * OutputSink::kBufferBytes, 6));  // some of it reached the file
    gz_sink->Write(Pattern(3 * OutputSink::kBufferBytes, 7));
  }
  CHECK_FALSE(fs::exists(path));
  CHECK_FALSE(fs::exists(gz_path));
  CHECK(dir.Entries().empty());
}

TEST_CASE("output_sink: Finish replaces an existing file at the final path") {
  TempDir dir;
  const std::string path = dir.File("trace.json");
  { std::ofstream(path) << "old content that is longer than the new one"; }
  auto sink = OpenSink(path, false);
  sink->Write("new");
  REQUIRE(sink->Finish().ok());
  CHECK(ReadFile(path) == "new");
  CHECK(dir.Entries() == std::set<std::string>{"trace.json"});
}

TEST_CASE("output_sink: two sinks for the same path use distinct files") {
  TempDir dir;
  const std::string path = dir.File("same.json");
  auto first = OpenSink(path, false);
  auto second = OpenSink(path, false);
  CHECK(dir.Entries().empty());
  first->Write("first");
  second->Write("second");
  REQUIRE(first->Finish().ok());
  CHECK(ReadFile(path) == "first");
  REQUIRE(second->Finish().ok());
  CHECK(ReadFile(path) == "second");
  CHECK(dir.Entries() == std::set<std::string>{"same.json"});
}
