// Field numbers and enum values of Perfetto's trace protos (runtime/formats/proto/tfprof/perfetto/
// perfetto_trace.proto has the messages), for the Perfetto writer and reader, which encode and scan
// the hot packets by hand.
#pragma once

#include <cstdint>

namespace tfprof::perfetto_fields {

constexpr uint32_t kTracePacket = 1;  // Trace.packet

namespace packet {  // TracePacket
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kSequenceId = 10;  // trusted_packet_sequence_id
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kTraceStats = 35;  // the tracing service's TraceStats
// A zlib stream of a serialized Trace: a run of packets, read as if they stood in its place.
constexpr uint32_t kCompressedPackets = 50;
constexpr uint32_t kServiceEvent = 69;  // TracingServiceEvent
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kIncrementalStateCleared = 41;
constexpr uint32_t kPreviousPacketDropped = 42;
constexpr uint32_t kTimestampClockId = 58;
constexpr uint32_t kDefaults = 59;  // trace_packet_defaults
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kTrustedPid = 79;
constexpr uint32_t kFirstPacketOnSequence = 87;
// sequence_flags bits.
constexpr uint32_t kSeqIncrementalStateCleared = 1;
constexpr uint32_t kSeqNeedsIncrementalState = 2;
}  // namespace packet

namespace event {  // TrackEvent
constexpr uint32_t kTimestampDeltaUs = 1;
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kTimestampAbsoluteUs = 16;
constexpr uint32_t kCategories = 22;
constexpr uint32_t kName = 23;
constexpr uint32_t kCounterValue = 30;
constexpr uint32_t kFlowIdsOld = 36;
constexpr uint32_t kTerminatingFlowIdsOld = 42;
constexpr uint32_t kDoubleCounterValue = 44;
constexpr uint32_t kFlowIds = 47;
constexpr uint32_t kTerminatingFlowIds = 48;
// TrackEvent.Type.
constexpr uint8_t kSliceBegin = 1;
constexpr uint8_t kSliceEnd = 2;
constexpr uint8_t kInstant = 3;
constexpr uint8_t kCounter = 4;
}  // namespace event

namespace annotation {  // DebugAnnotation
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kUintValue = 3;
constexpr uint32_t kIntValue = 4;
constexpr uint32_t kDoubleValue = 5;
constexpr uint32_t kStringValue = 6;
constexpr uint32_t kPointerValue = 7;
constexpr uint32_t kLegacyJsonValue = 9;
constexpr uint32_t kName = 10;
constexpr uint32_t kDictEntries = 11;
constexpr uint32_t kArrayValues = 12;
constexpr uint32_t kStringValueIid = 17;
}  // namespace annotation

namespace interned {  // InternedData; each entry is {iid = 1, name or str = 2}
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kAnnotationNames = 3;
constexpr uint32_t kAnnotationStrings = 29;
}  // namespace interned

namespace track {  // TrackDescriptor
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
constexpr uint32_t kStaticName = 10;
constexpr uint32_t kSiblingOrderRank = 12;
}  // namespace track

// ClockSnapshot.Clock.BuiltinClocks; 64-127 are clocks of one packet sequence.
constexpr uint32_t kRealTime = 1;
constexpr uint32_t kBootTime = 6;
constexpr uint32_t kFirstSequenceClock = 64;

}  // namespace tfprof::perfetto_fields
