#include "runtime/formats/perfetto/perfetto_trace_stats.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/common/proto_wire.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

// Field numbers of TraceStats and TraceStats.BufferStats.
namespace stats_field {
constexpr uint32_t kBufferStats = 1;
constexpr uint32_t kChunksDiscarded = 8;
constexpr uint32_t kPatchesDiscarded = 9;
constexpr uint32_t kInvalidPackets = 10;
constexpr uint32_t kFlushesFailed = 14;
constexpr uint32_t kFinalFlushOutcome = 15;
constexpr int kFinalFlushFailed = 2;  // FinalFlushOutcome.FINAL_FLUSH_FAILED
}  // namespace stats_field

// TracingServiceEvent.last_flush_slow_data_sources, a DataSources { repeated DataSource
// data_source = 1 } of DataSource { producer_name = 1; data_source_name = 2 }.
constexpr uint32_t kLastFlushSlowDataSources = 8;

namespace buffer_field {
constexpr uint32_t kChunksOverwritten = 3;
constexpr uint32_t kPatchesFailed = 6;
constexpr uint32_t kAbiViolations = 9;
constexpr uint32_t kChunksDiscarded = 18;
constexpr uint32_t kTraceWriterPacketLoss = 19;
}  // namespace buffer_field

bool ReadBufferStats(std::string_view bytes, TraceLosses::PerfettoStats *stats) {
  size_t at = 0;
  WireField field;
  while (NextWireField(bytes, &at, &field)) {
    if (field.wire_type != 0) continue;
    switch (field.number) {
      case buffer_field::kChunksOverwritten: stats->chunks_overwritten += field.varint; break;
      case buffer_field::kPatchesFailed: stats->patches_failed += field.varint; break;
      case buffer_field::kAbiViolations: stats->abi_violations += field.varint; break;
      case buffer_field::kChunksDiscarded: stats->chunks_discarded += field.varint; break;
      case buffer_field::kTraceWriterPacketLoss:
        stats->trace_writer_packet_loss += field.varint;
        break;
      default: break;
    }
  }
  return at == bytes.size();
}

}  // namespace

bool ReadPerfettoTraceStats(std::string_view bytes, TraceLosses::PerfettoStats *stats) {
  TraceLosses::PerfettoStats read;
  read.reported = true;
  read.slow_flush_sources = std::move(stats->slow_flush_sources);  // from service events
  size_t at = 0;
  WireField field;
  while (NextWireField(bytes, &at, &field)) {
    if (field.number == stats_field::kBufferStats && field.wire_type == 2) {
      if (!ReadBufferStats(field.payload, &read)) return false;
      continue;
    }
    if (field.wire_type != 0) continue;
    switch (field.number) {
      case stats_field::kChunksDiscarded: read.service_chunks_discarded = field.varint; break;
      case stats_field::kPatchesDiscarded: read.service_patches_discarded = field.varint; break;
      case stats_field::kInvalidPackets: read.invalid_packets = field.varint; break;
      case stats_field::kFlushesFailed: read.flushes_failed = field.varint; break;
      case stats_field::kFinalFlushOutcome:
        read.final_flush_failed = field.varint == stats_field::kFinalFlushFailed;
        break;
      default: break;
    }
  }
  if (at != bytes.size()) {
    stats->slow_flush_sources = std::move(read.slow_flush_sources);
    return false;
  }
  *stats = std::move(read);
  return true;
}

bool ReadPerfettoServiceEvent(std::string_view bytes, TraceLosses::PerfettoStats *stats) {
  size_t at = 0;
  WireField field;
  while (NextWireField(bytes, &at, &field)) {
    if (field.number != kLastFlushSlowDataSources || field.wire_type != 2) continue;
    size_t list_at = 0;
    WireField source;
    while (NextWireField(field.payload, &list_at, &source)) {
      if (source.number != 1 || source.wire_type != 2) continue;
      std::string_view producer;
      std::string_view name;
      size_t source_at = 0;
      WireField part;
      while (NextWireField(source.payload, &source_at, &part)) {
        if (part.wire_type != 2) continue;
        if (part.number == 1) producer = part.payload;
        if (part.number == 2) name = part.payload;
      }
      if (source_at != source.payload.size()) return false;
      std::string joined = absl::StrCat(ToAbsl(producer), "/", ToAbsl(name));
      std::vector<std::string> &known = stats->slow_flush_sources;
      if (std::find(known.begin(), known.end(), joined) == known.end()) {
        known.push_back(std::move(joined));
      }
      stats->reported = true;
    }
    if (list_at != field.payload.size()) return false;
  }
  return at == bytes.size();
}

std::string DescribePerfettoLosses(const TraceLosses::PerfettoStats &stats) {
  if (!stats.reported) return "";
  // This session's buffers first: what this trace lost.
  const std::vector<std::pair<uint64_t, const char *>> buffers = {
      {stats.chunks_overwritten, "chunks overwritten before they were read (the buffer was full)"},
      {stats.chunks_discarded, "chunks discarded (the buffer was full)"},
      {stats.trace_writer_packet_loss, "packet losses reported by trace writers"},
      {stats.abi_violations, "shared-memory ABI violations"},
      {stats.patches_failed, "failed patches"},
      {stats.invalid_packets, "invalid packets"},
      {stats.flushes_failed, "failed flushes"},
  };
  std::string text;
  for (const auto &[count, what] : buffers) {
    if (count == 0) continue;
    absl::StrAppend(&text, text.empty() ? "" : ", ", count, " ", what);
  }
  if (stats.final_flush_failed) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", "the final flush failed");
  }
  if (!stats.slow_flush_sources.empty()) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", "data sources slow to answer the last flush "
                    "(their last data may be lost): ", absl::StrJoin(stats.slow_flush_sources, ", "));
  }
  if (text.empty()) text = "none reported";
  // The service's own counts cover every session since it started (an Android device's traced
  // runs for days): said apart, as not necessarily this trace's.
  if (stats.service_chunks_discarded > 0 || stats.service_patches_discarded > 0) {
    absl::StrAppend(&text, " (the tracing service discarded ", stats.service_chunks_discarded,
                    " chunks and ", stats.service_patches_discarded,
                    " patches before any buffer, over all its sessions)");
  }
  return text;
}

}  // namespace tfprof
