#include "runtime/formats/tensorflow/node_stats_encoder.h"

#include <cstring>

#include "runtime/common/proto_wire.h"

namespace tfprof {

namespace {

// NodeExecStats' field numbers (step_stats.proto).
constexpr uint32_t kNodeName = 1;
constexpr uint32_t kAllStartMicros = 2;
constexpr uint32_t kOpEndRelMicros = 4;
constexpr uint32_t kAllEndRelMicros = 5;
constexpr uint32_t kTimelineLabel = 8;
constexpr uint32_t kScheduledMicros = 9;
constexpr uint32_t kThreadId = 10;
constexpr uint32_t kAllStartNanos = 13;
constexpr uint32_t kOpEndRelNanos = 15;
constexpr uint32_t kAllEndRelNanos = 16;
constexpr uint32_t kScheduledNanos = 17;

// proto3 leaves a scalar field out when it is zero, and an empty string.
char *Varint(uint32_t field, uint64_t value, char *at) {
  if (value == 0) return at;
  at = EncodeVarint(uint64_t{field} << 3, at);
  return EncodeVarint(value, at);
}

size_t TextSize(std::string_view text) {
  return text.empty() ? 0 : 1 + VarintSize(text.size()) + text.size();  // fields 1 and 8: 1-byte tags
}

char *Text(uint32_t field, std::string_view text, char *at) {
  if (text.empty()) return at;
  at = EncodeVarint(uint64_t{field} << 3 | 2, at);
  at = EncodeVarint(text.size(), at);
  std::memcpy(at, text.data(), text.size());
  return at + text.size();
}

// The varint fields, in two runs: those before the label (fields 2-5) and after it (9-17).
// int64 fields are varints of their two's complement: a negative one takes 10 bytes.
struct NumberRuns {
  char before[3 * 11];  // one-byte tags
  char after[6 * 12];
  size_t before_size = 0;
  size_t after_size = 0;

  explicit NumberRuns(const TimedNode &node) {
    const int64_t begin_us = FloorDiv(node.wall_begin_ns, 1000);
    const int64_t duration_us = FloorDiv(node.wall_end_ns, 1000) - begin_us;
    const auto duration_ns = static_cast<uint64_t>(node.wall_end_ns - node.wall_begin_ns);
    char *at = Varint(kAllStartMicros, static_cast<uint64_t>(begin_us), before);
    // op_start_rel_micros (3) is always 0.
    at = Varint(kOpEndRelMicros, static_cast<uint64_t>(duration_us), at);
    at = Varint(kAllEndRelMicros, static_cast<uint64_t>(duration_us), at);
    before_size = static_cast<size_t>(at - before);
    at = after;
    if (node.wall_scheduled_ns) {
      at = Varint(kScheduledMicros, static_cast<uint64_t>(FloorDiv(*node.wall_scheduled_ns, 1000)),
                  at);
    }
    at = Varint(kThreadId, node.thread_id, at);
    at = Varint(kAllStartNanos, static_cast<uint64_t>(node.wall_begin_ns), at);
    // op_start_rel_nanos (14) is always 0.
    at = Varint(kOpEndRelNanos, duration_ns, at);
    at = Varint(kAllEndRelNanos, duration_ns, at);
    if (node.wall_scheduled_ns) {
      at = Varint(kScheduledNanos, static_cast<uint64_t>(*node.wall_scheduled_ns), at);
    }
    after_size = static_cast<size_t>(at - after);
  }
};

// Writes the node's `size` bytes at the end of `out`, after `head` (its field's tag and length).
void Write(const TimedNode &node, const NumberRuns &numbers, size_t size, std::string_view head,
           std::string &out) {
  const size_t start = out.size();
  out.resize(start + head.size() + size);
  char *at = out.data() + start;
  if (!head.empty()) std::memcpy(at, head.data(), head.size());  // an empty view's data is null
  at = Text(kNodeName, node.node_name, at + head.size());
  std::memcpy(at, numbers.before, numbers.before_size);
  at = Text(kTimelineLabel, node.label, at + numbers.before_size);
  std::memcpy(at, numbers.after, numbers.after_size);
}

}  // namespace

void AppendNodeExecStats(const TimedNode &node, std::string &out) {
  const NumberRuns numbers(node);
  const size_t size = TextSize(node.node_name) + numbers.before_size + TextSize(node.label) +
                      numbers.after_size;
  Write(node, numbers, size, {}, out);
}

void AppendNodeExecStatsField(uint32_t field, const TimedNode &node, std::string &out) {
  const NumberRuns numbers(node);
  const size_t size = TextSize(node.node_name) + numbers.before_size + TextSize(node.label) +
                      numbers.after_size;
  char head[20];
  char *end = EncodeVarint(uint64_t{field} << 3 | 2, head);
  end = EncodeVarint(size, end);
  Write(node, numbers, size, std::string_view(head, static_cast<size_t>(end - head)), out);
}

}  // namespace tfprof
