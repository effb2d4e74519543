// Perfetto's compressed packet batches (TracePacket.compressed_packets, field 50: a zlib stream of
// Trace.packet fields): tfprof's writer deflates its packets in batches and its reader inflates
// them, its own and other producers', reading the packets inside as if they stood in the batch's
// place (interning, tracks and clocks carry across batches); damaged batches are clear errors.
// InflateAhead inflates a file's batches on a thread of its own, ahead of the reader.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/perfetto/perfetto_compressed_packets.h"
#include "runtime/formats/perfetto/perfetto_inflate_ahead.h"
#include "runtime/formats/perfetto/perfetto_reader.h"
#include "runtime/formats/perfetto/perfetto_writer.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/model/trace.h"
#include "support/test_files.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"

namespace {

namespace pf = tfprof::perfetto;
using tfprof::LoadOptions;
using tfprof::LoadTrace;
using tfprof::PerfettoWriter;
using tfprof::Trace;
using tfprof_test::TempDir;

constexpr uint32_t kCompressedPackets = 50;

void WriteBytes(const std::string &path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// zlib's own one-shot compress (RFC 1950, as Perfetto's service writes), not tfprof's deflater.
std::string Zlib(std::string_view bytes) {
  uLongf size = compressBound(static_cast<uLong>(bytes.size()));
  std::string out(size, '\0');
  REQUIRE(compress2(reinterpret_cast<Bytef *>(out.data()), &size,
                    reinterpret_cast<const Bytef *>(bytes.data()),
                    static_cast<uLong>(bytes.size()), 6) == Z_OK);
  out.resize(size);
  return out;
}

// Trace.packet{compressed_packets: `payload`}, as bytes of a Trace.
std::string BatchPacket(std::string_view payload) {
  std::string body;
  tfprof::AppendLengthDelimited(kCompressedPackets, payload, body);
  std::string out;
  tfprof::AppendLengthDelimited(1, body, out);
  return out;
}

// The top-level packets of a Trace: how many, and how many of them are compressed batches.
struct TopLevel {
  int packets = 0;
  int batches = 0;
};
TopLevel CountTopLevel(std::string_view bytes) {
  TopLevel count;
  size_t at = 0;
  tfprof::WireField field;
  while (tfprof::NextWireField(bytes, &at, &field)) {
    if (field.number != 1) continue;
    ++count.packets;
    size_t inner = 0;
    tfprof::WireField packet_field;
    while (tfprof::NextWireField(field.payload, &inner, &packet_field)) {
      count.batches += packet_field.number == kCompressedPackets ? 1 : 0;
    }
  }
  return count;
}

// Where each compressed batch's payload lies in a Trace's bytes, as the reader finds it.
std::vector<std::string_view> BatchPayloads(std::string_view bytes) {
  std::vector<std::string_view> payloads;
  size_t at = 0;
  tfprof::WireField field;
  while (tfprof::NextWireField(bytes, &at, &field)) {
    size_t inner = 0;
    tfprof::WireField packet_field;
    while (tfprof::NextWireField(field.payload, &inner, &packet_field)) {
      if (packet_field.number == kCompressedPackets) payloads.push_back(packet_field.payload);
    }
  }
  return payloads;
}

// `trace` as one whole .pftrace, through the writer at `zlib_level`.
std::string Encode(const Trace &trace, int zlib_level) {
  PerfettoWriter writer(zlib_level);
  std::string out = writer.Begin(0);
  writer.Append(trace, true, trace.end_ns.value_or(0), out, {});
  out += writer.Finish(trace, trace.end_ns.value_or(0));
  return out;
}

std::string RealTrace(const std::string &relative) {
  // tests/data, from tests/runtime/formats/perfetto (CMake compiles sources by their full paths).
  return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path() /
          "data/real" / relative)
      .string();
}

void CheckSameEvents(const Trace &a, const Trace &b) {
  REQUIRE(a.activities.size() == b.activities.size());
  for (size_t i = 0; i < a.activities.size(); ++i) {
    const tfprof::Activity &x = a.activities[i];
    const tfprof::Activity &y = b.activities[i];
    CHECK(a.names.Get(x.name) == b.names.Get(y.name));
    CHECK(x.begin_ns == y.begin_ns);
    CHECK(x.end_ns == y.end_ns);
    CHECK(x.kind == y.kind);
    CHECK(x.bytes == y.bytes);
  }
  REQUIRE(a.counters.size() == b.counters.size());
  for (size_t i = 0; i < a.counters.size(); ++i) {
    CHECK(a.counters[i].ns == b.counters[i].ns);
    CHECK(a.counters[i].value == b.counters[i].value);
  }
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    CHECK(a.steps[i].number == b.steps[i].number);
    CHECK(a.steps[i].begin_ns == b.steps[i].begin_ns);
    CHECK(a.steps[i].end_ns == b.steps[i].end_ns);
  }
  CHECK(a.tracks.size() == b.tracks.size());
  CHECK(a.processes.size() == b.processes.size());
  CHECK(a.events_in_file == b.events_in_file);
}

