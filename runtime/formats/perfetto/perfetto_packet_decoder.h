// One pass over a message's fields that keeps them by number, after Perfetto's protozero
// TypedProtoDecoder (an array indexed by field number): the reader asks for the TracePacket fields
// it uses by name, instead of a switch with one case per field. Header-only: it runs once per
// packet, and inlined it costs what the hand-written switch did.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/perfetto/perfetto_fields.h"

namespace tfprof {

// A field a decoder keeps: its number and the wire type it must have (one of another wire type is
// skipped, as is every field no spec names).
struct WireFieldSpec {
  uint32_t number;
  int wire_type;
};

// The fields of one message named by `kSpecs` (an array of WireFieldSpec, indexed by `Slot`, an
// enum of the slots). A field that comes more than once keeps its last value, as protobuf's
// singular fields do.
template <typename Slot, const auto &kSpecs>
class FieldsByNumber {
 public:
  static constexpr size_t kSlots = std::size(kSpecs);
  static_assert(kSlots <= 32, "presence is one 32-bit mask");

  // Reads every field of `bytes`. Returns where reading stopped: bytes.size() when the message is
  // whole, else the offset of the first damaged field (the fields before it are kept).
  [[gnu::always_inline]] size_t Decode(std::string_view bytes) {
    present_ = 0;
    size_t at = 0;
    WireField field;
    while (NextWireField(bytes, &at, &field)) {
      if (field.number > kMaxNumber) continue;
      const uint8_t slot = kSlotOfNumber[field.number];
      if (slot == kNoSlot || kSpecs[slot].wire_type != field.wire_type) continue;
      present_ |= uint32_t{1} << slot;
      if (field.wire_type == 0) {
        varints_[slot] = field.varint;
      } else {
        payloads_[slot] = field.payload;
      }
    }
    return at;
  }

  bool Has(Slot slot) const { return (present_ >> static_cast<size_t>(slot) & 1) != 0; }
  // A varint field's value; 0 when the message has none.
  uint64_t Varint(Slot slot) const { return Has(slot) ? varints_[static_cast<size_t>(slot)] : 0; }
  // A length-delimited (or fixed-width) field's bytes; empty when the message has none.
  std::string_view Bytes(Slot slot) const {
    return Has(slot) ? payloads_[static_cast<size_t>(slot)] : std::string_view();
  }

 private:
  static constexpr uint8_t kNoSlot = 0xff;
  static constexpr uint32_t kMaxNumber = [] {
    uint32_t most = 0;
    for (const WireFieldSpec &spec : kSpecs) most = spec.number > most ? spec.number : most;
    return most;
  }();
  // Field number -> slot: the table the one pass looks each field up in.
  static constexpr std::array<uint8_t, kMaxNumber + 1> kSlotOfNumber = [] {
    std::array<uint8_t, kMaxNumber + 1> table{};
    table.fill(kNoSlot);
    for (size_t slot = 0; slot < kSlots; ++slot) {
      table[kSpecs[slot].number] = static_cast<uint8_t>(slot);
    }
    return table;
  }();

  uint32_t present_ = 0;
  // Only a present slot's value is read, so neither array is cleared between messages.
  uint64_t varints_[kSlots];
  std::string_view payloads_[kSlots];
};

// The TracePacket fields the Perfetto reader uses.
enum class PacketField : uint8_t {
  kTimestamp,
  kTimestampClockId,
  kSequenceId,
  kSequenceFlags,
  kIncrementalStateCleared,
  kPreviousPacketDropped,
  kTrustedPid,
  kTrackEvent,
  kInternedData,
  kTrackDescriptor,
  kClockSnapshot,
  kDefaults,
  kTraceStats,
  kServiceEvent,
  kCompressedPackets,
};

// Indexed by PacketField.
inline constexpr WireFieldSpec kPacketFieldSpecs[] = {
    {perfetto_fields::packet::kTimestamp, 0},
    {perfetto_fields::packet::kTimestampClockId, 0},
    {perfetto_fields::packet::kSequenceId, 0},
    {perfetto_fields::packet::kSequenceFlags, 0},
    {perfetto_fields::packet::kIncrementalStateCleared, 0},
    {perfetto_fields::packet::kPreviousPacketDropped, 0},
    {perfetto_fields::packet::kTrustedPid, 0},
    {perfetto_fields::packet::kTrackEvent, 2},
    {perfetto_fields::packet::kInternedData, 2},
    {perfetto_fields::packet::kTrackDescriptor, 2},
    {perfetto_fields::packet::kClockSnapshot, 2},
    {perfetto_fields::packet::kDefaults, 2},
    {perfetto_fields::packet::kTraceStats, 2},
    {perfetto_fields::packet::kServiceEvent, 2},
    {perfetto_fields::packet::kCompressedPackets, 2},
};

using PacketFields = FieldsByNumber<PacketField, kPacketFieldSpecs>;

}  // namespace tfprof
