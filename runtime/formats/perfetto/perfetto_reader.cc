#include "runtime/formats/perfetto/perfetto_reader.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/formats/chrome/chrome_categories.h"
#include "runtime/formats/cut_file.h"
#include "runtime/common/file_bytes.h"
#include "runtime/formats/perfetto/perfetto_fields.h"
#include "runtime/common/proto_wire.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/model/launch_links.h"
#include "runtime/common/string_view_bridge.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"

namespace tfprof {

namespace {

using namespace perfetto_fields;  // NOLINT: the field numbers, by message
constexpr uint32_t kTracePacketField = kTracePacket;

constexpr uint32_t kSequenceClocks = 64;  // 64..127
constexpr uint32_t kAbsent = UINT32_MAX;
constexpr int kMaxArgDepth = 32;  // nested dicts and arrays read of the trace info
constexpr int kMaxTrackDepth = 64;  // parent links followed (a hostile file may make a cycle)
// Rows that are no thread (streams, ranges, Steps): tids no thread has, as the JSON writer's.
constexpr int64_t kNamedRowTidBase = 1000000000;

uint64_t Fixed64(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t index = bytes.size(); index-- > 0;) {
    value = value << 8 | static_cast<unsigned char>(bytes[index]);
  }
  return value;
}

double DoubleOf(uint64_t bits) {
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint64_t BitsOf(double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// proto_wire.h's ReadWireVarint and NextWireField, inlined with a fast path for one-byte varints:
// the hot packets are a few dozen small fields each, and a call per field cost more than the rest.
[[gnu::always_inline]] inline bool FastVarint(std::string_view data, size_t *at, uint64_t *value) {
  if (*at < data.size() && static_cast<unsigned char>(data[*at]) < 0x80) {
    *value = static_cast<unsigned char>(data[(*at)++]);
    return true;
  }
  return ReadWireVarint(data, at, value);
}

[[gnu::always_inline]] inline bool NextField(std::string_view data, size_t *at, WireField *field) {
  if (*at >= data.size()) return false;
  const size_t start = *at;
  uint64_t tag = 0;
  if (!FastVarint(data, at, &tag) || (tag >> 3) == 0 || (tag >> 3) > 536870911) {
    *at = start;
    return false;
  }
  field->number = static_cast<uint32_t>(tag >> 3);
  field->wire_type = static_cast<int>(tag & 7);
  switch (field->wire_type) {
    case 0:
      if (FastVarint(data, at, &field->varint)) return true;
      break;
    case 1:
    case 5: {
      const size_t width = field->wire_type == 1 ? 8 : 4;
      if (data.size() - *at < width) break;
      field->payload = data.substr(*at, width);
      *at += width;
      return true;
    }
    case 2: {
      uint64_t length = 0;
      if (!FastVarint(data, at, &length) || length > data.size() - *at) break;
      field->payload = std::string_view(data.data() + *at, static_cast<size_t>(length));
      *at += static_cast<size_t>(length);
      return true;
    }
    default:
      break;
  }
  *at = start;
  return false;
}

// "step 12" -> 12; "ProfilerStep#3" with prefix "ProfilerStep#" -> 3.
bool NumberAfter(std::string_view text, std::string_view prefix, int64_t *number) {
  if (text.size() <= prefix.size() || text.substr(0, prefix.size()) != prefix) return false;
  const std::string_view digits = text.substr(prefix.size());
  if (digits.size() > 18) return false;
  int64_t value = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    value = value * 10 + (c - '0');
  }
  *number = value;
  return true;
}

// ---- interned ids ----------------------------------------------------------------------------------

// A sequence's iid -> value table: a vector while the ids are dense (writers count from 1), a hash
// map for the rest, so that a hostile iid costs no memory.
class IidTable {
 public:
  uint32_t Find(uint64_t iid) const {
    if (iid < dense_.size()) return dense_[iid];
    if (sparse_.empty()) return kAbsent;
    auto found = sparse_.find(iid);
    return found == sparse_.end() ? kAbsent : found->second;
  }

  void Set(uint64_t iid, uint32_t value) {
    ++entries_;
    if (iid >= dense_.size() && iid < 64 + 4 * entries_) {
      dense_.resize(static_cast<size_t>(iid) + 1, kAbsent);
      for (auto entry = sparse_.begin(); entry != sparse_.end();) {
        if (entry->first < dense_.size()) {
          dense_[entry->first] = entry->second;
          sparse_.erase(entry++);
        } else {
          ++entry;
        }
      }
    }
    if (iid < dense_.size()) {
      dense_[iid] = value;
    } else {
      sparse_[iid] = value;
    }
  }

  void Clear() {
    dense_.clear();
    sparse_.clear();
    entries_ = 0;
  }

 private:
  std::vector<uint32_t> dense_;
  absl::flat_hash_map<uint64_t, uint32_t> sparse_;
  uint64_t entries_ = 0;
};

// ---- debug annotations -----------------------------------------------------------------------------

// The annotations the reader understands: the args tfprof's writers (and the PyTorch profiler's)
// give, under the Chrome trace's names.
enum class Arg : uint8_t {
  kOther,
  kStep,
  kDevice,
  kStream,
  kContext,
  kCorrelation,
  kExternalId,
  kCbid,
  kRegisters,
  kStaticShared,
  kDynamicShared,
  kGrid,
  kBlock,
  kGraphId,
  kBytes,
  kKind,
  kCopyKind,
  kDstDevice,
  kValue,
  kThread,
  kEndThread,
  kOp,
  kIncomplete,
  kTfprof,
};

Arg ArgOf(std::string_view name) {
  static const auto *const table = new absl::flat_hash_map<std::string, Arg>{
      {"step", Arg::kStep},
      {"device", Arg::kDevice},
      {"stream", Arg::kStream},
      {"context", Arg::kContext},
      {"correlation", Arg::kCorrelation},
      {"External id", Arg::kExternalId},
      {"cbid", Arg::kCbid},
      {"registers per thread", Arg::kRegisters},
      {"static shared memory", Arg::kStaticShared},
      {"dynamic shared memory", Arg::kDynamicShared},
      {"grid", Arg::kGrid},
      {"block", Arg::kBlock},
      {"graph id", Arg::kGraphId},
      {"bytes", Arg::kBytes},
      {"kind", Arg::kKind},
      {"copy kind", Arg::kCopyKind},
      {"dst device", Arg::kDstDevice},
      {"value", Arg::kValue},
      {"thread", Arg::kThread},
      {"end thread", Arg::kEndThread},
      {"op", Arg::kOp},
      {"incomplete", Arg::kIncomplete},
      {"tfprof", Arg::kTfprof},
  };
  auto found = table->find(ToAbsl(name));
  return found == table->end() ? Arg::kOther : found->second;
}

// One annotation's value, as the hot path reads it (arrays: their first integers only). Only the
// member `type` names is set: one of these is made per annotation, and the rest is left alone.
struct ArgValue {
  enum Type : uint8_t { kNone, kInt, kUint, kDouble, kBool, kText } type = kNone;
  bool is_array = false;
  bool is_dict = false;
  int item_count = 0;  // > 3: more than a launch shape has
  int64_t i;
  uint64_t u;
  double d;
  std::string_view text;
  int32_t items[3];
};

// The value as an integer, when it is a number (or a bool).
bool AsInt(const ArgValue &value, int64_t *out) {
  switch (value.type) {
    case ArgValue::kInt:
      *out = value.i;
      return true;
    case ArgValue::kUint:
    case ArgValue::kBool:
      if (value.u > static_cast<uint64_t>(INT64_MAX)) return false;
      *out = static_cast<int64_t>(value.u);
      return true;
    case ArgValue::kDouble:
      if (!std::isfinite(value.d) || std::fabs(value.d) >= 9.2e18) return false;
      *out = static_cast<int64_t>(value.d);
      return true;
    default:
      return false;
  }
}

bool AsDouble(const ArgValue &value, double *out) {
  switch (value.type) {
    case ArgValue::kInt: *out = static_cast<double>(value.i); return true;
    case ArgValue::kUint:
    case ArgValue::kBool: *out = static_cast<double>(value.u); return true;
    case ArgValue::kDouble: *out = value.d; return true;
    default: return false;
  }
}

// What an event's annotations said.
struct EventArgs {
  GpuDetail detail;
  bool has_detail = false;
  int64_t step = 0;
  int64_t device = 0;
  int64_t stream = 0;
  int64_t copy_kind = 0;
  int64_t thread = 0;
  int64_t end_thread = 0;
  uint64_t bytes = 0;
  double value = 0;
  bool has_step = false;
  bool has_device = false;
  bool has_stream = false;
  bool has_copy_kind = false;
  bool has_thread = false;
  bool has_end_thread = false;
  bool has_value = false;
  bool incomplete = false;
  bool has_tfprof = false;
  std::string_view kind_text;
  std::string_view op;
  std::string_view tfprof;  // the "tfprof" annotation's bytes (the trace info's dict)

  // Back to no args: what an event without annotations reads (the values behind a false has_*
  // are never read, so they stay).
  void Clear() {
    if (has_detail) detail = GpuDetail();
    has_detail = has_step = has_device = has_stream = has_copy_kind = has_thread = false;
    has_end_thread = has_value = incomplete = has_tfprof = false;
    bytes = 0;
    kind_text = op = {};
  }
};

// A DebugAnnotation read whole (the trace info; never on the hot path).
struct ArgNode {
  std::string name;
  ArgValue::Type type = ArgValue::kNone;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string text;
  std::vector<ArgNode> entries;  // a dict's, or an array's items
  bool is_dict = false;
  bool is_array = false;

  const ArgNode *Find(std::string_view key) const {
    for (const ArgNode &entry : entries) {
      if (entry.name == key) return &entry;
    }
    return nullptr;
  }
  std::optional<int64_t> Int() const {
    ArgValue value;
    value.type = type;
    value.i = i;
    value.u = u;
    value.d = d;
    int64_t out = 0;
    if (AsInt(value, &out)) return out;
    return std::nullopt;
  }
  std::optional<uint64_t> Uint() const {
    if (type == ArgValue::kUint) return u;
    std::optional<int64_t> value = Int();
    if (value && *value >= 0) return static_cast<uint64_t>(*value);
    return std::nullopt;
  }
};

// ---- what the reader keeps ------------------------------------------------------------------------

// One track event waiting for its track's end of file, when begins are paired with ends.
// Activity::name of a place kept for an activity not made yet (Pending::slot).
constexpr uint32_t kHole = UINT32_MAX;

struct Pending {
  int64_t ns = 0;
  uint64_t aux = 0;  // copies and memsets: bytes; counters: the value's bits
  uint32_t name = 0;
  uint32_t detail = kNoDetail;  // Trace::gpu_details index; steps and ranges: extras_ index
  uint32_t category = 0;
  uint8_t type = 0;
  uint8_t flags = 0;  // kActivity* bits
  CopyKind copy = CopyKind::kNone;
  // A begin's place in Trace::activities, taken when it is paired: activities stay in the order
  // their spans began, as in the JSON (equal spans keep the outer first, which the analysis's
  // self times follow).
  uint32_t slot = UINT32_MAX;
};
static_assert(sizeof(Pending) == 40);

// What a step's or a range's begin (or a range's end) said beyond a span's.
struct Extra {
  int64_t step = 0;
  int64_t thread = 0;
  int64_t end_thread = 0;
  bool has_step = false;
  bool has_thread = false;
  bool has_end_thread = false;
};

// A step's span, placed on its process and marking thread once the tracks are all known.
struct PendingStep {
  int64_t number = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t thread = 0;
  uint32_t track = 0;  // tracks_ index
  bool has_thread = false;
  bool on_own_row = false;  // the PyTorch profiler's ProfilerStep#N: marked by its own row
  bool incomplete = false;
  uint64_t infos_before = 0;  // "tfprof trace info" packets read before its end
};

struct Category {
  std::string text;
  CategoryRole role;
  bool driver = false;
  bool pytorch = false;  // one the PyTorch profiler writes
  bool used = false;
  uint64_t unknown_events = 0;
};

// A track of the file (a TrackDescriptor's uuid, or one events name without describing it).
struct TrackInfo {
  uint64_t uuid = 0;
  uint64_t parent = 0;
  bool has_parent = false;
  bool described = false;
  bool is_process = false;
  bool is_thread = false;
  bool is_counter = false;
  bool has_pid = false;
  int64_t pid = 0;
  int64_t tid = 0;
  bool has_implicit_pid = false;
  int64_t implicit_pid = 0;  // the trusted pid of the sequence that first used it
  std::string name;
  std::string unit_name;
  std::optional<int64_t> sort_index;
  // GPU rows: the device and stream their work's annotations name.
  bool has_device = false;
  bool has_stream = false;
  int64_t device = 0;
  int64_t stream = 0;
  // Slices are paired as they come while the track's events are in time order: `open` holds the
  // begins not yet ended. From its first event out of order on, the track's events (and the
  // begins still open then) wait in `events`, to be sorted and paired at the end.
  std::vector<Pending> open;
  std::vector<Pending> events;
  bool buffered = false;
  uint32_t counter_name = kAbsent;  // a counter track's samples: name, series and row
  uint32_t counter_series = kAbsent;
  uint32_t counter_row = kNoTrack;
  int64_t last_ns = INT64_MIN;
  uint32_t row = kNoTrack;  // its Trace::tracks row, once resolved
};

struct ProcessInfo {
  std::string name;
  std::string labels;
  std::optional<int64_t> sort_index;
};

struct ThreadInfo {
  std::string name;
  std::optional<int64_t> sort_index;
};

// What a row of the model learned from the events placed on it.
struct RowState {
  bool gpu_work = false;
  bool sync = false;
  bool own_events = false;
  bool thread = false;  // a thread's row
  bool device_known = false;
  bool stream_known = false;
};

struct SequenceClock {
  bool incremental = false;
  bool offset_known = false;
  uint64_t multiplier = 1;
  uint64_t last_ns = 0;   // incremental: the last timestamp, in ns of this clock
  uint64_t offset = 0;    // trace clock = this clock + offset (wrapping)
};

// A packet sequence's state (trusted_packet_sequence_id).
struct SequenceState {
  IidTable names;       // -> Trace::names
  IidTable categories;  // -> categories_
  IidTable arg_names;   // -> arg_names_
  IidTable arg_strings; // -> strings_
  bool has_default_clock = false;
  uint32_t default_clock = 0;
  bool has_default_track = false;
  uint64_t default_track = 0;
  bool has_pid = false;
  int64_t pid = 0;
  bool valid = true;  // false from a lost packet to the next clearing of the incremental state
  std::array<SequenceClock, kSequenceClocks> clocks;

  void ClearIncremental() {
    names.Clear();
    categories.Clear();
    arg_names.Clear();
    arg_strings.Clear();
    has_default_clock = false;
    has_default_track = false;
    valid = true;
  }
};

// tfprof's "tfprof trace info" instant: what the JSON's "tfprof" header says.
struct TraceInfo {
  bool seen = false;
  std::optional<int64_t> pid;
  std::optional<int64_t> start_unix_ns;
  std::optional<int64_t> start_monotonic_ns;
  std::optional<int64_t> end_monotonic_ns;
  std::optional<int64_t> rank;
  std::optional<uint64_t> events_recorded;
  std::string hostname;
  std::string clock;
  std::string sources;
  std::vector<std::string> command_line;
  bool losses_stated = false;
  TraceLosses losses;
  GpuTracingStatus gpu;
  std::vector<DeviceProperties> devices;
  struct Group {
    int64_t pid;
    std::optional<uint32_t> group;
    std::optional<int64_t> rank;
  };
  std::vector<Group> groups;
};

// The fields of one TracePacket the reader uses.
struct PacketFields {
  uint64_t timestamp = 0;
  uint32_t clock_id = 0;
  uint32_t sequence = 0;
  uint32_t flags = 0;
  int64_t trusted_pid = 0;
  bool has_timestamp = false;
  bool has_clock_id = false;
  bool has_trusted_pid = false;
  bool cleared = false;
  bool dropped = false;
  bool has_track_event = false;
  bool has_interned = false;
  bool has_descriptor = false;
  bool has_snapshot = false;
  bool has_defaults = false;
  std::string_view track_event;
  std::string_view interned;
  std::string_view descriptor;
  std::string_view snapshot;
  std::string_view defaults;
};

// ---- the reader ------------------------------------------------------------------------------------

class PerfettoReader {
 public:
  PerfettoReader(uint64_t file_size, ProgressListener *progress, Trace *trace)
      : file_size_(file_size), progress_(progress), trace_(trace) {
    progress_what_ = absl::StrCat("reading ", trace_->path);
    // tfprof writes ~25 bytes an event (a begin and an end); untouched capacity costs no memory.
    trace_->activities.reserve(static_cast<size_t>(std::min<uint64_t>(file_size / 40, 50'000'000)));
    CategoryFor("");  // index 0: no category
  }

  absl::Status Read(std::string_view data) {
    absl::Status status = Parse(data);
    if (status.ok() && infos_read_ > 0 && !last_packet_was_info_) {
      // tfprof ends every trace, and each piece of a stream, with its trace info: a file of
      // whole packets after the last one is a stream cut between two packets of a piece.
      status = EndsEarly(data, data.size(), "the file ends after a packet that is not its last",
                         "between the packets of a piece");
    }
    if (status.ok() || absl::IsDataLoss(status)) Finish();
    if (std::optional<CutFacts> cut = FileEndsEarly(status); cut && infos_read_ > 0) {
      // tfprof's stream ends each piece with its trace info: the steps ended after the last one
      // read are the cut piece's, which may be partial; those before are whole.
      cut->partial_from_ns = INT64_MAX;
      for (const PendingStep &step : pending_steps_) {
        if (step.infos_before == infos_read_) {
          cut->partial_from_ns = std::min(*cut->partial_from_ns, step.begin_ns);
        }
      }
      status = MarkFileEndsEarly(status, *cut);
    }
    return status;
  }

 private:
  // ---- packets ----

  absl::Status Parse(std::string_view data) {
    size_t at = 0;
    uint64_t reported = 0;
    while (at < data.size()) {
      const size_t start = at;
      WireField field;
      if (!NextField(data, &at, &field)) return TopLevelDamage(data, start);
      if (field.number != kTracePacketField || field.wire_type != 2) continue;  // not a packet
      const auto payload_offset = static_cast<uint64_t>(field.payload.data() - data.data());
      last_packet_was_info_ = false;
      if (absl::Status status = Packet(field.payload, payload_offset); !status.ok()) return status;
      if (progress_ != nullptr && at - reported >= (size_t{4} << 20)) {
        reported = at;
        progress_->Update(progress_what_, at, file_size_);
      }
    }
    if (progress_ != nullptr) progress_->Update(progress_what_, at, file_size_);
    return absl::OkStatus();
  }

  // Why the field at `start` cannot be read: the file ends inside it, or it is no field.
  absl::Status TopLevelDamage(std::string_view data, size_t start) const {
    size_t at = start;
    uint64_t tag = 0;
    if (ReadWireVarint(data, &at, &tag) && (tag >> 3) != 0) {
      const auto wire_type = static_cast<int>(tag & 7);
      uint64_t length = 0;
      if (wire_type == 2 && (!ReadWireVarint(data, &at, &length) || length > data.size() - at)) {
        return EndsEarly(data, start, "the file ends inside a packet (truncated?)", "inside a packet");
      }
      if ((wire_type == 0 || wire_type == 1 || wire_type == 5) && data.size() - start < 10) {
        return EndsEarly(data, start, "the file ends inside a field (truncated?)", "inside a field");
      }
    } else if (data.size() - start < 10 && at == data.size()) {
      return EndsEarly(data, start, "the file ends inside a field (truncated?)", "inside a field");
    }
    return Damage(start, "not a protobuf field of a Perfetto trace (damaged?)");
  }

  // Damage at `start` that is the file (`data`) ending early: a cut, not damage.
  absl::Status EndsEarly(std::string_view data, size_t start, std::string_view problem,
                         std::string_view where) const {
    CutFacts cut;
    cut.file = trace_->path;
    cut.file_bytes = data.size();
    cut.problem = std::string(where);
    return MarkFileEndsEarly(Damage(start, problem), cut);
  }

  absl::Status Damage(uint64_t offset, std::string_view problem) const {
    return absl::DataLossError(absl::StrCat(trace_->path, ": byte ", offset, ": ", ToAbsl(problem)));
  }

  absl::Status Packet(std::string_view bytes, uint64_t offset) {
    PacketFields p;
    size_t at = 0;
    WireField field;
    while (NextField(bytes, &at, &field)) {
      switch (field.number) {
        case packet::kTimestamp:
          if (field.wire_type == 0) {
            p.timestamp = field.varint;
            p.has_timestamp = true;
          }
          break;
        case packet::kTimestampClockId:
          if (field.wire_type == 0) {
            p.clock_id = static_cast<uint32_t>(field.varint);
            p.has_clock_id = true;
          }
          break;
        case packet::kSequenceId:
          if (field.wire_type == 0) p.sequence = static_cast<uint32_t>(field.varint);
          break;
        case packet::kSequenceFlags:
          if (field.wire_type == 0) p.flags = static_cast<uint32_t>(field.varint);
          break;
        case packet::kIncrementalStateCleared:
          if (field.wire_type == 0) p.cleared = field.varint != 0;
          break;
        case packet::kPreviousPacketDropped:
          if (field.wire_type == 0) p.dropped = field.varint != 0;
          break;
        case packet::kTrustedPid:
          if (field.wire_type == 0) {
            p.trusted_pid = static_cast<int32_t>(field.varint);
            p.has_trusted_pid = true;
          }
          break;
        case packet::kTrackEvent:
          if (field.wire_type == 2) {
            p.track_event = field.payload;
            p.has_track_event = true;
          }
          break;
        case packet::kInternedData:
          if (field.wire_type == 2) {
            p.interned = field.payload;
            p.has_interned = true;
          }
          break;
        case packet::kTrackDescriptor:
          if (field.wire_type == 2) {
            p.descriptor = field.payload;
            p.has_descriptor = true;
          }
          break;
        case packet::kClockSnapshot:
          if (field.wire_type == 2) {
            p.snapshot = field.payload;
            p.has_snapshot = true;
          }
          break;
        case packet::kDefaults:
          if (field.wire_type == 2) {
            p.defaults = field.payload;
            p.has_defaults = true;
          }
          break;
        default:
          break;
      }
    }
    if (at < bytes.size()) return Damage(offset + at, "a damaged TracePacket");

    SequenceState &sequence = Sequence(p.sequence);
    if (p.has_trusted_pid) {
      sequence.has_pid = true;
      sequence.pid = p.trusted_pid;
    }
    if (p.dropped) sequence.valid = false;
    if (p.cleared || (p.flags & packet::kSeqIncrementalStateCleared) != 0) {
      sequence.ClearIncremental();
    }
    if ((p.flags & packet::kSeqNeedsIncrementalState) != 0 && !sequence.valid) {
      return absl::OkStatus();  // its names and tracks were in what was lost
    }
    if (p.has_defaults) {
      tfprof::perfetto::TracePacketDefaults defaults;
      if (!Parse(p.defaults, &defaults)) {
        return Damage(offset + Offset(bytes, p.defaults), "a damaged TracePacketDefaults");
      }
      sequence.has_default_clock = defaults.has_timestamp_clock_id();
      sequence.default_clock = defaults.timestamp_clock_id();
      sequence.has_default_track = defaults.track_event_defaults().has_track_uuid();
      sequence.default_track = defaults.track_event_defaults().track_uuid();
    }
    if (p.has_interned && !Interned(p.interned, sequence)) {
      return Damage(offset + Offset(bytes, p.interned), "damaged InternedData");
    }
    if (p.has_snapshot) {
      tfprof::perfetto::ClockSnapshot snapshot;
      if (!Parse(p.snapshot, &snapshot)) {
        return Damage(offset + Offset(bytes, p.snapshot), "a damaged ClockSnapshot");
      }
      Snapshot(snapshot, sequence);
    }
    if (p.has_descriptor) {
      tfprof::perfetto::TrackDescriptor descriptor;
      if (!Parse(p.descriptor, &descriptor)) {
        return Damage(offset + Offset(bytes, p.descriptor), "a damaged TrackDescriptor");
      }
      Describe(descriptor, sequence);
    }
    if (p.has_track_event) {
      int64_t ns = 0;
      if (p.has_timestamp) {
        uint32_t clock = p.has_clock_id ? p.clock_id
                         : sequence.has_default_clock ? sequence.default_clock
                                                      : 0;
        ns = ToTraceTime(sequence, clock, p.timestamp);
      }
      if (!TrackEvent(p.track_event, p.has_timestamp, ns, sequence)) {
        return Damage(offset + Offset(bytes, p.track_event) + event_damage_at_,
                      "a damaged TrackEvent");
      }
    }
    return absl::OkStatus();
  }

  static size_t Offset(std::string_view whole, std::string_view part) {
    return static_cast<size_t>(part.data() - whole.data());
  }

  template <typename Message>
  static bool Parse(std::string_view bytes, Message *message) {
    return bytes.size() <= static_cast<size_t>(INT_MAX) &&
           message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }

  SequenceState &Sequence(uint32_t id) {
    if (last_sequence_ != nullptr && last_sequence_id_ == id) return *last_sequence_;
    std::unique_ptr<SequenceState> &state = sequences_[id];
    if (state == nullptr) state = std::make_unique<SequenceState>();
    last_sequence_ = state.get();
    last_sequence_id_ = id;
    return *state;
  }

  // ---- interned data ----

  // One interned entry: its iid and its text (field 2 of EventName, EventCategory,
  // DebugAnnotationName and InternedString alike).
  static bool InternedEntry(std::string_view bytes, uint64_t *iid, std::string_view *text) {
    size_t at = 0;
    WireField field;
    *iid = 0;
    *text = {};
    while (NextField(bytes, &at, &field)) {
      if (field.number == 1 && field.wire_type == 0) *iid = field.varint;
      if (field.number == 2 && field.wire_type == 2) *text = field.payload;
    }
    return at == bytes.size();
  }

  bool Interned(std::string_view bytes, SequenceState &sequence) {
    size_t at = 0;
    WireField field;
    while (NextField(bytes, &at, &field)) {
      if (field.wire_type != 2) continue;
      uint64_t iid = 0;
      std::string_view text;
      switch (field.number) {
        case interned::kEventCategories:
          if (!InternedEntry(field.payload, &iid, &text)) return false;
          sequence.categories.Set(iid, CategoryFor(text));
          break;
        case interned::kEventNames:
          if (!InternedEntry(field.payload, &iid, &text)) return false;
          sequence.names.Set(iid, trace_->names.Intern(text));
          break;
        case interned::kAnnotationNames:
          if (!InternedEntry(field.payload, &iid, &text)) return false;
          sequence.arg_names.Set(iid, ArgNameFor(text));
          break;
        case interned::kAnnotationStrings:
          if (!InternedEntry(field.payload, &iid, &text)) return false;
          sequence.arg_strings.Set(iid, strings_.Intern(text));
          break;
        default:
          break;
      }
    }
    return at == bytes.size();
  }

  uint32_t CategoryFor(std::string_view text) {
    auto [entry, added] = category_index_.try_emplace(ToAbsl(text), 0);
    if (added) {
      entry->second = static_cast<uint32_t>(categories_.size());
      Category category;
      category.text.assign(text);
      category.role = RoleOfCategory(text);
      category.driver = IsDriverCategory(text);
      static constexpr std::string_view kPytorch[] = {
          "cpu_op", "kernel", "cuda_runtime", "cuda_driver", "gpu_memcpy", "gpu_memset",
          "python_function", "gpu_user_annotation", "user_annotation", "ac2g", "Trace",
          "cuda_profiler_range", "Operator", "Runtime", "Kernel", "Memcpy", "Memset"};
      category.pytorch = std::find(std::begin(kPytorch), std::end(kPytorch), text) != std::end(kPytorch);
      categories_.push_back(std::move(category));
    }
    return entry->second;
  }

  uint32_t ArgNameFor(std::string_view text) {
    const uint32_t index = arg_names_.Intern(text);
    if (index >= arg_keys_.size()) arg_keys_.resize(index + 1, Arg::kOther);
    arg_keys_[index] = ArgOf(text);
    return index;
  }

  // ---- clocks ----

  // `raw` on clock `clock` (0: already on the trace's clock) in ns on the trace's clock. Wrapping
  // arithmetic: a hostile file gets nonsense times, never undefined behaviour.
  int64_t ToTraceTime(SequenceState &sequence, uint32_t clock, uint64_t raw) {
    if (clock == 0 || clock == trace_clock_) {
      trace_clock_fixed_ = true;
      return static_cast<int64_t>(raw);
    }
    trace_clock_fixed_ = true;
    if (clock >= kFirstSequenceClock && clock < kFirstSequenceClock + kSequenceClocks) {
      SequenceClock &state = sequence.clocks[clock - kFirstSequenceClock];
      uint64_t ns = raw * state.multiplier;
      if (state.incremental) {
        state.last_ns += ns;
        ns = state.last_ns;
      }
      return static_cast<int64_t>(state.offset_known ? ns + state.offset : ns);
    }
    auto found = global_offsets_.find(clock);
    return static_cast<int64_t>(found == global_offsets_.end() ? raw : raw + found->second);
  }

  void Snapshot(const tfprof::perfetto::ClockSnapshot &snapshot, SequenceState &sequence) {
    if (snapshot.has_primary_trace_clock() && !trace_clock_fixed_ &&
        snapshot.primary_trace_clock() != 0) {
      trace_clock_ = snapshot.primary_trace_clock();
    }
    trace_clock_fixed_ = true;
    // The trace clock's time at the snapshot, from the trace clock itself or a clock whose
    // offset an earlier snapshot gave.
    std::optional<uint64_t> anchor;
    std::optional<uint64_t> realtime;
    for (const auto &clock : snapshot.clocks()) {
      const uint64_t multiplier = clock.unit_multiplier_ns() != 0 ? clock.unit_multiplier_ns() : 1;
      const uint64_t ns = clock.timestamp() * multiplier;
      const uint32_t id = clock.clock_id();
      if (id == kRealTime) realtime = ns;
      if (id >= kFirstSequenceClock && id < kFirstSequenceClock + kSequenceClocks) {
        SequenceClock &state = sequence.clocks[id - kFirstSequenceClock];
        state.incremental = clock.is_incremental();
        state.multiplier = multiplier;
        state.last_ns = ns;
        continue;
      }
      if (id == trace_clock_) {
        anchor = ns;
      } else if (!anchor) {
        if (auto found = global_offsets_.find(id); found != global_offsets_.end()) {
          anchor = ns + found->second;
        }
      }
    }
    if (!anchor) return;
    for (const auto &clock : snapshot.clocks()) {
      const uint64_t multiplier = clock.unit_multiplier_ns() != 0 ? clock.unit_multiplier_ns() : 1;
      const uint64_t ns = clock.timestamp() * multiplier;
      const uint32_t id = clock.clock_id();
      if (id >= kFirstSequenceClock && id < kFirstSequenceClock + kSequenceClocks) {
        SequenceClock &state = sequence.clocks[id - kFirstSequenceClock];
        state.offset = *anchor - ns;
        state.offset_known = true;
      } else if (id != trace_clock_) {
        global_offsets_[id] = *anchor - ns;
      }
    }
    if (realtime && !snapshot_wall_offset_) {
      snapshot_wall_offset_ = static_cast<int64_t>(*realtime - *anchor);
    }
  }

  // ---- tracks ----

  uint32_t TrackAt(uint64_t uuid, const SequenceState &sequence) {
    if (last_track_ != kAbsent && tracks_[last_track_].uuid == uuid) return last_track_;
    auto [entry, added] = track_index_.try_emplace(uuid, 0);
    if (added) {
      entry->second = static_cast<uint32_t>(tracks_.size());
      TrackInfo &track = tracks_.emplace_back();
      track.uuid = uuid;
      track.has_implicit_pid = sequence.has_pid;
      track.implicit_pid = sequence.pid;
    }
    last_track_ = entry->second;
    return entry->second;
  }

  void Describe(const tfprof::perfetto::TrackDescriptor &descriptor, const SequenceState &sequence) {
    TrackInfo &track = tracks_[TrackAt(descriptor.uuid(), sequence)];
    track.described = true;
    if (descriptor.has_parent_uuid()) {
      track.has_parent = true;
      track.parent = descriptor.parent_uuid();
    }
    if (descriptor.has_name()) {
      track.name = descriptor.name();
    } else if (descriptor.has_static_name()) {
      track.name = descriptor.static_name();
    }
    if (descriptor.has_sibling_order_rank()) track.sort_index = descriptor.sibling_order_rank();
    if (descriptor.has_process()) {
      const auto &process = descriptor.process();
      track.is_process = true;
      track.has_pid = true;
      track.pid = process.pid();
      ProcessInfo &info = process_infos_[track.pid];
      if (process.has_process_name()) info.name = process.process_name();
      if (process.process_labels_size() > 0) {
        info.labels.clear();
        for (const std::string &label : process.process_labels()) {
          if (!info.labels.empty()) info.labels += ", ";
          info.labels += label;
        }
      }
      if (process.has_legacy_sort_index()) info.sort_index = process.legacy_sort_index();
      if (track.name.empty()) track.name = info.name;
    }
    if (descriptor.has_thread()) {
      const auto &thread = descriptor.thread();
      track.is_thread = true;
      track.has_pid = thread.has_pid();
      track.pid = thread.pid();
      track.tid = thread.tid();
      if (thread.has_thread_name()) track.name = thread.thread_name();
      if (thread.has_legacy_sort_index() && !track.sort_index) {
        track.sort_index = thread.legacy_sort_index();
      }
      if (track.has_pid) {
        ThreadInfo &info = thread_infos_[{track.pid, track.tid}];
        info.name = track.name;
        if (track.sort_index) info.sort_index = track.sort_index;
      }
    }
    if (descriptor.has_counter()) {
      track.is_counter = true;
      track.unit_name = descriptor.counter().unit_name();
    }
  }

  // ---- track events ----

  // One annotation of the hot path: its name and value. False when its bytes are damaged.
  bool ScanArg(std::string_view bytes, const SequenceState &sequence, Arg *key, ArgValue *value) {
    size_t at = 0;
    WireField field;
    *key = Arg::kOther;
    while (NextField(bytes, &at, &field)) {
      switch (field.number) {
        case annotation::kNameIid:
          if (field.wire_type == 0) {
            const uint32_t name = sequence.arg_names.Find(field.varint);
            *key = name == kAbsent ? Arg::kOther : arg_keys_[name];
          }
          break;
        case annotation::kName:
          if (field.wire_type == 2) *key = ArgOf(field.payload);
          break;
        case annotation::kBoolValue:
        case annotation::kUintValue:
        case annotation::kPointerValue:
        case annotation::kIntValue:
        case annotation::kDoubleValue:
        case annotation::kStringValue:
        case annotation::kLegacyJsonValue:
        case annotation::kStringValueIid:
          ReadScalar(field, sequence, value);
          break;
        case annotation::kDictEntries:
          value->is_dict = true;
          break;
        case annotation::kArrayValues:
          if (field.wire_type == 2) {
            value->is_array = true;
            ArgValue item;
            int64_t number = 0;
            if (!ScanArgItem(field.payload, sequence, &item)) return false;
            if (value->item_count < 3 && AsInt(item, &number)) {
              value->items[value->item_count] =
                  static_cast<int32_t>(std::clamp<int64_t>(number, INT32_MIN, INT32_MAX));
            }
            ++value->item_count;
          }
          break;
        default:
          break;
      }
    }
    return at == bytes.size();
  }

  // An array item's number (nested arrays and dicts are not read on the hot path).
  bool ScanArgItem(std::string_view bytes, const SequenceState &sequence, ArgValue *value) const {
    size_t at = 0;
    WireField field;
    while (NextField(bytes, &at, &field)) ReadScalar(field, sequence, value);
    return at == bytes.size();
  }

  // A DebugAnnotation's value field (bool, int, uint, pointer, double, string, legacy JSON text
  // or interned string) into `value`; false (and `value` as it was) for any other field or a
  // wire type that does not fit. Text points into the file's bytes or the string table.
  bool ReadScalar(const WireField &field, const SequenceState &sequence, ArgValue *value) const {
    switch (field.number) {
      case annotation::kBoolValue:
        if (field.wire_type != 0) return false;
        value->type = ArgValue::kBool;
        value->u = field.varint != 0 ? 1 : 0;
        return true;
      case annotation::kUintValue:
      case annotation::kPointerValue:
        if (field.wire_type != 0) return false;
        value->type = ArgValue::kUint;
        value->u = field.varint;
        return true;
      case annotation::kIntValue:
        if (field.wire_type != 0) return false;
        value->type = ArgValue::kInt;
        value->i = static_cast<int64_t>(field.varint);
        return true;
      case annotation::kDoubleValue:
        if (field.wire_type != 1) return false;
        value->type = ArgValue::kDouble;
        value->d = DoubleOf(Fixed64(field.payload));
        return true;
      case annotation::kStringValue:
      case annotation::kLegacyJsonValue:
        if (field.wire_type != 2) return false;
        value->type = ArgValue::kText;
        value->text = field.payload;
        return true;
      case annotation::kStringValueIid: {
        if (field.wire_type != 0) return false;
        const uint32_t text = sequence.arg_strings.Find(field.varint);
        value->type = ArgValue::kText;
        value->text = text == kAbsent ? std::string_view() : strings_.Get(text);
        return true;
      }
      default:
        return false;
    }
  }

  // What an annotation means, as the Chrome reader reads the same arg.
  static void ApplyArg(Arg key, const ArgValue &value, std::string_view bytes, EventArgs *args) {
    int64_t number = 0;
    const bool numeric = AsInt(value, &number);
    GpuDetail &detail = args->detail;
    const auto detail_field = [&](auto *field, uint8_t bit) {
      if (!numeric) return;
      *field = static_cast<std::remove_pointer_t<decltype(field)>>(number);
      detail.fields |= bit;
      args->has_detail = true;
    };
    switch (key) {
      case Arg::kOther:
        break;
      case Arg::kStep:
        args->has_step = numeric;
        if (numeric) args->step = number;
        break;
      case Arg::kDevice:
        args->has_device = numeric;
        if (numeric) args->device = number;
        break;
      case Arg::kStream:
        args->has_stream = numeric;
        if (numeric) args->stream = number;
        break;
      case Arg::kCopyKind:
        args->has_copy_kind = numeric;
        if (numeric) args->copy_kind = number;
        break;
      case Arg::kKind:
        if (value.type == ArgValue::kText) {
          args->kind_text = value.text;
        } else if (numeric) {
          args->has_copy_kind = true;
          args->copy_kind = number;
        }
        break;
      case Arg::kBytes:
        if (value.type == ArgValue::kUint) {
          args->bytes = value.u;
        } else if (numeric && number >= 0) {
          args->bytes = static_cast<uint64_t>(number);
        }
        break;
      case Arg::kIncomplete:
        args->incomplete = numeric && number != 0;
        break;
      case Arg::kOp:
        if (value.type == ArgValue::kText) args->op = value.text;
        break;
      case Arg::kValue:
        args->has_value = AsDouble(value, &args->value);
        break;
      case Arg::kThread:
        detail_field(&detail.thread_id, 0);
        args->has_thread = numeric;
        if (numeric) args->thread = number;
        break;
      case Arg::kEndThread:
        args->has_end_thread = numeric;
        if (numeric) args->end_thread = number;
        break;
      case Arg::kCorrelation: detail_field(&detail.correlation, kGpuHasCorrelation); break;
      case Arg::kExternalId: detail_field(&detail.external_id, 0); break;
      case Arg::kContext: detail_field(&detail.context, kGpuHasContext); break;
      case Arg::kCbid: detail_field(&detail.callback_id, kGpuHasCallbackId); break;
      case Arg::kRegisters: detail_field(&detail.registers, 0); break;
      case Arg::kStaticShared: detail_field(&detail.static_shared, 0); break;
      case Arg::kDynamicShared: detail_field(&detail.dynamic_shared, 0); break;
      case Arg::kGraphId: detail_field(&detail.graph_id, 0); break;
      case Arg::kDstDevice: detail_field(&detail.peer_device, 0); break;
      case Arg::kGrid:
      case Arg::kBlock:
        if (value.is_array && value.item_count == 3) {
          std::copy(value.items, value.items + 3, key == Arg::kGrid ? detail.grid : detail.block);
          detail.fields |= kGpuHasLaunchShape;
          args->has_detail = true;
        }
        break;
      case Arg::kTfprof:
        if (value.is_dict) {
          args->tfprof = bytes;
          args->has_tfprof = true;
        }
        break;
    }
  }

  // A TrackEvent at `ns` (`timed`: the packet had a timestamp). False when its bytes are damaged
  // (event_damage_at_ then says where in them).
  bool TrackEvent(std::string_view bytes, bool timed, int64_t ns, SequenceState &sequence) {
    uint8_t type = 0;
    bool has_track = false;
    uint64_t track_uuid = 0;
    uint32_t category = kAbsent;
    uint32_t name = kAbsent;
    std::string_view inline_name;
    bool has_inline_name = false;
    bool has_counter = false;
    double counter = 0;
    uint64_t flows = 0;
    if (args_dirty_) {
      args_.Clear();
      args_dirty_ = false;
    }
    size_t at = 0;
    WireField field;
    while (NextField(bytes, &at, &field)) {
      switch (field.number) {
        case event::kType:
          if (field.wire_type == 0) type = field.varint <= 4 ? static_cast<uint8_t>(field.varint) : 0;
          break;
        case event::kTrackUuid:
          if (field.wire_type == 0) {
            has_track = true;
            track_uuid = field.varint;
          }
          break;
        case event::kCategoryIids:
          if (category != kAbsent) break;  // the first category decides
          if (field.wire_type == 0) {
            category = sequence.categories.Find(field.varint);
            if (category == kAbsent) category = 0;
          } else if (field.wire_type == 2) {  // packed
            size_t inner = 0;
            uint64_t iid = 0;
            if (ReadWireVarint(field.payload, &inner, &iid)) {
              category = sequence.categories.Find(iid);
              if (category == kAbsent) category = 0;
            }
          }
          break;
        case event::kCategories:
          if (field.wire_type == 2 && category == kAbsent) category = CategoryFor(field.payload);
          break;
        case event::kNameIid:
          if (field.wire_type == 0) name = sequence.names.Find(field.varint);
          break;
        case event::kName:
          if (field.wire_type == 2) {
            inline_name = field.payload;
            has_inline_name = true;
          }
          break;
        case event::kCounterValue:
          if (field.wire_type == 0) {
            has_counter = true;
            counter = static_cast<double>(static_cast<int64_t>(field.varint));
          }
          break;
        case event::kDoubleCounterValue:
          if (field.wire_type == 1) {
            has_counter = true;
            counter = DoubleOf(Fixed64(field.payload));
          }
          break;
        case event::kFlowIds:
        case event::kTerminatingFlowIds:
          flows += field.wire_type == 1 ? 1 : field.wire_type == 2 ? field.payload.size() / 8 : 0;
          break;
        case event::kFlowIdsOld:
        case event::kTerminatingFlowIdsOld:
          if (field.wire_type == 0) {
            ++flows;
          } else if (field.wire_type == 2) {
            for (char byte : field.payload) flows += (static_cast<unsigned char>(byte) & 0x80) == 0;
          }
          break;
        case event::kDebugAnnotations:
          if (field.wire_type == 2) {
            args_dirty_ = true;
            Arg key = Arg::kOther;
            ArgValue value;
            if (!ScanArg(field.payload, sequence, &key, &value)) {
              event_damage_at_ = Offset(bytes, field.payload);
              return false;
            }
            ApplyArg(key, value, field.payload, &args_);
          }
          break;
        case event::kTimestampAbsoluteUs:
          if (field.wire_type == 0 && !timed) {
            ns = static_cast<int64_t>(static_cast<uint64_t>(field.varint) * 1000);
          }
          break;
        case event::kTimestampDeltaUs:
        default:
          break;
      }
    }
    if (at < bytes.size()) {
      event_damage_at_ = at;
      return false;
    }
    trace_->events_in_file += (type == event::kSliceEnd ? 0 : 1) + flows;
    if (type == 0) return true;  // a legacy event without a type: counted, not kept
    if (!has_track) {
      has_track = sequence.has_default_track;
      track_uuid = sequence.default_track;
    }
    const uint32_t track_index = TrackAt(track_uuid, sequence);
    TrackInfo &track = tracks_[track_index];
    NoteTime(ns);
    Pending pending;
    pending.ns = ns;
    pending.type = type;
    if (type != event::kSliceEnd) {
      if (name == kAbsent) name = trace_->names.Intern(has_inline_name ? inline_name : "");
      pending.name = name;
    }
    switch (type) {
      case event::kSliceBegin:
        pending.category = category == kAbsent ? 0 : category;
        DescribeBegin(track, &pending);
        break;
      case event::kSliceEnd:
        if (args_.incomplete) pending.flags |= kActivityIncomplete;
        if (args_.has_thread || args_.has_end_thread) pending.detail = KeepExtra();
        break;
      case event::kInstant:
        if (args_.has_tfprof && trace_->names.Get(name) == "tfprof trace info") {
          --trace_->events_in_file;  // the trace's header, not an event of the recording
          ReadTraceInfo(args_.tfprof, sequence);
          ++infos_read_;
          last_packet_was_info_ = true;
          return true;
        }
        break;
      case event::kCounter:
        pending.aux = BitsOf(has_counter ? counter : 0.0);
        break;
      default:
        break;
    }
    if (track.buffered || ns < track.last_ns) {
      if (!track.buffered) {
        track.buffered = true;
        track.events = std::move(track.open);
        track.open.clear();
      }
      track.events.push_back(pending);
    } else {
      track.last_ns = ns;
      Pair(track_index, track.open, pending);
    }
    return true;
  }

  // One event of a track, in time order after those before it (`open`: the track's begins not
  // yet ended).
  void Pair(uint32_t track, std::vector<Pending> &open, const Pending &pending) {
    switch (pending.type) {
      case event::kSliceBegin:
        open.push_back(pending);
        if (open.back().slot == UINT32_MAX) {
          open.back().slot = static_cast<uint32_t>(trace_->activities.size());
          trace_->activities.emplace_back().name = kHole;
        }
        break;
      case event::kSliceEnd:
        if (open.empty()) break;  // an end whose begin is not in the file (as the Chrome reader)
        EmitSlice(track, open.back(), &pending, pending.ns);
        open.pop_back();
        break;
      case event::kInstant:
        EmitInstant(track, pending);
        break;
      case event::kCounter:
        EmitCounter(track, pending);
        break;
      default:
        break;
    }
  }

  uint32_t KeepExtra() {
    Extra extra;
    extra.step = args_.step;
    extra.has_step = args_.has_step;
    extra.thread = args_.thread;
    extra.has_thread = args_.has_thread;
    extra.end_thread = args_.end_thread;
    extra.has_end_thread = args_.has_end_thread;
    extras_.push_back(extra);
    return static_cast<uint32_t>(extras_.size() - 1);
  }

  // What a slice's begin says beyond its time and name, kept in `*pending` (as the Chrome reader
  // makes of the same args).
  void DescribeBegin(TrackInfo &track, Pending *pending) {
    Category &category = categories_[pending->category];
    category.used = true;
    if (category.role.role == Role::kUnknown) ++category.unknown_events;
    const ActivityKind kind = category.role.kind;
    if (args_.incomplete) pending->flags |= kActivityIncomplete;
    if (category.role.role == Role::kStep || kind == ActivityKind::kRange) {
      pending->detail = KeepExtra();
      return;
    }
    if (category.role.role != Role::kActivity) return;
    if (IsGpuWork(kind) || kind == ActivityKind::kGpuAnnotation || kind == ActivityKind::kSync) {
      if (args_.has_device && !track.has_device) {
        track.has_device = true;
        track.device = args_.device;
      }
      if (args_.has_stream && !track.has_stream) {
        track.has_stream = true;
        track.stream = args_.stream;
      }
    }
    if (kind == ActivityKind::kMemcpy) {
      pending->copy = CopyKindFromName(trace_->names.Get(pending->name));
      if (pending->copy == CopyKind::kNone) pending->copy = CopyKindFromName(args_.kind_text);
      if (pending->copy == CopyKind::kNone) {
        pending->copy = args_.has_copy_kind ? CopyKindFromCupti(args_.copy_kind) : CopyKind::kOther;
      }
    }
    if (kind == ActivityKind::kMemcpy || kind == ActivityKind::kMemset) pending->aux = args_.bytes;
    if (kind == ActivityKind::kRuntimeApi && category.driver) pending->flags |= kActivityDriverApi;
    if (!(IsGpuWork(kind) || kind == ActivityKind::kRuntimeApi || kind == ActivityKind::kSync ||
          kind == ActivityKind::kOverhead)) {
      return;
    }
    GpuDetail detail = args_.detail;
    bool any = args_.has_detail;
    if (!args_.op.empty()) {
      detail.op = trace_->names.Intern(args_.op);
      any = true;
    }
    if (kind == ActivityKind::kMemcpy) {
      detail.copy_direction = CopyDirectionFromText(args_.kind_text);
      any = any || detail.copy_direction != 0;
    }
    if (kind == ActivityKind::kMemset && args_.has_value) {
      detail.memset_value = static_cast<uint32_t>(static_cast<int64_t>(
          std::clamp(args_.value, -9.2e18, 9.2e18)));
      detail.fields |= kGpuHasMemsetValue;
      any = true;
    }
    if (!any) return;
    if (kind == ActivityKind::kSync && !args_.has_stream) detail.fields |= kGpuContextWide;
    pending->detail = static_cast<uint32_t>(trace_->gpu_details.size());
    if (trace_->gpu_details.empty()) {
      // GPU traces have a detail for most launches and GPU events (~100 bytes of the file each):
      // reserved from the file's size once, so the details are not moved as they grow (untouched
      // capacity costs no memory).
      trace_->gpu_details.reserve(
          static_cast<size_t>(std::min<uint64_t>(file_size_ / 64, 20'000'000)));
    }
    trace_->gpu_details.push_back(detail);
  }

  void NoteTime(int64_t ns) {
    if (!has_time_ || ns > max_ns_) max_ns_ = ns;
    has_time_ = true;
  }

  // ---- the trace info ----

  bool ReadArgNode(std::string_view bytes, const SequenceState &sequence, int depth,
                   ArgNode *node) {
    size_t at = 0;
    WireField field;
    while (NextField(bytes, &at, &field)) {
      switch (field.number) {
        case annotation::kNameIid:
          if (field.wire_type == 0) {
            const uint32_t name = sequence.arg_names.Find(field.varint);
            if (name != kAbsent) node->name = arg_names_.Get(name);
          }
          break;
        case annotation::kName:
          if (field.wire_type == 2) node->name.assign(field.payload);
          break;
        case annotation::kBoolValue:
        case annotation::kUintValue:
        case annotation::kPointerValue:
        case annotation::kIntValue:
        case annotation::kDoubleValue:
        case annotation::kStringValue:
        case annotation::kLegacyJsonValue:
        case annotation::kStringValueIid: {
          ArgValue value{};
          if (!ReadScalar(field, sequence, &value)) break;
          node->type = value.type;
          node->i = value.i;
          node->u = value.u;
          node->d = value.d;
          node->text.assign(value.text);
          break;
        }
        case annotation::kDictEntries:
        case annotation::kArrayValues:
          if (field.wire_type != 2) break;
          if (field.number == annotation::kDictEntries) {
            node->is_dict = true;
          } else {
            node->is_array = true;
          }
          if (depth < kMaxArgDepth) {
            ArgNode child;
            if (!ReadArgNode(field.payload, sequence, depth + 1, &child)) return false;
            node->entries.push_back(std::move(child));
          }
          break;
        default:
          break;
      }
    }
    return at == bytes.size();
  }

  // The "tfprof" dict of a "tfprof trace info" instant; the last one read is the one that counts.
  void ReadTraceInfo(std::string_view bytes, const SequenceState &sequence) {
    ArgNode root;
    if (!ReadArgNode(bytes, sequence, 0, &root)) return;
    TraceInfo info;
    info.seen = true;
    const auto integer = [&](const ArgNode &node, std::string_view key) -> std::optional<int64_t> {
      const ArgNode *found = node.Find(key);
      return found != nullptr ? found->Int() : std::nullopt;
    };
    const auto text = [&](const ArgNode &node, std::string_view key, std::string *out) {
      const ArgNode *found = node.Find(key);
      if (found != nullptr && found->type == ArgValue::kText) *out = found->text;
    };
    const auto loss = [&](const ArgNode &node, std::string_view key, uint64_t *out, bool stated) {
      const ArgNode *found = node.Find(key);
      if (found == nullptr) return;
      if (std::optional<uint64_t> value = found->Uint()) {
        *out = *value;
        if (stated) info.losses_stated = true;
      }
    };
    info.pid = integer(root, "pid");
    info.start_unix_ns = integer(root, "start_time_unix_ns");
    info.start_monotonic_ns = integer(root, "start_time_monotonic_ns");
    info.end_monotonic_ns = integer(root, "end_time_monotonic_ns");
    info.rank = integer(root, "rank");
    if (const ArgNode *events = root.Find("events_recorded")) info.events_recorded = events->Uint();
    text(root, "hostname", &info.hostname);
    text(root, "clock", &info.clock);
    text(root, "sources", &info.sources);
    if (const ArgNode *command = root.Find("command_line")) {
      for (const ArgNode &item : command->entries) info.command_line.push_back(item.text);
    }
    TraceLosses &losses = info.losses;
    loss(root, "dropped_events", &losses.dropped_events, true);
    loss(root, "gpu_records_dropped", &losses.gpu_records_dropped, true);
    loss(root, "unmatched_span_ends", &losses.unmatched_span_ends, true);
    loss(root, "unmatched_step_ends", &losses.unmatched_step_ends, true);
    loss(root, "memory_dropped_events", &losses.memory_dropped_events, true);
    loss(root, "discarded_events", &losses.discarded_events, true);
    uint64_t unreported = 0;
    loss(root, "unreported_inputs", &unreported, false);
    losses.unreported_inputs = static_cast<uint32_t>(std::min<uint64_t>(unreported, UINT32_MAX));
    if (const ArgNode *gpu = root.Find("gpu"); gpu != nullptr && gpu->is_dict) {
      info.gpu.reported = true;
      text(*gpu, "state", &info.gpu.state);
      text(*gpu, "reason", &info.gpu.reason);
      text(*gpu, "cupti", &info.gpu.library);
      if (!root.Find("gpu_records_dropped")) {
        loss(*gpu, "records_dropped", &losses.gpu_records_dropped, false);
      }
      loss(*gpu, "buffers_refused", &losses.gpu_buffers_refused, false);
      loss(*gpu, "records_unparsed", &losses.gpu_records_unparsed, false);
      loss(*gpu, "late_records", &losses.gpu_late_records, false);
    }
    if (const ArgNode *devices = root.Find("deviceProperties")) {
      for (const ArgNode &item : devices->entries) {
        DeviceProperties device;
        device.id = integer(item, "id").value_or(0);
        text(item, "name", &device.name);
        if (const ArgNode *memory = item.Find("totalGlobalMem")) {
          device.global_memory_bytes = memory->Uint().value_or(0);
        }
        device.compute_major = integer(item, "computeMajor").value_or(0);
        device.compute_minor = integer(item, "computeMinor").value_or(0);
        device.multiprocessors = integer(item, "numSms").value_or(0);
        info.devices.push_back(std::move(device));
      }
    }
    if (const ArgNode *groups = root.Find("process_groups")) {
      for (const ArgNode &item : groups->entries) {
        const std::optional<int64_t> pid = integer(item, "pid");
        if (!pid) continue;
        TraceInfo::Group group{*pid, std::nullopt, integer(item, "rank")};
        if (std::optional<int64_t> number = integer(item, "group");
            number && *number >= 0 && *number < 1000000000) {
          group.group = static_cast<uint32_t>(*number);
        }
        info.groups.push_back(group);
      }
    }
    info_ = std::move(info);
  }

  // ---- the end: tracks become rows, begins and ends become spans ----

  const TrackInfo *Parent(const TrackInfo &track) const {
    if (!track.has_parent) return nullptr;
    auto found = track_index_.find(track.parent);
    return found == track_index_.end() ? nullptr : &tracks_[found->second];
  }

  // The pid of the process a track belongs to.
  int64_t PidOf(const TrackInfo &track) const {
    const TrackInfo *at = &track;
    for (int depth = 0; at != nullptr && depth < kMaxTrackDepth; ++depth) {
      if ((at->is_process || at->is_thread) && at->has_pid) return at->pid;
      at = Parent(*at);
    }
    return track.has_implicit_pid ? track.implicit_pid : 0;
  }

  uint32_t ProcessFor(int64_t pid) {
    auto [entry, added] = process_index_.try_emplace(pid, 0);
    if (added) {
      entry->second = static_cast<uint32_t>(trace_->processes.size());
      Process process;
      process.pid = pid;
      if (auto info = process_infos_.find(pid); info != process_infos_.end()) {
        process.name = info->second.name;
        process.labels = info->second.labels;
        process.sort_index = info->second.sort_index;
      }
      trace_->processes.push_back(std::move(process));
    }
    return entry->second;
  }

  uint32_t NewRow(int64_t pid, int64_t tid, std::string_view name, TrackKind kind) {
    Track row;
    row.process = ProcessFor(pid);
    row.tid = tid;
    row.name.assign(name);
    row.kind = kind;
    trace_->tracks.push_back(std::move(row));
    row_states_.emplace_back();
    return static_cast<uint32_t>(trace_->tracks.size() - 1);
  }

  uint32_t ThreadRow(int64_t pid, int64_t tid) {
    auto [entry, added] = thread_rows_.try_emplace(std::make_pair(pid, tid), 0);
    if (added) {
      std::string_view name;
      std::optional<int64_t> sort_index;
      if (auto info = thread_infos_.find({pid, tid}); info != thread_infos_.end()) {
        name = info->second.name;
        sort_index = info->second.sort_index;
      }
      entry->second = NewRow(pid, tid, name, TrackKind::kHostThread);
      trace_->tracks[entry->second].sort_index = sort_index;
      row_states_[entry->second].thread = true;
    }
    return entry->second;
  }

  // A row that is no thread (a stream, a sync row, a named track): one per process and name.
  uint32_t NamedRow(const TrackInfo &track) {
    const int64_t pid = PidOf(track);
    const std::string key = track.name.empty() ? absl::StrCat("\x1f", track.uuid) : track.name;
    auto [entry, added] = named_rows_.try_emplace(std::make_pair(pid, key), 0);
    if (added) {
      int64_t stream = 0;
      const int64_t tid = NumberAfter(track.name, "stream ", &stream)
                              ? stream
                              : kNamedRowTidBase + static_cast<int64_t>(named_rows_.size());
      entry->second = NewRow(pid, tid, track.name, TrackKind::kHostThread);
      trace_->tracks[entry->second].sort_index = track.sort_index;
    }
    return entry->second;
  }

  uint32_t CountersRow(int64_t pid) {
    auto [entry, added] = counter_rows_.try_emplace(pid, 0);
    if (added) entry->second = NewRow(pid, 0, "", TrackKind::kCounters);
    return entry->second;
  }

  // The row a track's slices and instants go on: a thread's, a lane's parent's, its own.
  uint32_t RowOf(TrackInfo &track, int depth = 0) {
    if (track.row != kNoTrack) return track.row;
    uint32_t row = kNoTrack;
    const TrackInfo *parent = Parent(track);
    if (track.is_thread) {
      row = ThreadRow(PidOf(track), track.tid);
      if (!track.name.empty() && trace_->tracks[row].name.empty()) trace_->tracks[row].name = track.name;
    } else if (!track.described) {
      // Events on a track never described: a thread of the sequence's process.
      row = ThreadRow(PidOf(track), static_cast<int64_t>(track.uuid & INT64_MAX));
    } else if (track.is_process) {
      row = ThreadRow(track.pid, 0);
    } else if (parent != nullptr && depth < kMaxTrackDepth && !parent->is_process &&
               !parent->is_counter && parent->described && parent->name == track.name) {
      // A lane: the writer's extra row for overlapping slices of its parent's row.
      row = RowOf(const_cast<TrackInfo &>(*parent), depth + 1);
    } else {
      row = NamedRow(track);
    }
    track.row = row;
    return row;
  }

  // The row a counter track's samples are shown on: its parent's, or its process's counters.
  uint32_t CounterRowOf(TrackInfo &track) {
    const TrackInfo *parent = Parent(track);
    if (parent != nullptr && !parent->is_process && !parent->is_counter) {
      return RowOf(const_cast<TrackInfo &>(*parent));
    }
    if (!track.is_counter && track.described && !track.is_process) return RowOf(track);
    return CountersRow(PidOf(track));
  }

  void Finish() {
    std::vector<Pending> open;
    bool late_counters = false;
    for (uint32_t index = 0; index < tracks_.size(); ++index) {
      TrackInfo &track = tracks_[index];
      if (track.buffered) {
        std::vector<Pending> &events = track.events;
        std::stable_sort(events.begin(), events.end(),
                         [](const Pending &a, const Pending &b) { return a.ns < b.ns; });
        open.clear();
        for (const Pending &pending : events) {
          late_counters = late_counters || pending.type == event::kCounter;
          Pair(index, open, pending);
        }
        std::vector<Pending>().swap(events);
        track.open.swap(open);
      }
      // Spans still open when the file ends (a killed writer) end at its last timestamp.
      for (const Pending &begin : track.open) EmitSlice(index, begin, nullptr, max_ns_);
      std::vector<Pending>().swap(track.open);
    }
    // The places of begins that made no activity (steps, ignored categories) go.
    std::vector<Activity> &activities = trace_->activities;
    activities.erase(std::remove_if(activities.begin(), activities.end(),
                                    [](const Activity &activity) { return activity.name == kHole; }),
                     activities.end());
    if (late_counters) {
      std::stable_sort(trace_->counters.begin(), trace_->counters.end(),
                       [](const CounterSample &a, const CounterSample &b) { return a.ns < b.ns; });
    }
    PlaceOnRows();
    ResolveRows();
    LinkLaunches(*trace_);
    ApplyInfo();
    std::stable_sort(trace_->steps.begin(), trace_->steps.end(),
                     [](const Step &a, const Step &b) { return a.begin_ns < b.begin_ns; });
  }

  // Whether name `name` is the PyTorch profiler's "ProfilerStep#N" (remembered per name).
  bool ProfilerStepNumber(uint32_t name, int64_t *number) {
    if (name >= profiler_step_names_.size()) profiler_step_names_.resize(trace_->names.size(), 0);
    uint8_t &known = profiler_step_names_[name];
    if (known == 1) return false;
    const bool step = NumberAfter(trace_->names.Get(name), "ProfilerStep#", number);
    known = step ? 2 : 1;
    return step;
  }

  // A span of track `track` (a tracks_ index), kept with that index for a row until the end.
  void EmitSlice(uint32_t track, const Pending &begin, const Pending *end, int64_t end_ns) {
    const Category &category = categories_[begin.category];
    if (category.role.role == Role::kIgnored) return;
    end_ns = std::max(end_ns, begin.ns);
    uint8_t flags = begin.flags;
    if (end == nullptr || (end->flags & kActivityIncomplete) != 0) flags |= kActivityIncomplete;
    const bool has_extra = category.role.role == Role::kStep ||
                           category.role.kind == ActivityKind::kRange;
    const Extra *extra =
        has_extra && begin.detail < extras_.size() ? &extras_[begin.detail] : nullptr;
    int64_t number = 0;
    if (category.role.role == Role::kStep &&
        ((extra != nullptr && extra->has_step) ||
         NumberAfter(trace_->names.Get(begin.name), "step ", &number))) {
      PendingStep step;
      step.number = extra != nullptr && extra->has_step ? extra->step : number;
      step.begin_ns = begin.ns;
      step.end_ns = end_ns;
      step.track = track;
      step.has_thread = extra != nullptr && extra->has_thread;
      step.thread = extra != nullptr ? extra->thread : 0;
      step.incomplete = (flags & kActivityIncomplete) != 0;
      step.infos_before = infos_read_;
      pending_steps_.push_back(step);
      return;
    }
    const ActivityKind kind = category.role.role == Role::kActivity ? category.role.kind
                                                                     : ActivityKind::kHostOp;
    if (kind == ActivityKind::kHostOp && ProfilerStepNumber(begin.name, &number)) {
      pytorch_steps_ = true;
      PendingStep step;
      step.number = number;
      step.begin_ns = begin.ns;
      step.end_ns = end_ns;
      step.track = track;
      step.on_own_row = true;
      step.incomplete = (flags & kActivityIncomplete) != 0;
      step.infos_before = infos_read_;
      pending_steps_.push_back(step);
      return;
    }
    Activity activity;
    activity.begin_ns = begin.ns;
    activity.end_ns = end_ns;
    activity.name = begin.name;
    activity.kind = kind;
    activity.copy = begin.copy;
    activity.flags = flags;
    activity.track = track;
    if (kind == ActivityKind::kRange) {
      // The threads that began and ended it, placed once the tracks are known.
      const Extra *end_extra =
          end != nullptr && end->detail < extras_.size() ? &extras_[end->detail] : nullptr;
      if (extra != nullptr || end_extra != nullptr) {
        Extra threads = extra != nullptr ? *extra : Extra();
        if (end_extra != nullptr && end_extra->has_end_thread) {
          threads.has_end_thread = true;
          threads.end_thread = end_extra->end_thread;
        }
        activity.detail = static_cast<uint32_t>(range_threads_.size());
        range_threads_.push_back(threads);
      }
    } else {
      activity.detail = begin.detail;
      activity.bytes = begin.aux;
    }
    if (begin.slot < trace_->activities.size()) {
      trace_->activities[begin.slot] = activity;
    } else {
      trace_->activities.push_back(activity);
    }
  }

  void EmitInstant(uint32_t track, const Pending &pending) {
    Activity activity;
    activity.begin_ns = pending.ns;
    activity.end_ns = pending.ns;
    activity.name = pending.name;
    activity.kind = ActivityKind::kInstant;
    activity.track = track;
    trace_->activities.push_back(activity);
  }

  void EmitCounter(uint32_t track, const Pending &pending) {
    CounterSample sample;
    sample.ns = pending.ns;
    sample.value = DoubleOf(pending.aux);
    sample.name = pending.name;  // the counter's, when its track has no name
    sample.track = track;
    trace_->counters.push_back(sample);
  }

  // Spans, instants, counter samples and steps were kept with their tracks_ index: now that every
  // track is described, each goes on its row of the model.
  void PlaceOnRows() {
    for (Activity &activity : trace_->activities) {
      TrackInfo &track = tracks_[activity.track];
      if (activity.kind == ActivityKind::kRange) {
        const Extra *threads =
            activity.detail < range_threads_.size() ? &range_threads_[activity.detail] : nullptr;
        const int64_t pid = threads != nullptr ? PidOf(track) : 0;
        activity.detail = kNoDetail;
        activity.track = threads != nullptr && threads->has_thread ? ThreadRow(pid, threads->thread)
                                                                   : RowOf(track);
        if (threads != nullptr && threads->has_end_thread) {
          const uint32_t end_track = ThreadRow(pid, threads->end_thread);
          if (end_track != activity.track) activity.detail = end_track;
        }
        row_states_[activity.track].own_events = true;
        continue;
      }
      const uint32_t row = RowOf(track);
      activity.track = row;
      RowState &state = row_states_[row];
      state.own_events = true;
      const ActivityKind kind = activity.kind;
      if (!(IsGpuWork(kind) || kind == ActivityKind::kGpuAnnotation || kind == ActivityKind::kSync)) {
        continue;
      }
      if (kind == ActivityKind::kSync) {
        state.sync = true;
      } else {
        state.gpu_work = true;
      }
      if (track.has_device && !state.device_known) {
        trace_->tracks[row].device =
            static_cast<int32_t>(std::clamp<int64_t>(track.device, INT32_MIN, INT32_MAX));
        state.device_known = true;
      }
      if (track.has_stream && !state.stream_known) {
        trace_->tracks[row].stream = track.stream;
        state.stream_known = true;
      }
    }
    for (CounterSample &sample : trace_->counters) {
      TrackInfo &track = tracks_[sample.track];
      if (track.counter_row == kNoTrack) {
        track.counter_row = CounterRowOf(track);
        if (!track.name.empty()) track.counter_name = trace_->names.Intern(track.name);
        track.counter_series = trace_->names.Intern(
            track.unit_name.empty() ? std::string_view("value") : std::string_view(track.unit_name));
      }
      sample.track = track.counter_row;
      if (track.counter_name != kAbsent) sample.name = track.counter_name;
      sample.series = track.counter_series;
    }
    for (const PendingStep &pending : pending_steps_) {
      TrackInfo &track = tracks_[pending.track];
      const int64_t pid = PidOf(track);
      Step step;
      step.number = pending.number;
      step.begin_ns = pending.begin_ns;
      step.end_ns = pending.end_ns;
      step.process = ProcessFor(pid);
      step.track = pending.on_own_row   ? RowOf(track)
                   : pending.has_thread ? ThreadRow(pid, pending.thread)
                                        : kNoTrack;
      step.incomplete = pending.incomplete;
      trace_->steps.push_back(step);
    }
  }

  // What each row is, from what went on it (as the Chrome reader decides it from the args).
  void ResolveRows() {
    for (size_t index = 0; index < trace_->tracks.size(); ++index) {
      Track &row = trace_->tracks[index];
      const RowState &state = row_states_[index];
      if (row.kind == TrackKind::kCounters) {
        int64_t device = 0;
        if (NumberAfter(trace_->processes[row.process].name, "GPU ", &device)) {
          row.device = static_cast<int32_t>(std::min<int64_t>(device, INT32_MAX));
        }
        continue;
      }
      if (state.gpu_work || (state.sync && !state.thread)) {
        row.kind = state.gpu_work ? TrackKind::kGpuStream : TrackKind::kGpuSync;
        if (!state.device_known) {
          const Process &process = trace_->processes[row.process];
          int64_t device = -1;
          if (!NumberAfter(process.name, "GPU ", &device)) device = process.pid;
          if (device >= 0) row.device = static_cast<int32_t>(std::min<int64_t>(device, INT32_MAX));
        }
        if (!state.stream_known && row.kind == TrackKind::kGpuStream) {
          int64_t stream = 0;
          if (NumberAfter(row.name, "stream ", &stream)) {
            row.stream = stream;
          } else if (state.thread) {
            row.stream = row.tid;
          }
        }
        if (row.name.empty() && row.stream >= 0 && row.kind == TrackKind::kGpuStream) {
          row.name = absl::StrCat("stream ", row.stream);
        }
      } else if (!state.own_events && !state.thread && row.name.empty()) {
        row.kind = TrackKind::kCounters;  // a row with counters only, never named
      }
    }
  }

  void ApplyInfo() {
    Trace &trace = *trace_;
    for (const Category &category : categories_) {
      if (category.unknown_events > 0) {
        trace.unknown_categories.emplace_back(category.text, category.unknown_events);
      }
    }
    std::sort(trace.unknown_categories.begin(), trace.unknown_categories.end());
    if (snapshot_wall_offset_) trace.wall_offset_ns = snapshot_wall_offset_;
    if (!info_.seen) {
      bool pytorch = pytorch_steps_;
      for (const Category &category : categories_) pytorch = pytorch || (category.used && category.pytorch);
      trace.producer = pytorch ? Producer::kPytorch : Producer::kOther;
      return;
    }
    trace.producer = Producer::kTfprof;
    if (info_.start_unix_ns && info_.start_monotonic_ns) {
      trace.wall_offset_ns = static_cast<int64_t>(static_cast<uint64_t>(*info_.start_unix_ns) -
                                                  static_cast<uint64_t>(*info_.start_monotonic_ns));
      trace.start_ns = info_.start_monotonic_ns;
    }
    trace.end_ns = info_.end_monotonic_ns;
    trace.pid = info_.pid;
    trace.events_recorded = info_.events_recorded;
    trace.hostname = info_.hostname;
    trace.clock = info_.clock;
    trace.command_line = info_.command_line;
    trace.gpu = info_.gpu;
    trace.devices = info_.devices;
    trace.sources_json = info_.sources;
    if (info_.rank) trace.rank = info_.rank;
    if (info_.pid) {
      if (auto main = process_index_.find(*info_.pid); main != process_index_.end()) {
        trace.process_name = trace.processes[main->second].name;
      } else if (auto described = process_infos_.find(*info_.pid);
                 described != process_infos_.end()) {
        trace.process_name = described->second.name;
      }
    }
    // Only a trace info that states the losses reports them (as the Chrome reader's header).
    if (info_.losses_stated) {
      trace.losses = info_.losses;
      trace.losses.reported = true;
    }
    for (const TraceInfo::Group &group : info_.groups) {
      auto process = process_index_.find(group.pid);
      if (process == process_index_.end()) continue;
      if (group.group) trace.processes[process->second].group = *group.group;
      if (group.rank) trace.processes[process->second].rank = group.rank;
    }
  }

  const uint64_t file_size_;
  ProgressListener *const progress_;
  Trace *const trace_;
  std::string progress_what_;

  absl::flat_hash_map<uint32_t, std::unique_ptr<SequenceState>> sequences_;
  SequenceState *last_sequence_ = nullptr;
  uint32_t last_sequence_id_ = 0;

  uint32_t trace_clock_ = kBootTime;
  bool trace_clock_fixed_ = false;
  absl::flat_hash_map<uint32_t, uint64_t> global_offsets_;  // trace clock = clock + offset
  std::optional<int64_t> snapshot_wall_offset_;

  std::vector<Category> categories_;
  absl::flat_hash_map<std::string, uint32_t> category_index_;
  NameInterner arg_names_;
  std::vector<Arg> arg_keys_;  // per arg_names_ index
  NameInterner strings_;       // interned annotation string values

  std::vector<TrackInfo> tracks_;
  absl::flat_hash_map<uint64_t, uint32_t> track_index_;
  uint32_t last_track_ = kAbsent;
  absl::flat_hash_map<int64_t, ProcessInfo> process_infos_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, ThreadInfo> thread_infos_;

  EventArgs args_;
  size_t event_damage_at_ = 0;
  bool args_dirty_ = true;
  std::vector<Extra> extras_;
  std::vector<Extra> range_threads_;  // per range activity, until PlaceOnRows()
  std::vector<PendingStep> pending_steps_;
  uint64_t infos_read_ = 0;  // "tfprof trace info" packets: one ends each piece of a stream
  bool last_packet_was_info_ = false;
  std::vector<uint8_t> profiler_step_names_;  // per name: 0 unknown, 1 no, 2 "ProfilerStep#N"
  int64_t max_ns_ = 0;
  bool has_time_ = false;
  bool pytorch_steps_ = false;
  TraceInfo info_;

  absl::flat_hash_map<int64_t, uint32_t> process_index_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> thread_rows_;
  std::map<std::pair<int64_t, std::string>, uint32_t> named_rows_;
  absl::flat_hash_map<int64_t, uint32_t> counter_rows_;
  std::vector<RowState> row_states_;
};

// The wire type a TracePacket's field of that number has, for the ones a trace starts with;
// -1 for the rest.
int FirstPacketFieldWireType(uint64_t number) {
  switch (number) {
    case 3:   // trusted_uid
    case 8:   // timestamp
    case 10:  // trusted_packet_sequence_id
    case 13:  // sequence_flags
    case 41:  // incremental_state_cleared
    case 42:  // previous_packet_dropped
    case 58:  // timestamp_clock_id
    case 79:  // trusted_pid
    case 87:  // first_packet_on_sequence
      return 0;
    case 6:   // clock_snapshot
    case 11:  // track_event
    case 12:  // interned_data
    case 33:  // trace_config
    case 35:  // trace_stats
    case 36:  // synchronization_marker
    case 59:  // trace_packet_defaults
    case 60:  // track_descriptor
      return 2;
    default:
      return -1;
  }
}

}  // namespace

bool LooksLikePerfettoTrace(std::string_view head) {
  size_t at = 0;
  // Empty packets may come first; the first one with content decides.
  for (int packets = 0; packets < 16 && at < head.size(); ++packets) {
    if (static_cast<unsigned char>(head[at]) != ((kTracePacketField << 3) | 2)) return false;
    ++at;
    uint64_t length = 0;
    if (!ReadWireVarint(head, &at, &length)) return false;
    if (length == 0) continue;
    uint64_t tag = 0;
    if (!ReadWireVarint(head, &at, &tag)) return false;
    const int wire_type = FirstPacketFieldWireType(tag >> 3);
    return wire_type >= 0 && static_cast<int>(tag & 7) == wire_type;
  }
  return false;
}

absl::Status ReadPerfettoTrace(int fd, uint64_t file_size, ProgressListener *progress,
                               Trace *trace) {
  trace->format = Format::kPerfetto;
  FileBytes bytes;
  if (absl::Status status = bytes.Open(fd, file_size, trace->path); !status.ok()) return status;
  PerfettoReader reader(file_size, progress, trace);
  return reader.Read(bytes.data());
}

}  // namespace tfprof
