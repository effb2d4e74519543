// Perfetto's compressed packet batches: TracePacket.compressed_packets (field 50) holds a zlib
// stream (RFC 1950, as Perfetto's service writes it with deflateInit) of a serialized Trace, i.e.
// Trace.packet fields one after another. Perfetto's trace processor inflates a batch and reads its
// packets as if they stood in its place: sequences, interning and incremental clocks carry across.
// The writer batches its packets this way; the reader inflates other producers' batches and ours.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tfprof {

// Deflates runs of serialized packets into compressed_packets packets, reusing one zlib stream.
class PacketDeflater {
 public:
  // `level`: zlib's 1 (fastest) to 9 (smallest).
  explicit PacketDeflater(int level);
  ~PacketDeflater();
  PacketDeflater(const PacketDeflater &) = delete;
  PacketDeflater &operator=(const PacketDeflater &) = delete;

  // Appends to `out` one Trace.packet field holding TracePacket{compressed_packets: deflated
  // `packets`} (`packets`: whole Trace.packet fields, not empty).
  void AppendBatch(std::string_view packets, std::string &out);

 private:
  void *stream_;  // z_stream, kept out of the header
  bool ready_ = false;  // deflateInit succeeded (it fails only out of memory)
  std::string deflated_;
};

// The most bytes one batch may inflate to: an error past it, not unbounded memory (a damaged or
// hostile file); tfprof writes 128 KiB batches.
inline constexpr size_t kMaxInflatedBatchBytes = size_t{64} << 20;

// Inflates `compressed` (a compressed_packets payload) into `*packets` (replaced; its capacity is
// reused). On damage returns false with `*problem` saying what is wrong ("its zlib stream is
// corrupt (invalid distance too far back)", "its zlib stream ends early", "it inflates to more
// than 64 MiB").
bool InflatePackets(std::string_view compressed, size_t max_bytes, std::string *packets,
                    std::string *problem);

}  // namespace tfprof
