// ChunkedLog: chunks that grow from small, stable indices, spilling to the session's spill file
// and reading back, eviction for the keep= window, and what is counted when a chunk cannot be
// kept; and the spill file itself.
#include "runtime/storage/chunked_log.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/storage/background_writer.h"
#include "runtime/storage/spill_file.h"
#include "support/test_files.h"

namespace {

using tfprof::ChunkedLog;
using tfprof::ChunkStore;

struct Record {
  uint64_t ticks = 0;
  uint64_t payload = 0;
};

using Log = ChunkedLog<Record, 1024>;

std::vector<uint64_t> Visited(const Log &log, size_t from = 0) {
  std::vector<uint64_t> ticks;
  log.ForEachFrom(from, [&](const Record &record) { ticks.push_back(record.ticks); });
  return ticks;
}

void Fill(Log &log, uint64_t first, uint64_t count) {
  for (uint64_t i = first; i < first + count; ++i) REQUIRE(log.Append(Record{i, i * 7}));
}

std::vector<uint64_t> Range(uint64_t first, uint64_t end) {
  std::vector<uint64_t> values;
  for (uint64_t i = first; i < end; ++i) values.push_back(i);
  return values;
}

// A log that accounts its chunks in `store`, which does not spill unless a test says so.
struct StoredLog {
  StoredLog() { log.set_store(&store); }
  ChunkStore store;
  Log log;
};

// A store that spills to a scratch directory, and a log in it.
struct Spilling {
  explicit Spilling(tfprof::BackgroundWriter *writer = nullptr) {
    store.spill_enabled = true;
    store.spill_directory = dir.path().string();
    store.writer = writer;
    log.set_store(&store);
  }
  tfprof_test::TempDir dir;
  ChunkStore store;
  Log log;
};

}  // namespace

TEST_CASE("chunked log: a thread that records little holds a small first chunk") {
  ChunkStore store;
  ChunkedLog<Record> log;  // the default: up to 64K records per chunk
  log.set_store(&store);
  REQUIRE(log.Append(Record{1, 1}));
  CHECK(store.resident_bytes == static_cast<int64_t>(64 * sizeof(Record)));
  for (uint64_t i = 0; i < 64; ++i) REQUIRE(log.Append(Record{i, 0}));
  // 65 records: a first chunk of 64 and a second of 128.
  CHECK(store.resident_bytes == static_cast<int64_t>((64 + 128) * sizeof(Record)));
}

TEST_CASE("chunked log: every record is visited in order across growing chunks") {
  Log log;
  Fill(log, 0, 5000);
  CHECK(log.size() == 5000);
  CHECK(Visited(log) == Range(0, 5000));
  CHECK(Visited(log, 4321) == Range(4321, 5000));
  CHECK(log[0].ticks == 0);
  CHECK(log[4999].payload == 4999 * 7);
  CHECK(log[1234].ticks == 1234);
}

TEST_CASE("chunked log: spilled chunks leave memory and read back the same records") {
  Spilling spilling;
  ChunkStore &store = spilling.store;
  Log &log = spilling.log;
  Fill(log, 0, 5000);
  const int64_t before = store.resident_bytes;
  log.SpillAll(/*include_last=*/false);
  const int64_t freed = before - store.resident_bytes;
  CHECK(freed > 0);
  REQUIRE(store.spill != nullptr);
  CHECK(store.spill->bytes_held() > 0);
  // The spill file has no name: the directory stays empty.
  CHECK(spilling.dir.Entries().empty());
  CHECK(Visited(log) == Range(0, 5000));  // read through a buffer, left on disk
  CHECK(store.resident_bytes == before - freed);
  // Appending goes on into the chunk that stayed; then everything is spilled.
  Fill(log, 5000, 100);
  log.SpillAll(/*include_last=*/true);
  CHECK(store.resident_bytes == 0);
  Fill(log, 5100, 10);
  CHECK(Visited(log) == Range(0, 5110));
  // Random access brings one chunk back into memory.
  CHECK(log[10].payload == 70);
  CHECK(store.resident_bytes > 0);
  CHECK(store.records_lost == 0);
}

