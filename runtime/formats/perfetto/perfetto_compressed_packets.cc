#include "runtime/formats/perfetto/perfetto_compressed_packets.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/common/proto_wire.h"
#include "runtime/formats/perfetto/perfetto_fields.h"

namespace tfprof {

namespace {

z_stream *Stream(void *stream) { return static_cast<z_stream *>(stream); }

std::string TooLarge(size_t max_bytes) {
  return max_bytes % (size_t{1} << 20) == 0
             ? absl::StrCat("it inflates to more than ", max_bytes >> 20, " MiB")
             : absl::StrCat("it inflates to more than ", max_bytes, " bytes");
}

}  // namespace

PacketDeflater::PacketDeflater(int level) {
  auto *stream = new z_stream{};
  ready_ = deflateInit(stream, std::clamp(level, 1, 9)) == Z_OK;
  stream_ = stream;
}

PacketDeflater::~PacketDeflater() {
  if (ready_) deflateEnd(Stream(stream_));
  delete Stream(stream_);
}

void PacketDeflater::AppendBatch(std::string_view packets, std::string &out) {
  if (!ready_) {
    out.append(packets);  // out of memory for zlib's tables: the packets stay readable, plain
    return;
  }
  z_stream *stream = Stream(stream_);
  // A batch is far below 4 GB (the writer's are ~128 KiB): one deflate() call takes it whole.
  const uLong bound = deflateBound(stream, static_cast<uLong>(packets.size()));
  if (deflated_.size() < bound) deflated_.resize(bound);
  deflateReset(stream);
  stream->next_in = reinterpret_cast<Bytef *>(const_cast<char *>(packets.data()));
  stream->avail_in = static_cast<uInt>(packets.size());
  stream->next_out = reinterpret_cast<Bytef *>(deflated_.data());
  stream->avail_out = static_cast<uInt>(deflated_.size());
  if (deflate(stream, Z_FINISH) != Z_STREAM_END) {
    out.append(packets);  // cannot happen with deflateBound's room; the packets stay readable
    return;
  }
  const std::string_view deflated(deflated_.data(), deflated_.size() - stream->avail_out);
  std::string body;
  AppendLengthDelimited(perfetto_fields::packet::kCompressedPackets, deflated, body);
  AppendLengthDelimited(perfetto_fields::kTracePacket, body, out);
}

bool InflatePackets(std::string_view compressed, size_t max_bytes, std::string *packets,
                    std::string *problem) {
  packets->clear();
  if (compressed.size() > UINT_MAX) {
    *problem = "it is larger than 4 GB";
    return false;
  }
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) {
    *problem = "zlib could not start (out of memory)";
    return false;
  }
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  // Grown as the output needs, up to max_bytes (+1, to tell "exactly the cap" from "past it").
  size_t size = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (size == packets->size()) {
      if (packets->size() > max_bytes) {
        inflateEnd(&stream);
        *problem = TooLarge(max_bytes);
        return false;
      }
      const size_t grown = std::max<size_t>(packets->size() * 2, compressed.size() * 4 + 4096);
      packets->resize(std::min(grown, max_bytes + 1));
    }
    stream.next_out = reinterpret_cast<Bytef *>(packets->data() + size);
    stream.avail_out = static_cast<uInt>(std::min<size_t>(packets->size() - size, UINT_MAX));
    const uInt room = stream.avail_out;
    status = inflate(&stream, Z_NO_FLUSH);
    size += room - stream.avail_out;
    if (status == Z_STREAM_END || status == Z_OK) continue;
    if (status == Z_BUF_ERROR && stream.avail_in > 0 && stream.avail_out == 0) continue;
    if (status == Z_BUF_ERROR) {
      *problem = "its zlib stream ends early";
    } else if (status == Z_NEED_DICT) {
      *problem = "its zlib stream needs a preset dictionary";
    } else if (status == Z_MEM_ERROR) {
      *problem = "zlib ran out of memory";
    } else {
      *problem = absl::StrCat("its zlib stream is corrupt (",
                              stream.msg != nullptr ? stream.msg : "no reason given", ")");
    }
    inflateEnd(&stream);
    return false;
  }
  inflateEnd(&stream);
  if (size > max_bytes) {
    *problem = TooLarge(max_bytes);
    return false;
  }
  packets->resize(size);
  return true;
}

}  // namespace tfprof