TEST_CASE("compressed packets: a trace written in batches reads back as the same trace plain") {
  // A DLRM rank's Kineto trace: ~190 KB of packets, so more than one 128 KiB batch, and names,
  // categories and tracks interned or described in the first batch are used in the next.
  const absl::StatusOr<Trace> source = LoadTrace(
      RealTrace("param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz"), LoadOptions{});
  REQUIRE_MESSAGE(source.ok(), source.status().ToString());
  REQUIRE(source->activities.size() > 2000);
  const std::string plain = Encode(*source, PerfettoWriter::kUncompressed);
  const std::string compressed = Encode(*source, PerfettoWriter::kDefaultZlibLevel);
  REQUIRE(plain.size() > PerfettoWriter::kBatchBytes);
  const TopLevel plain_count = CountTopLevel(plain);
  const TopLevel compressed_count = CountTopLevel(compressed);
  CHECK(plain_count.batches == 0);
  // Begin()'s packet, the events' batches, the trace info's batch.
  CHECK(compressed_count.batches >= 3);
  CHECK(compressed_count.packets == compressed_count.batches + 1);
  CHECK(compressed.size() * 3 < plain.size());
  TempDir dir;
  WriteBytes(dir.File("plain.pftrace"), plain);
  WriteBytes(dir.File("compressed.pftrace"), compressed);
  const absl::StatusOr<Trace> from_plain = LoadTrace(dir.File("plain.pftrace"), LoadOptions{});
  const absl::StatusOr<Trace> from_compressed =
      LoadTrace(dir.File("compressed.pftrace"), LoadOptions{});
  REQUIRE_MESSAGE(from_plain.ok(), from_plain.status().ToString());
  REQUIRE_MESSAGE(from_compressed.ok(), from_compressed.status().ToString());
  CHECK(from_compressed->format == tfprof::Format::kPerfetto);
  CHECK(from_compressed->producer == tfprof::Producer::kTfprof);  // the trace info was read
  CHECK(from_compressed->activities.size() == source->activities.size());
  CheckSameEvents(*from_plain, *from_compressed);
  // What the trace info carries (devices) comes through its batch too.
  CHECK(from_compressed->devices.size() == from_plain->devices.size());
}

