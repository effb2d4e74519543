// Memory: a session over max_memory_mb spills to an unnamed file and still exports everything;
// keep= evicts exactly what falls out of its window; short-lived threads cost little; a failed
// allocation or an unusable spill directory drops records and counts them, and the program goes
// on; dump_on_slow_step writes the kept window when a step is slow.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "integration/trace_reader.h"
#include "support/test_files.h"
#include "tfprof/tfprof.h"

using tfprof_test::Json;

namespace {

// Turns on failure of every nothrow array allocation of 1 KiB or more: the runtime's chunk
// allocations, which must drop and count records rather than end the program.
std::atomic<bool> g_fail_large_nothrow_arrays{false};

}  // namespace

void *operator new[](std::size_t size, const std::nothrow_t &) noexcept {
  if (size >= 1024 && g_fail_large_nothrow_arrays.load(std::memory_order_relaxed)) return nullptr;
  try {
    return ::operator new[](size);  // the array new below: freed by the delete[] below
  } catch (...) {
    return nullptr;
  }
}

namespace {

// Failure of the throwing operator new, for the places that allocate that way: a thread may make
// its own allocations fail (t_fail_allocations), or every thread but the one that armed the switch
// (g_fail_other_threads: the session's collector and writer) its allocations of 4 KiB or more:
// the pieces, chunks and tables that grow with a session. (Smaller ones too would reach the
// Abseil hash tables of the trace model, which a failed growth leaves corrupt: the name tables
// are replaced then (InsertOrReset), the others not yet.)
thread_local bool t_fail_allocations = false;
thread_local bool t_armed_here = false;
std::atomic<bool> g_fail_other_threads{false};
constexpr std::size_t kSmallestFailing = 4096;

bool FailThisAllocation(std::size_t size) {
  return t_fail_allocations || (size >= kSmallestFailing &&
                                g_fail_other_threads.load(std::memory_order_relaxed) && !t_armed_here);
}

}  // namespace

