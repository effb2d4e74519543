// The Perfetto reader's packet decoder (FieldsByNumber / PacketFields): one pass that keeps a
// TracePacket's fields by number. Packets are encoded by hand with proto_wire.h's writers, so
// each case controls the exact bytes (repeats, wrong wire types, unknown fields, cuts).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/perfetto/perfetto_fields.h"
#include "runtime/formats/perfetto/perfetto_packet_decoder.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"

namespace {

namespace packet = tfprof::perfetto_fields::packet;
using tfprof::AppendLengthDelimited;
using tfprof::AppendVarintField;
using tfprof::PacketField;
using tfprof::PacketFields;

TEST_CASE("perfetto packet decoder: fields by number") {
  std::string bytes;
  AppendVarintField(packet::kTimestamp, 123456789, bytes);
  AppendVarintField(packet::kSequenceId, 7, bytes);
  AppendLengthDelimited(packet::kTrackEvent, "event bytes", bytes);
  AppendVarintField(packet::kTrustedPid, 4242, bytes);
  AppendLengthDelimited(packet::kInternedData, "", bytes);  // present, though empty

  PacketFields fields;
  CHECK(fields.Decode(bytes) == bytes.size());
  CHECK(fields.Has(PacketField::kTimestamp));
  CHECK(fields.Varint(PacketField::kTimestamp) == 123456789);
  CHECK(fields.Varint(PacketField::kSequenceId) == 7);
  CHECK(fields.Varint(PacketField::kTrustedPid) == 4242);
  CHECK(fields.Bytes(PacketField::kTrackEvent) == "event bytes");
  CHECK(fields.Has(PacketField::kInternedData));
  CHECK(fields.Bytes(PacketField::kInternedData).empty());
  // Absent fields read as not there, 0 and empty.
  CHECK_FALSE(fields.Has(PacketField::kTimestampClockId));
  CHECK(fields.Varint(PacketField::kTimestampClockId) == 0);
  CHECK_FALSE(fields.Has(PacketField::kClockSnapshot));
  CHECK(fields.Bytes(PacketField::kClockSnapshot).empty());
}

TEST_CASE("perfetto packet decoder: agrees with protobuf on a generated packet") {
  tfprof::perfetto::TracePacket message;
  message.set_timestamp(5000);
  message.set_timestamp_clock_id(64);
  message.set_trusted_packet_sequence_id(3);
  message.set_sequence_flags(2);
  message.set_incremental_state_cleared(true);
  message.mutable_track_event()->set_name("slice");
  message.mutable_track_descriptor()->set_uuid(99);
  const std::string bytes = message.SerializeAsString();

  PacketFields fields;
  REQUIRE(fields.Decode(bytes) == bytes.size());
  CHECK(fields.Varint(PacketField::kTimestamp) == 5000);
  CHECK(fields.Varint(PacketField::kTimestampClockId) == 64);
  CHECK(fields.Varint(PacketField::kSequenceId) == 3);
  CHECK(fields.Varint(PacketField::kSequenceFlags) == 2);
  CHECK(fields.Varint(PacketField::kIncrementalStateCleared) == 1);
  CHECK(fields.Bytes(PacketField::kTrackEvent) == message.track_event().SerializeAsString());
  CHECK(fields.Bytes(PacketField::kTrackDescriptor) ==
        message.track_descriptor().SerializeAsString());
  CHECK_FALSE(fields.Has(PacketField::kPreviousPacketDropped));
}

TEST_CASE("perfetto packet decoder: a repeated field keeps its last value") {
  std::string bytes;
  AppendVarintField(packet::kTimestamp, 1, bytes);
  AppendLengthDelimited(packet::kTrackEvent, "first", bytes);
  AppendVarintField(packet::kTimestamp, 2, bytes);
  AppendLengthDelimited(packet::kTrackEvent, "second", bytes);

  PacketFields fields;
  CHECK(fields.Decode(bytes) == bytes.size());
  CHECK(fields.Varint(PacketField::kTimestamp) == 2);
  CHECK(fields.Bytes(PacketField::kTrackEvent) == "second");
}

TEST_CASE("perfetto packet decoder: unknown fields and wrong wire types are skipped") {
  std::string bytes;
  AppendVarintField(3, 1000, bytes);                       // trusted_uid: not read
  AppendLengthDelimited(33, "a trace config", bytes);      // trace_config: not read
  AppendVarintField(500, 1, bytes);                        // above every number the table has
  AppendVarintField(packet::kSequenceId, 9, bytes);
  AppendLengthDelimited(packet::kTimestamp, "xx", bytes);  // a timestamp must be a varint
  AppendVarintField(packet::kTrackEvent, 5, bytes);        // a track event must be bytes
  bytes.append("\x0d\x01\x02\x03\x04", 5);                 // field 1, fixed32: not read

  PacketFields fields;
  CHECK(fields.Decode(bytes) == bytes.size());
  CHECK(fields.Varint(PacketField::kSequenceId) == 9);
  CHECK_FALSE(fields.Has(PacketField::kTimestamp));
  CHECK_FALSE(fields.Has(PacketField::kTrackEvent));
  CHECK_FALSE(fields.Has(PacketField::kTrustedPid));
}

TEST_CASE("perfetto packet decoder: a wrong wire type leaves an earlier value") {
  std::string bytes;
  AppendVarintField(packet::kTimestamp, 77, bytes);
  AppendLengthDelimited(packet::kTimestamp, "not a varint", bytes);

  PacketFields fields;
  CHECK(fields.Decode(bytes) == bytes.size());
  CHECK(fields.Varint(PacketField::kTimestamp) == 77);
}

TEST_CASE("perfetto packet decoder: truncated input stops at the damaged field") {
  std::string whole;
  AppendVarintField(packet::kSequenceId, 4, whole);
  const size_t damaged_at = whole.size();
  AppendLengthDelimited(packet::kTrackEvent, "0123456789", whole);

  for (size_t cut = damaged_at + 1; cut < whole.size(); ++cut) {
    CAPTURE(cut);
    const std::string_view bytes(whole.data(), cut);
    PacketFields fields;
    CHECK(fields.Decode(bytes) == damaged_at);  // where the cut field starts
    CHECK(fields.Varint(PacketField::kSequenceId) == 4);  // the fields before it are kept
    CHECK_FALSE(fields.Has(PacketField::kTrackEvent));
  }

  // A varint whose last byte is missing, and a field number of 0.
  PacketFields fields;
  CHECK(fields.Decode(std::string_view("\x08\x80", 2)) == 0);
  CHECK(fields.Decode(std::string_view("\x50\x01\x00\x01", 4)) == 2);
  CHECK(fields.Varint(PacketField::kSequenceId) == 1);
}

TEST_CASE("perfetto packet decoder: a reused decoder forgets the last packet") {
  std::string first;
  AppendVarintField(packet::kTimestamp, 10, first);
  AppendLengthDelimited(packet::kClockSnapshot, "snapshot", first);
  std::string second;
  AppendVarintField(packet::kSequenceId, 2, second);

  PacketFields fields;
  CHECK(fields.Decode(first) == first.size());
  CHECK(fields.Decode(second) == second.size());
  CHECK_FALSE(fields.Has(PacketField::kTimestamp));
  CHECK_FALSE(fields.Has(PacketField::kClockSnapshot));
  CHECK(fields.Varint(PacketField::kSequenceId) == 2);
  CHECK(fields.Decode("") == 0);
  CHECK_FALSE(fields.Has(PacketField::kSequenceId));
}

}  // namespace