// Packets of a hand-built trace: a thread, names interned on sequence 1, and `spans` slices that
// use them.
struct Packets {
  std::vector<std::string> bytes;  // each a Trace.packet field
};
Packets HandBuilt(int spans) {
  Packets packets;
  const auto add = [&](const pf::TracePacket &packet) {
    pf::Trace one;
    *one.add_packet() = packet;
    packets.bytes.push_back(one.SerializeAsString());
  };
  pf::TracePacket packet;
  packet.set_trusted_packet_sequence_id(1);
  packet.set_sequence_flags(1);  // SEQ_INCREMENTAL_STATE_CLEARED
  pf::TrackDescriptor *track = packet.mutable_track_descriptor();
  track->set_uuid(7);
  track->mutable_thread()->set_pid(10);
  track->mutable_thread()->set_tid(11);
  track->mutable_thread()->set_thread_name("main");
  pf::EventName *name = packet.mutable_interned_data()->add_event_names();
  name->set_iid(1);
  name->set_name("forward");
  name = packet.mutable_interned_data()->add_event_names();
  name->set_iid(2);
  name->set_name("backward");
  add(packet);
  for (int index = 0; index < spans; ++index) {
    for (const bool begin : {true, false}) {
      packet.Clear();
      packet.set_trusted_packet_sequence_id(1);
      packet.set_sequence_flags(2);  // SEQ_NEEDS_INCREMENTAL_STATE
      packet.set_timestamp(static_cast<uint64_t>(1000 + index * 100 + (begin ? 0 : 40)));
      pf::TrackEvent *event = packet.mutable_track_event();
      event->set_type(begin ? pf::TrackEvent::TYPE_SLICE_BEGIN : pf::TrackEvent::TYPE_SLICE_END);
      event->set_track_uuid(7);
      if (begin) event->set_name_iid(index % 2 == 0 ? 1 : 2);
      add(packet);
    }
  }
  return packets;
}

std::string Join(const Packets &packets, size_t from, size_t to) {
  std::string out;
  for (size_t index = from; index < to; ++index) out += packets.bytes[index];
  return out;
}

TEST_CASE("compressed packets: batches split anywhere carry the sequence's interning across") {
  const Packets packets = HandBuilt(6);  // 1 + 12 packets
  TempDir dir;
  // Batches split at every place: [0, split) compressed, [split, split + 3) plain, the rest
  // compressed again. The names interned in the first packet serve every batch after it.
  for (size_t split = 1; split + 3 < packets.bytes.size(); ++split) {
    CAPTURE(split);
    const std::string bytes = BatchPacket(Zlib(Join(packets, 0, split))) +
                              Join(packets, split, split + 3) +
                              BatchPacket(Zlib(Join(packets, split + 3, packets.bytes.size())));
    WriteBytes(dir.File("split.pftrace"), bytes);
    const absl::StatusOr<Trace> trace = LoadTrace(dir.File("split.pftrace"), LoadOptions{});
    REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
    REQUIRE(trace->activities.size() == 6);
    for (size_t index = 0; index < 6; ++index) {
      const tfprof::Activity &span = trace->activities[index];
      CHECK(trace->names.Get(span.name) == (index % 2 == 0 ? "forward" : "backward"));
      CHECK(span.begin_ns == static_cast<int64_t>(1000 + index * 100));
      CHECK(span.end_ns == static_cast<int64_t>(1040 + index * 100));
    }
  }
  // A file that starts with a batch is still taken for a Perfetto trace.
  CHECK(tfprof::LooksLikePerfettoTrace(BatchPacket(Zlib(Join(packets, 0, 2)))));
}

