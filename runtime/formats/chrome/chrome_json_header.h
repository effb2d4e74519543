// What a Chrome trace JSON says about its recording outside "traceEvents": tfprof's "tfprof"
// header and losses, and the top-level keys Kineto writes ("distributedInfo",
// "deviceProperties", "baseTimeNanoseconds"). The keys are runtime/model/trace_info_fields.h's,
// which ChromeJsonWriter::Tail writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/json_scanner.h"
#include "runtime/model/trace.h"
#include "runtime/model/trace_info_fields.h"

namespace tfprof {

struct ChromeJsonHeader {
  bool tfprof_seen = false;   // the "tfprof" object: tfprof wrote the file
  bool pytorch_seen = false;  // keys only Kineto writes (or its ProfilerStep# spans)
  RecordingInfo recording;    // from the "tfprof" object, and the top-level losses and Kineto keys
  uint64_t unreported_inputs = 0;       // as read (RecordingInfo's is 32 bits)
  std::optional<int64_t> base_time_ns;  // Kineto: its ts count from this Unix time
  // The "tfprof" object's "flows_as_read": the flows and args are another producer's, kept by a
  // conversion (Trace::flows_as_read), not tfprof's own.
  bool flows_as_read = false;
};

// The "tfprof" object's key for ChromeJsonHeader::flows_as_read.
inline constexpr std::string_view kFlowsAsReadKey = "flows_as_read";

// The top-level member `key` (not "traceEvents"), whose value `p` is on, into `*header`; keys it
// does not know are skipped. A member scanned again from its start after a refill replaces what
// it set: values are assigned, never accumulated.
Scan ReadChromeHeaderMember(JsonScanner &json, std::string_view key, const char *&p,
                            const char *end, ChromeJsonHeader *header);

// What `header` states of the recording into `*trace` (ApplyRecordingInfo): tfprof's header when
// it was seen, the rank, the losses when stated, and the devices. (The producer, the wall-clock offset of other
// writers and the recording process's name depend on the events: the reader's.)
void ApplyChromeHeader(const ChromeJsonHeader &header, Trace *trace);

}  // namespace tfprof
