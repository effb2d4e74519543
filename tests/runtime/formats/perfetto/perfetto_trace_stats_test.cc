// Perfetto's TraceStats read into TraceLosses::PerfettoStats, and the sentence made of it.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/formats/perfetto/perfetto_trace_stats.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"

namespace tfprof {
namespace {

// TraceStats is not in tfprof's copy of Perfetto's protos: written by hand, field by field.
std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}
std::string VarintField(uint32_t field, uint64_t value) { return Varint(field << 3) + Varint(value); }
std::string BytesField(uint32_t field, const std::string &bytes) {
  return Varint(field << 3 | 2) + Varint(bytes.size()) + bytes;
}

TEST_CASE("perfetto trace stats: buffers summed, the last TraceStats wins") {
  // Two buffers: 3 + 4 chunks overwritten, 2 packet losses, 1 ABI violation; the service: 9
  // chunks and 8 patches discarded, 1 failed flush.
  const std::string first_buffer = VarintField(12, 1 << 20) + VarintField(3, 3) + VarintField(19, 2);
  const std::string second_buffer = VarintField(3, 4) + VarintField(9, 1) + VarintField(18, 5);
  const std::string stats = BytesField(1, first_buffer) + BytesField(1, second_buffer) +
                            VarintField(8, 9) + VarintField(9, 8) + VarintField(14, 1);
  TraceLosses::PerfettoStats read;
  REQUIRE(ReadPerfettoTraceStats(VarintField(8, 100), &read));  // an earlier snapshot
  CHECK(read.service_chunks_discarded == 100);
  REQUIRE(ReadPerfettoTraceStats(stats, &read));
  CHECK(read.reported);
  CHECK(read.chunks_overwritten == 7);
  CHECK(read.chunks_discarded == 5);
  CHECK(read.trace_writer_packet_loss == 2);
  CHECK(read.abi_violations == 1);
  CHECK(read.service_chunks_discarded == 9);
  CHECK(read.service_patches_discarded == 8);
  CHECK(read.flushes_failed == 1);
  CHECK(DescribePerfettoLosses(read) ==
        "7 chunks overwritten before they were read (the buffer was full), 5 chunks discarded "
        "(the buffer was full), 2 packet losses reported by trace writers, 1 shared-memory ABI "
        "violations, 1 failed flushes (the tracing service discarded 9 chunks and 8 patches "
        "before any buffer, over all its sessions)");
}

TEST_CASE("perfetto trace stats: none, nothing, damage") {
  TraceLosses::PerfettoStats read;
  CHECK(DescribePerfettoLosses(read).empty());  // no TraceStats at all
  REQUIRE(ReadPerfettoTraceStats(BytesField(1, VarintField(12, 4096)), &read));
  CHECK(DescribePerfettoLosses(read) == "none reported");
  TraceLosses::PerfettoStats damaged;
  CHECK_FALSE(ReadPerfettoTraceStats("\x0a\x09\x18", &damaged));
  CHECK_FALSE(damaged.reported);
}

TEST_CASE("perfetto trace stats: a failed final flush and the sources slow to flush") {
  const std::string source = [](const std::string &producer, const std::string &name) {
    return BytesField(1, BytesField(1, producer) + BytesField(2, name));
  }("com.app", "track_event");
  TraceLosses::PerfettoStats read;
  // TracingServiceEvent.last_flush_slow_data_sources (8), twice with the same source.
  REQUIRE(ReadPerfettoServiceEvent(BytesField(8, source), &read));
  REQUIRE(ReadPerfettoServiceEvent(BytesField(8, source) + VarintField(5, 1), &read));
  CHECK(read.reported);
  CHECK(read.slow_flush_sources == std::vector<std::string>{"com.app/track_event"});
  // A TraceStats after it keeps the flagged sources; FINAL_FLUSH_FAILED (2) in field 15.
  REQUIRE(ReadPerfettoTraceStats(VarintField(15, 2), &read));
  CHECK(read.final_flush_failed);
  CHECK(DescribePerfettoLosses(read) ==
        "the final flush failed, data sources slow to answer the last flush (their last data may "
        "be lost): com.app/track_event");
  // Service events that flag nothing say nothing.
  TraceLosses::PerfettoStats quiet;
  REQUIRE(ReadPerfettoServiceEvent(VarintField(2, 1), &quiet));
  CHECK_FALSE(quiet.reported);
}

}  // namespace
}  // namespace tfprof