TEST_CASE("compressed packets: damaged batches are errors that say where and what") {
  const Packets packets = HandBuilt(4);
  const std::string head = Join(packets, 0, 3);  // plain: the thread, a whole span
  const std::string deflated = Zlib(Join(packets, 3, packets.bytes.size()));
  TempDir dir;
  const std::string path = dir.File("damaged.pftrace");
  // Where a batch's payload starts in head + BatchPacket(payload): after the packet's tag and
  // length and the field's tag and length.
  const auto payload_at = [&](const std::string &payload) {
    return head.size() + BatchPacket(payload).size() - payload.size();
  };
  const auto load_error = [&](const std::string &bytes) {
    WriteBytes(path, bytes);
    const absl::StatusOr<Trace> trace = LoadTrace(path, LoadOptions{});
    REQUIRE_FALSE(trace.ok());
    CHECK(absl::IsDataLoss(trace.status()));
    LoadOptions salvage;
    salvage.salvage = true;
    const absl::StatusOr<Trace> kept = LoadTrace(path, salvage);
    REQUIRE(kept.ok());
    CHECK(kept->activities.size() >= 1);  // the span before the batch
    return std::string(trace.status().message());
  };
  {
    std::string corrupt = deflated;
    corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x55);
    corrupt[2] = static_cast<char>(0xff);  // the first deflate block's header: an invalid type
    const std::string message = load_error(head + BatchPacket(corrupt));
    CHECK(message.rfind(path + ": byte " + std::to_string(payload_at(corrupt)) +
                            ": compressed_packets: its zlib stream is corrupt (",
                        0) == 0);
  }
  {
    // The stream cut short inside a whole packet (the file is whole: damage, not a cut file).
    const std::string half = deflated.substr(0, deflated.size() / 2);
    const std::string message = load_error(head + BatchPacket(half));
    CHECK(message == path + ": byte " + std::to_string(payload_at(half)) +
                         ": compressed_packets: its zlib stream ends early");
  }
  {
    // Inflated packets that are damaged: the offset is into the inflated bytes.
    const std::string inner = Join(packets, 3, packets.bytes.size()) + std::string("\0\0", 2);
    const std::string deflated_inner = Zlib(inner);
    const std::string message = load_error(head + BatchPacket(deflated_inner));
    CHECK(message == path + ": byte " + std::to_string(payload_at(deflated_inner)) +
                         ": compressed_packets: inflated byte " + std::to_string(inner.size() - 2) +
                         ": corrupt bytes between the packets");
  }
  {
    // A batch inside a batch: Perfetto's service never writes one.
    const std::string message = load_error(head + BatchPacket(Zlib(BatchPacket(deflated))));
    CHECK(message.find(": compressed_packets: inflated byte ") != std::string::npos);
    CHECK(message.find("compressed_packets inside compressed_packets") != std::string::npos);
  }
  {
    // A few KB that inflate past the cap: refused, not held.
    const std::string bomb(tfprof::kMaxInflatedBatchBytes + 1, '\0');
    const std::string deflated_bomb = Zlib(bomb);
    CHECK(deflated_bomb.size() < 100'000);
    const std::string message = load_error(head + BatchPacket(deflated_bomb));
    CHECK(message == path + ": byte " + std::to_string(payload_at(deflated_bomb)) +
                         ": compressed_packets: it inflates to more than 64 MiB");
  }
}

TEST_CASE("compressed packets: InflatePackets takes exactly the cap, and not a byte more") {
  std::string packets;
  std::string problem;
  const std::string exact(4096, 'x');
  CHECK(tfprof::InflatePackets(Zlib(exact), 4096, &packets, &problem));
  CHECK(packets == exact);
  CHECK_FALSE(tfprof::InflatePackets(Zlib(exact + "y"), 4096, &packets, &problem));
  CHECK(problem == "it inflates to more than 4096 bytes");
  // Not zlib at all.
  CHECK_FALSE(tfprof::InflatePackets("not a zlib stream", 4096, &packets, &problem));
  CHECK(problem.rfind("its zlib stream is corrupt (", 0) == 0);
}

}  // namespace