// malloc and free behind new and delete, as libstdc++ has them (GCC cannot see that they pair).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void *operator new(std::size_t size) {
  if (FailThisAllocation(size)) throw std::bad_alloc();
  if (void *memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
  if (FailThisAllocation(size)) return nullptr;
  return std::malloc(size == 0 ? 1 : size);
}
void *operator new[](std::size_t size) {
  if (FailThisAllocation(size)) throw std::bad_alloc();
  if (void *memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
// Every delete of what these news return (the aligned forms stay the runtime's, which pair among
// themselves). Under ASan the runtime's array new would not come through operator new.
void operator delete(void *memory) noexcept { std::free(memory); }
void operator delete(void *memory, std::size_t) noexcept { std::free(memory); }
void operator delete(void *memory, const std::nothrow_t &) noexcept { std::free(memory); }
void operator delete[](void *memory) noexcept { std::free(memory); }
void operator delete[](void *memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void *memory, const std::nothrow_t &) noexcept { std::free(memory); }
#pragma GCC diagnostic pop

namespace {

// What a session with max_memory_mb=1 and one recording thread may hold (docs/api.md, Memory):
// the limit, the spill writes in flight and the chunks waiting for them (4 MiB each at this
// limit), and the chunk the thread appends to (at most 1.5 MiB).
constexpr uint64_t kMemoryBound = (1u << 20) + 2 * (4u << 20) + (3u << 19);

int64_t ResidentKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoll(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// Sets TMPDIR for the spill file while alive.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string &dir) {
    if (const char *old = std::getenv("TMPDIR")) {
      had_ = true;
      old_ = old;
    }
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (had_) {
      setenv("TMPDIR", old_.c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
  }

 private:
  bool had_ = false;
  std::string old_;
};

// Occurrences of `needle` in the file, read in pieces (the traces here are tens of MB).
uint64_t CountInFile(const std::string &path, const std::string &needle) {
  std::ifstream file(path, std::ios::binary);
  std::string carry;
  std::vector<char> buffer(1 << 20);
  uint64_t count = 0;
  while (file) {
    file.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    std::string text = carry + std::string(buffer.data(), static_cast<size_t>(file.gcount()));
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      if (at + needle.size() <= text.size()) ++count;
    }
    const size_t keep = std::min(text.size(), needle.size() - 1);
    carry = text.substr(text.size() - keep);
  }
  return count;
}

std::set<std::string> SpanNames(const Json &trace) {
  std::set<std::string> names;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    names.insert(event["name"].get<std::string>());
  }
  return names;
}

// One step of `spans` spans named "op".
void RecordStep(int step, int spans) {
  prof_begin_step(step);
  for (int span = 0; span < spans; ++span) {
    prof_span_begin("op");
    prof_span_end();
  }
  prof_end_step();
}

}  // namespace

TEST_CASE("memory: a run over max_memory_mb spills, stays bounded and exports every span") {
  tfprof_test::TempDir spill_dir;
  ScopedTmpdir tmpdir(spill_dir.path().string());
  constexpr int kSteps = 1000;
  constexpr int kSpansPerStep = 500;  // 1M records, 24 MB
  REQUIRE(prof_start("max_memory_mb=1,flush_interval_ms=1") == PROF_OK);
  const int64_t rss_before_kb = ResidentKb();
  uint64_t most_held = 0;
  for (int step = 0; step < kSteps; ++step) {
    RecordStep(step, kSpansPerStep);
    if (step % 50 == 0) most_held = std::max(most_held, tfprof_test::CurrentStats().memory_bytes);
    // About 1M events/s: a pace the spill writer keeps up with (faster, it drops and counts).
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const int64_t rss_growth_kb = ResidentKb() - rss_before_kb;
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_dropped == 0);
  CHECK(stats.events_memory_dropped == 0);
  CHECK(stats.events_discarded == 0);
  // The limit, chunks waiting for the writer (a quarter of the limit), the writes in flight (a
  // quarter of the limit, and always one chunk) and the chunk each live thread appends to.
  CHECK(most_held <= kMemoryBound);
  CHECK(stats.memory_bytes <= kMemoryBound);
  CHECK(stats.spill_bytes >= 20u << 20);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Sanitizers keep freed memory aside (quarantine, shadow): RSS says nothing there.
  CHECK(rss_growth_kb < 16 * 1024);  // 24 MB were recorded
#else
  static_cast<void>(rss_growth_kb);
#endif
  CHECK(spill_dir.Entries().empty());  // the spill file has no name

  const std::string path = spill_dir.File("trace.json");
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  CHECK(CountInFile(path, "\"name\":\"op\"") == uint64_t{kSteps} * kSpansPerStep);
  CHECK(CountInFile(path, "\"cat\":\"step\"") == kSteps);
  CHECK(CountInFile(path, "\"memory_dropped_events\":0") == 1);
}

TEST_CASE("memory: a streamed output over max_memory_mb lets go of what it wrote: nothing is "
          "spilled, and exports convert the output") {
  tfprof_test::TempDir dir;
  ScopedTmpdir tmpdir(dir.path().string());
  const std::string output = dir.File("stream.json");
  constexpr int kSteps = 1000;
  constexpr int kSpansPerStep = 500;  // 1M records, 24 MB
  const std::string options = "max_memory_mb=1,flush_interval_ms=1,output=" + output;
  REQUIRE(prof_start(options.c_str()) == PROF_OK);
  uint64_t most_spilled = 0;
  uint64_t most_held = 0;
  for (int step = 0; step < kSteps; ++step) {
    RecordStep(step, kSpansPerStep);
    if (step % 50 == 0) {
      const prof_stats_t stats = tfprof_test::CurrentStats();
      most_spilled = std::max(most_spilled, stats.spill_bytes);
      most_held = std::max(most_held, stats.memory_bytes);
    }
    if (step == kSteps / 2) {
      // While it runs: the export holds the steps the output holds so far.
      const std::string middle = dir.File("middle.json");
      REQUIRE(prof_export(middle.c_str()) == PROF_OK);
      const uint64_t ops = CountInFile(middle, "\"name\":\"op\"");
      CHECK(ops % kSpansPerStep == 0);
      CHECK(ops >= uint64_t{kSteps / 4} * kSpansPerStep);
      CHECK(ops <= uint64_t{kSteps / 2 + 1} * kSpansPerStep);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_dropped == 0);
  CHECK(stats.events_memory_dropped == 0);
  CHECK(stats.events_discarded == 0);
  // Without the release, 24 MB would be in the spill file: what the stream has not yet written
  // may still spill for a moment (a few chunks, more on a busy machine), never the run.
  CHECK(most_spilled <= uint64_t{8} << 20);
  CHECK(stats.spill_bytes == 0);  // at the end the output holds everything: nothing stays spilled
  CHECK(most_held <= kMemoryBound);
  CHECK(CountInFile(output, "\"name\":\"op\"") == uint64_t{kSteps} * kSpansPerStep);

  // After the session, every format reads it back from the output, whole.
  const std::string copy = dir.File("copy.json");
  REQUIRE(prof_export(copy.c_str()) == PROF_OK);
  CHECK(CountInFile(copy, "\"name\":\"op\"") == uint64_t{kSteps} * kSpansPerStep);
  CHECK(CountInFile(copy, "\"cat\":\"step\"") == kSteps);
  CHECK(CountInFile(copy, "\"memory_dropped_events\":0") == 1);
  const std::string tfrecord = dir.File("copy.tfrecord");
  REQUIRE(prof_export(tfrecord.c_str()) == PROF_OK);
  CHECK(std::filesystem::file_size(tfrecord) > 0);
  // The output itself is already written: exporting to it changes nothing.
  const auto size_before = std::filesystem::file_size(output);
  REQUIRE(prof_export(output.c_str()) == PROF_OK);
  CHECK(std::filesystem::file_size(output) == size_before);
  // The output gone, the export says where the released events were.
  std::filesystem::remove(output);
  CHECK(prof_export(dir.File("lost.json").c_str()) != PROF_OK);
  CHECK(std::string(prof_last_error()).find("stream.json', which alone holds the") !=
        std::string::npos);
}

TEST_CASE("memory: keep=last:3 keeps exactly the last three steps, and counts the rest") {
  REQUIRE(prof_start("keep=last:3,flush_interval_ms=1") == PROF_OK);
  for (int step = 1; step <= 10; ++step) {
    prof_begin_step(step);
    const std::string name = "op_" + std::to_string(step);
    prof_span_begin(name.c_str());
    prof_span_end();
    prof_span_begin(name.c_str());
    prof_span_end();
    prof_end_step();
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_discarded == 7 * 6);  // steps 1-7: a begin, an end, two spans each

  const Json trace = tfprof_test::ExportedTrace("last3.json");
  CHECK(SpanNames(trace) == std::set<std::string>{"op_8", "op_9", "op_10", "step 8", "step 9", "step 10"});
  CHECK(trace["tfprof"]["discarded_events"] == 42);
  CHECK(tfprof_test::NestingProblem(trace).empty());
}

TEST_CASE("memory: keep=last:Ns keeps the last N seconds") {
  REQUIRE(prof_start("keep=last:1s,flush_interval_ms=1") == PROF_OK);
  prof_span_begin("old");
  prof_span_end();
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  prof_span_begin("new");
  prof_span_end();
  const std::string path = tfprof_test::TempPath("last1s.json");
  REQUIRE(prof_export(path.c_str()) == PROF_OK);  // while running
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(SpanNames(tfprof_test::ReadTrace(path)) == std::set<std::string>{"new"});
  CHECK(tfprof_test::CurrentStats().events_discarded == 2);
}

TEST_CASE("memory: threads that come and go hold little once drained") {
  REQUIRE(prof_start("flush_interval_ms=1") == PROF_OK);
  constexpr int kThreads = 2000;
  for (int i = 0; i < kThreads; ++i) {
    std::thread([] {
      prof_span_begin("short");
      prof_span_end();
    }).join();
  }
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.threads == kThreads);
  // A 64-record first chunk each (1.5 KiB), where a 64K-record one (1.5 MiB) used to be pinned.
  CHECK(stats.memory_bytes <= uint64_t{kThreads} * 2048);
}

TEST_CASE("memory: a failed allocation in the collector drops and counts, the program goes on") {
  REQUIRE(prof_start("flush_interval_ms=1") == PROF_OK);
  for (int i = 0; i < 10; ++i) {
    prof_span_begin("kept");
    prof_span_end();
  }
  REQUIRE(tfprof_test::CurrentStats().events_recorded == 20);  // drained: the chunk exists
  g_fail_large_nothrow_arrays.store(true);
  std::thread([] {
    for (int i = 0; i < 100; ++i) {
      prof_span_begin("lost");
      prof_span_end();
    }
  }).join();
  const prof_stats_t during = tfprof_test::CurrentStats();  // drains: no chunk for the new thread
  g_fail_large_nothrow_arrays.store(false);
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(during.events_memory_dropped == 200);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_recorded == 220);
  CHECK(stats.events_memory_dropped == 200);

  const Json trace = tfprof_test::ExportedTrace("alloc_failed.json");
  CHECK(SpanNames(trace) == std::set<std::string>{"kept"});
  CHECK(tfprof_test::EventsWithPhase(trace, "X").size() == 10);
  CHECK(trace["tfprof"]["memory_dropped_events"] == 200);
}