TEST_CASE("chunked log: a record appended after a chunk was read back is not lost on respill") {
  Spilling spilling;
  Log &log = spilling.log;
  Fill(log, 0, 10);
  log.SpillAll(true);
  CHECK(log[3].ticks == 3);  // reloaded: this chunk is resident again, with a spilled copy
  Fill(log, 10, 5);          // goes to a new chunk, not into the reloaded one
  log.SpillAll(true);
  CHECK(Visited(log) == Range(0, 15));
}

TEST_CASE("chunked log: eviction frees whole chunks, keeps indices and counts the records") {
  Spilling spilling;
  ChunkStore &store = spilling.store;
  Log &log = spilling.log;
  Fill(log, 0, 5000);
  log.SpillAll(false);
  const uint64_t spilled = store.spill->bytes_held();
  log.EvictBefore(3000);
  CHECK(store.records_discarded == 3000);
  CHECK(log.first_kept() == 3000);
  CHECK(log.size() == 5000);
  CHECK(Visited(log) == Range(3000, 5000));
  CHECK(Visited(log, 10) == Range(3000, 5000));
  CHECK(log[2999].ticks == 0);  // evicted: reads as a default record
  CHECK(log[3000].ticks == 3000);
  CHECK(store.spill->bytes_held() < spilled);  // the spill space of whole chunks is given back
  log.EvictBefore(3000);                       // nothing more
  CHECK(store.records_discarded == 3000);
  const size_t first = log.FindFirst(log.first_kept(), [](const Record &r) { return r.ticks >= 4500; });
  CHECK(first == 4500);
  log.EvictBefore(first);
  CHECK(store.records_discarded == 4500);
  CHECK(Visited(log).front() == 4500);
  log.EvictBefore(log.FindFirst(0, [](const Record &r) { return r.ticks >= 99999; }));
  CHECK(Visited(log).empty());
  CHECK(store.records_discarded == 5000);
  Fill(log, 5000, 3);
  CHECK(Visited(log) == Range(5000, 5003));
}

TEST_CASE_FIXTURE(StoredLog,
                  "chunked log: without a usable spill file, chunks over the limit are dropped and counted") {
  store.spill_enabled = true;
  store.spill_directory = "/nonexistent/tfprof-spill";
  Fill(log, 0, 3000);
  log.SpillAll(false);
  CHECK(store.spill_error.find("/nonexistent/tfprof-spill") != std::string::npos);
  CHECK(store.records_lost > 0);
  CHECK(store.records_lost < 3000);  // the chunk being appended to stays
  const std::vector<uint64_t> left = Visited(log);
  CHECK(left.size() == 3000 - store.records_lost);
  CHECK(left.back() == 2999);
  // Eviction does not count lost records a second time as discarded.
  log.EvictBefore(3000);
  CHECK(store.records_discarded == 3000 - store.records_lost);
}

TEST_CASE_FIXTURE(StoredLog, "chunked log: with spilling off, Spill keeps everything in memory") {
  Fill(log, 0, 3000);
  const int64_t held = store.resident_bytes;
  log.SpillAll(true);
  CHECK(store.resident_bytes == held);
  CHECK(store.records_lost == 0);
  CHECK(Visited(log) == Range(0, 3000));
}

TEST_CASE_FIXTURE(StoredLog, "chunked log: a moved log keeps its records and its accounting") {
  Fill(log, 0, 2000);
  const int64_t held = store.resident_bytes;
  Log moved(std::move(log));
  CHECK(store.resident_bytes == held);
  CHECK(Visited(moved) == Range(0, 2000));
  { Log dropped(std::move(moved)); }
  CHECK(store.resident_bytes == 0);
}