TEST_CASE("compressed packets: InflateAhead hands over each batch inflated, in file order") {
  // Batches of distinct packets, a damaged one, a plain packet between; enough bytes that the
  // thread fills its allowance and waits for the taker.
  std::vector<std::string> contents;
  std::string file;
  for (int index = 0; index < 200; ++index) {
    std::string packets;
    for (int packet = 0; packet < 300; ++packet) {
      tfprof::AppendLengthDelimited(1, "batch " + std::to_string(index) + " packet " +
                                           std::to_string(packet) + std::string(200, 'x'),
                                    packets);
    }
    contents.push_back(packets);
    file += BatchPacket(index == 7 ? std::string("not zlib at all") : Zlib(packets));
    if (index == 3) file += std::string("\x0a\x03\x08\x01\x02", 5);  // a packet of no batch
  }
  const std::vector<std::string_view> payloads = BatchPayloads(file);
  REQUIRE(payloads.size() == 200);

  SUBCASE("every batch taken") {
    tfprof::InflateAhead ahead(file);
    std::string packets = "what the buffer held";
    for (size_t index = 0; index < payloads.size(); ++index) {
      CAPTURE(index);
      if (index == 7) {
        CHECK_FALSE(ahead.Take(payloads[index], &packets));  // damaged: the reader says why
        continue;
      }
      REQUIRE(ahead.Take(payloads[index], &packets));
      REQUIRE(packets == contents[index]);
    }
  }
  SUBCASE("asking for a later batch drops the ones before it; an earlier one is not there") {
    tfprof::InflateAhead ahead(file);
    std::string packets;
    REQUIRE(ahead.Take(payloads[150], &packets));
    CHECK(packets == contents[150]);
    CHECK_FALSE(ahead.Take(payloads[20], &packets));
    CHECK(packets == contents[150]);  // untouched when nothing is handed over
    REQUIRE(ahead.Take(payloads[151], &packets));
    CHECK(packets == contents[151]);
    const std::string elsewhere = Zlib("bytes outside the file");
    CHECK_FALSE(ahead.Take(elsewhere, &packets));
  }
  SUBCASE("stopped with batches left: it ends without waiting for a taker") {
    tfprof::InflateAhead ahead(file);
    std::string packets;
    REQUIRE(ahead.Take(payloads[0], &packets));
  }
  SUBCASE("a file damaged between packets: the batches before the damage, then none") {
    const std::string cut = file.substr(0, static_cast<size_t>(payloads[10].data() - file.data())) +
                            std::string("\xff\xff\xff", 3);
    std::vector<std::string_view> kept(payloads.begin(), payloads.begin() + 10);
    tfprof::InflateAhead ahead(cut);
    std::string packets;
    for (size_t index = 0; index < 10; ++index) {
      if (index == 7) continue;
      const std::string_view payload(cut.data() + (kept[index].data() - file.data()),
                                     kept[index].size());
      REQUIRE(ahead.Take(payload, &packets));
      CHECK(packets == contents[index]);
    }
    CHECK_FALSE(ahead.Take(std::string_view(cut.data() + cut.size() - 3, 3), &packets));
  }
}

TEST_CASE("compressed packets: InflateAhead walks at most 32 MiB ahead of the reader") {
  // 40 MiB of plain packets, then batches: the walk waits 32 MiB ahead of the reader's start
  // until the reader asks for the first batch, then goes on.
  std::string file;
  const std::string plain_packet = [] {
    std::string payload;
    tfprof::AppendLengthDelimited(11, std::string(4000, 'p'), payload);  // a track event
    std::string packet;
    tfprof::AppendLengthDelimited(1, payload, packet);
    return packet;
  }();
  while (file.size() < (size_t{40} << 20)) file += plain_packet;
  const size_t batches_at = file.size();
  std::vector<std::string> contents;
  for (int index = 0; index < 3; ++index) {
    std::string packets;
    tfprof::AppendLengthDelimited(1, "late batch " + std::to_string(index), packets);
    contents.push_back(packets);
    file += BatchPacket(Zlib(packets));
  }
  const std::vector<std::string_view> payloads = BatchPayloads(file);
  REQUIRE(payloads.size() == 3);
  {
    tfprof::InflateAhead ahead(file);
    std::string packets;
    for (size_t index = 0; index < 3; ++index) {
      REQUIRE(ahead.Take(payloads[index], &packets));
      CHECK(packets == contents[index]);
    }
  }
  // A file of plain packets only: the walk waits at 32 MiB, and ends when told to.
  const std::string plain_only = file.substr(0, batches_at);
  { tfprof::InflateAhead ahead(plain_only); }
}