TEST_CASE("memory: the events of a thread that gets no buffer are counted as lost to memory") {
  REQUIRE(prof_start("flush_interval_ms=1,warnings=off") == PROF_OK);
  prof_span_begin("kept");
  prof_span_end();
  std::thread([] {
    t_fail_allocations = true;  // its buffer, made at its first event, cannot be allocated
    for (int i = 0; i < 100; ++i) {
      prof_span_begin("lost");
      prof_span_end();
    }
    t_fail_allocations = false;
  }).join();
  REQUIRE(prof_stop() == PROF_OK);
  const prof_stats_t stats = tfprof_test::CurrentStats();
  // recorded + dropped is still every call that reached the session; the lost are memory's.
  CHECK(stats.events_recorded == 202);
  CHECK(stats.events_dropped == 0);
  CHECK(stats.events_memory_dropped == 200);
  const Json trace = tfprof_test::ExportedTrace("no_buffer.json");
  CHECK(SpanNames(trace) == std::set<std::string>{"kept"});
  CHECK(trace["tfprof"]["memory_dropped_events"] == 200);
}

TEST_CASE("memory: out of memory in a control call is reported with its message") {
  REQUIRE(prof_start("flush_interval_ms=0,warnings=off") == PROF_OK);
  prof_span_begin("op");
  prof_span_end();
  const std::string path = tfprof_test::TempPath("export_no_memory.json");
  CHECK(std::string(prof_last_error()).empty());
  t_fail_allocations = true;
  const int result = prof_export(path.c_str());
  t_fail_allocations = false;
  CHECK(result == PROF_ENOMEM);
  CHECK(std::string(prof_last_error()) == "prof_export: out of memory");
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(std::string(prof_last_error()).empty());
}

