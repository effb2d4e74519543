// Perfetto's own account of what a recording lost: the tracing service's TraceStats packet
// (protos/perfetto/common/trace_stats.proto), read into TraceLosses::PerfettoStats, and the
// sentence a summary shows for it.
#pragma once

#include <string>
#include <string_view>

#include "runtime/model/trace.h"

namespace tfprof {

// Reads one serialized TraceStats into `*stats`. The service writes one at the start and one at
// the end of a session, each with the counts so far: a later one replaces an earlier one's.
// False when the bytes are no message.
bool ReadPerfettoTraceStats(std::string_view bytes, TraceLosses::PerfettoStats *stats);

// Reads one serialized TracingServiceEvent: the data sources it names as slow to answer the last
// flush join `stats->slow_flush_sources` (once each). False when the bytes are no message.
bool ReadPerfettoServiceEvent(std::string_view bytes, TraceLosses::PerfettoStats *stats);

// For people: the nonzero loss counts of the session's buffers ("3 chunks overwritten before they
// were read (the buffer was full), 2 packet losses reported by trace writers"), else "none
// reported", then the failed final flush and the data sources slow to flush, then in brackets
// what the service discarded over all its sessions, when anything.
// "" when the trace held no TraceStats.
std::string DescribePerfettoLosses(const TraceLosses::PerfettoStats &stats);

}  // namespace tfprof