TEST_CASE("chunked log: spill writes on a background writer free memory once reaped") {
  tfprof::BackgroundWriter writer(1 << 30);
  Spilling spilling(&writer);
  ChunkStore &store = spilling.store;
  Log &log = spilling.log;
  Fill(log, 0, 5000);
  const int64_t before = store.resident_bytes;
  log.SpillAll(false);
  // In flight or done, the chunks stay readable and resident until reaped.
  CHECK(store.resident_bytes == before);
  CHECK(Visited(log) == Range(0, 5000));
  writer.WaitIdle();
  log.Reap();
  CHECK(store.resident_bytes < before);
  CHECK(store.spill->bytes_held() > 0);
  CHECK(Visited(log) == Range(0, 5000));
  CHECK(log[17].payload == 17 * 7);
  // Evicting chunks whose writes are still queued gives their space back when the write ends.
  Fill(log, 5000, 3000);
  log.SpillAll(false);
  log.EvictBefore(log.size());
  writer.WaitIdle();
  CHECK(store.spill->bytes_held() == 0);
  CHECK(store.records_discarded == 8000);
  CHECK(store.records_lost == 0);
}

TEST_CASE("chunked log: chunks wait for a busy writer, and DropOldest drops and counts them") {
  tfprof::BackgroundWriter writer(1);  // room for one job at a time
  Spilling spilling(&writer);
  ChunkStore &store = spilling.store;
  Log &log = spilling.log;
  std::mutex gate;
  std::unique_lock<std::mutex> hold(gate);
  REQUIRE(writer.TrySubmit(1, [&gate] { std::lock_guard<std::mutex> wait(gate); }));
  Fill(log, 0, 5000);
  const int64_t before = store.resident_bytes;
  log.SpillAll(false);  // the writer is busy: nothing goes, nothing is lost
  CHECK(store.in_flight_bytes == 0);
  CHECK(store.records_lost == 0);
  int64_t excess = 1;  // the oldest chunk
  log.DropOldest(false, &excess);
  CHECK(store.writer_behind == 1);
  CHECK(store.records_lost == 64);  // the first chunk holds 64 records
  CHECK(store.resident_bytes == before - static_cast<int64_t>(64 * sizeof(Record)));
  hold.unlock();
  writer.WaitIdle();
  log.SpillAll(false);
  writer.WaitIdle();
  log.Reap();
  CHECK(store.in_flight_bytes == 0);
  const std::vector<uint64_t> left = Visited(log);
  CHECK(left == Range(64, 5000));
}

TEST_CASE("spill file: unnamed, readable back, and says when it sits in memory") {
  tfprof_test::TempDir dir;
  absl::StatusOr<std::unique_ptr<tfprof::SpillFile>> file = tfprof::SpillFile::Create(dir.path().string());
  REQUIRE(file.ok());
  CHECK(dir.Entries().empty());
  const std::string bytes = "twenty-four bytes each..";
  const int64_t first = (*file)->Append(bytes.data(), bytes.size());
  const int64_t second = (*file)->Append(bytes.data(), bytes.size());
  CHECK(first == 0);
  CHECK(second == 24);
  CHECK((*file)->bytes_held() == 48);
  std::string back(24, '\0');
  REQUIRE((*file)->Read(second, back.data(), back.size()));
  CHECK(back == bytes);
  (*file)->Release(first, 24);
  CHECK((*file)->bytes_held() == 24);
  CHECK_FALSE((*file)->Read(1000, back.data(), back.size()));  // past the end: a short read

  const absl::StatusOr<std::unique_ptr<tfprof::SpillFile>> missing =
      tfprof::SpillFile::Create("/nonexistent/spill");
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find("/nonexistent/spill") != std::string::npos);

  if (std::filesystem::is_directory("/dev/shm")) {  // a tmpfs on Linux
    absl::StatusOr<std::unique_ptr<tfprof::SpillFile>> shm = tfprof::SpillFile::Create("/dev/shm");
    REQUIRE(shm.ok());
    CHECK((*shm)->in_memory());
  }
}