TEST_CASE("memory: no memory on the collector and writer threads never ends the program, and a "
          "streamed trace stays whole with every lost record counted") {
  tfprof_test::TempDir dir;
  const std::string output = dir.File("trace.json");
  REQUIRE(prof_start(("flush_interval_ms=1,warnings=off,output=" + output).c_str()) == PROF_OK);
  t_armed_here = true;
  auto steps = [](int first, int count) {
    for (int step = first; step < first + count; ++step) {
      prof_begin_step(step);
      for (int i = 0; i < 2000; ++i) {
        prof_span_begin("op");
        prof_span_end();
      }
      prof_end_step();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };
  steps(0, 10);
  g_fail_other_threads.store(true);  // drains, pieces and their writes fail meanwhile
  steps(10, 20);
  g_fail_other_threads.store(false);
  steps(30, 10);
  REQUIRE(prof_stop() == PROF_OK);
  t_armed_here = false;
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(stats.events_memory_dropped > 0);
  const Json trace = tfprof_test::ReadTrace(output);
  // A span or step in the file stands for its two records; one whose end record was lost (shown
  // to the end, marked incomplete) for one.
  uint64_t records_in_file = 0;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    const bool incomplete = event.contains("args") && event["args"].contains("incomplete");
    records_in_file += incomplete ? 1 : 2;
  }
  CHECK(trace["tfprof"]["memory_dropped_events"] == stats.events_memory_dropped);
  // Every call is recorded or dropped by its full ring (the collector may fall behind meanwhile),
  // and every record is in the file or counted, to within a few: a step whose end record was lost
  // still shows, closed by the next step's begin (counted twice), a step whose begin was lost
  // leaves its end in neither, and a span whose begin could not be read in lends its end to the
  // span around it. Those stay far under 1%; what this test found before were whole pieces.
  CHECK(stats.events_recorded + stats.events_dropped == 40 * (2 * 2000 + 2));
  const uint64_t accounted = records_in_file + stats.events_memory_dropped;
  const uint64_t tolerance = stats.events_recorded / 100;
  CHECK(accounted + tolerance >= stats.events_recorded);
  CHECK(accounted <= stats.events_recorded + tolerance);
}

TEST_CASE("memory: with no usable spill directory, records over the limit are dropped and counted") {
  const std::string path = tfprof_test::TempPath("no_spill.json");
  prof_stats_t during{};
  {
    ScopedTmpdir tmpdir("/nonexistent/tfprof-test-spill");
    REQUIRE(prof_start("max_memory_mb=1,flush_interval_ms=1,warnings=off") == PROF_OK);
    for (int i = 0; i < 300000; ++i) {
      prof_span_begin("op");
      prof_span_end();
    }
    during = tfprof_test::CurrentStats();
    REQUIRE(prof_stop() == PROF_OK);
  }
  const prof_stats_t stats = tfprof_test::CurrentStats();
  CHECK(during.memory_bytes <= kMemoryBound);
  CHECK(stats.events_memory_dropped > 0);
  CHECK(stats.events_memory_dropped < stats.events_recorded);
  CHECK(stats.spill_bytes == 0);
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  const Json trace = tfprof_test::ReadTrace(path);
  CHECK(trace["tfprof"]["memory_dropped_events"] == stats.events_memory_dropped);
  CHECK(!tfprof_test::EventsWithPhase(trace, "X").empty());
}

TEST_CASE("memory: dump_on_slow_step writes the kept window when a step is slow") {
  tfprof_test::TempDir dir;
  const std::string output = dir.File("trace.json");
  const std::string options =
      "output=" + output + ",dump_on_slow_step=10,flush_interval_ms=1,warnings=off";
  REQUIRE(prof_start(options.c_str()) == PROF_OK);
  for (int step = 1; step <= 9; ++step) {
    prof_begin_step(step);
    prof_span_begin(step == 7 ? "slow_op" : "op");
    std::this_thread::sleep_for(std::chrono::milliseconds(step == 7 ? 400 : 5));
    prof_span_end();
    prof_end_step();
  }
  // The collector notices step 7 on its next drain; give it time before stopping.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(tfprof_test::CurrentStats().slow_step_dumps >= 1);
  const std::string dump = dir.File("trace.slow-step-7.json");
  REQUIRE(dir.Entries().count("trace.slow-step-7.json") == 1);
  const Json trace = tfprof_test::ReadTrace(dump);
  const std::set<std::string> names = SpanNames(trace);
  CHECK(names.count("slow_op") == 1);
  CHECK(names.count("step 7") == 1);
  CHECK(dir.Entries().count("trace.json") == 1);
}
