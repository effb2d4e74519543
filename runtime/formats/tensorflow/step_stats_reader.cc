#include "runtime/formats/tensorflow/step_stats_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/common.h"
#include "runtime/common/crc32c.h"
#include "runtime/common/file_bytes.h"
#include "runtime/formats/cut_file.h"
#include "runtime/formats/proto_damage.h"
#include "runtime/common/proto_wire.h"
#include "runtime/formats/tensorflow/log_directory.h"
#include "runtime/formats/tensorflow/tf_names.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

absl::Status FileError(std::string_view what, const std::string &path, int error) {
  return absl::UnavailableError(
      absl::StrCat("cannot ", ToAbsl(what), " '", path, "': ", std::strerror(error)));
}

absl::Status Damage(const std::string &file, uint64_t offset, std::string_view problem) {
  return absl::DataLossError(
      absl::StrCat("'", file, "': byte offset ", offset, ": ", ToAbsl(problem)));
}

// ---- locating the first malformed byte of a protobuf message ---------------------------------
// The lite parser only says "failed"; this walks the wire format along the messages that hold
// step data, so a truncated or corrupted .pb names where the damage starts.

struct WireSchema {
  struct Child {
    uint32_t field;
    const WireSchema *schema;
  };
  // Text fields need no check: tfprof's .proto declares them `bytes`, so names in any bytes
  // parse (and the parser has nothing to log about them).
  std::initializer_list<Child> children;

  const WireSchema *ChildFor(uint32_t field) const {
    for (const Child &child : children) {
      if (child.field == field) return child.schema;
    }
    return nullptr;
  }
};

const WireSchema kLeaf{{}};
const WireSchema kTensorDescription{{{2, &kLeaf}, {4, &kLeaf}}};
const WireSchema kNodeOutput{{{3, &kTensorDescription}}};
const WireSchema kNodeExecStats{{{6, &kLeaf}, {7, &kNodeOutput}, {11, &kLeaf}, {12, &kLeaf}}};
const WireSchema kDeviceStepStats{{{2, &kNodeExecStats}, {3, &kLeaf}}};
const WireSchema kStepStatsSchema{{{1, &kDeviceStepStats}}};
const WireSchema kRunMetadataSchema{{{1, &kStepStatsSchema}, {3, &kLeaf}}};

// A varint of the hand decoder at `*at`, at most `max_bytes` long (a 10th byte above 1 would
// overflow 64 bits): false otherwise, for protobuf to judge. The common one-byte case first, then
// a loop that checks the end of `data` once where ten bytes remain.
[[gnu::always_inline]] inline bool DecodeVarint(std::string_view data, size_t *at, uint64_t *value,
                                                int max_bytes = 10) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  size_t index = *at;
  if (index < data.size() && bytes[index] < 0x80) {
    *value = bytes[index];
    *at = index + 1;
    return true;
  }
  const size_t limit = std::min(data.size(), index + static_cast<size_t>(max_bytes));
  uint64_t result = 0;
  for (int shift = 0; index < limit; shift += 7) {
    const unsigned char byte = bytes[index++];
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      if (shift == 63 && byte > 1) return false;
      *value = result;
      *at = index;
      return true;
    }
  }
  return false;
}

// The next field of a message the hand decoder reads, as NextWireField() reads it but stricter:
// a tag longer than two bytes (no field the decoder reads has one), a length of more than five
// bytes, groups and anything cut short are left to protobuf (false; `*at` == data.size() at the
// clean end).
[[gnu::always_inline]] inline bool NextDecodedField(std::string_view data, size_t *at,
                                                    WireField *field) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  size_t index = *at;
  uint32_t tag = bytes[index++];
  if (tag >= 0x80) {
    if (index >= data.size() || bytes[index] >= 0x80) return false;
    tag = (tag & 0x7f) | static_cast<uint32_t>(bytes[index++]) << 7;
  }
  field->number = tag >> 3;
  field->wire_type = static_cast<int>(tag & 7);
  if (field->number == 0) return false;
  switch (field->wire_type) {
    case 0:
      if (!DecodeVarint(data, &index, &field->varint)) return false;
      break;
    case 1:
    case 5: {
      const size_t width = field->wire_type == 1 ? 8 : 4;
      if (data.size() - index < width) return false;
      field->payload = data.substr(index, width);
      index += width;
      break;
    }
    case 2: {
      uint64_t length = 0;
      if (!DecodeVarint(data, &index, &length, 5) || length > data.size() - index) return false;
      field->payload = data.substr(index, static_cast<size_t>(length));
      index += static_cast<size_t>(length);
      break;
    }
    default:
      return false;
  }
  *at = index;
  return true;
}

// Walks the fields of `data`: `on_field` returns false to leave the node to protobuf. True when
// every field was read and accepted.
template <typename OnField>
[[gnu::always_inline]] inline bool ForEachDecodedField(std::string_view data, OnField on_field) {
  size_t at = 0;
  WireField field;
  while (at < data.size()) {
    if (!NextDecodedField(data, &at, &field) || !on_field(field)) return false;
  }
  return true;
}

// Whether the framing of `data` read as a message of `schema` is sound, walked with the node
// decoder's field reader, which is quicker and stricter than NextWireField(): true means
// FindWireError() finds nothing; false sends the caller to FindWireError(), which has the last
// word (and says what is wrong).
bool FramingSound(std::string_view data, const WireSchema &schema) {
  return ForEachDecodedField(data, [&](const WireField &field) {
    if (field.wire_type != 2) return true;
    const WireSchema *child = schema.ChildFor(field.number);
    return child == nullptr || child == &kLeaf || FramingSound(field.payload, *child);
  });
}

// How CheckStepStatsMessage() words damage in the framing (of a record, whose CRC matched, or of
// a nested message: the bytes are wrong, not cut).
constexpr char kCorruptProtobuf[] = "corrupt protobuf: ";

// Returns the offset (relative to `base`) of the first malformed field of `data` read as a
// message of `schema`, and says what is wrong (DescribeWireFieldDamage()); std::nullopt when the
// framing is sound. `*past_end` is set when a top-level field runs past the end of `data` (for a
// whole .pb file: the file cut short); damage inside a nested message is corrupt bytes.
std::optional<size_t> FindWireError(std::string_view data, const WireSchema &schema, size_t base,
                                    std::string *problem, bool *past_end = nullptr) {
  size_t at = 0;
  WireField field;
  while (at < data.size()) {
    const size_t field_start = at;
    if (!NextWireField(data, &at, &field)) {
      const WireFieldDamage damage = DescribeWireFieldDamage(
          data, field_start, past_end != nullptr ? "message" : "enclosing message");
      *problem = damage.problem;
      if (past_end != nullptr) *past_end = damage.runs_past_end;
      return base + field_start;
    }
    if (field.wire_type != 2) continue;
    if (const WireSchema *child = schema.ChildFor(field.number);
        child != nullptr && child != &kLeaf) {
      const size_t payload_at = static_cast<size_t>(field.payload.data() - data.data());
      if (std::optional<size_t> inner =
              FindWireError(field.payload, *child, base + payload_at, problem)) {
        return inner;
      }
    }
  }
  return std::nullopt;
}

// Device names are text; a byte string that parsed by accident rarely gives printable ones.
bool IsPrintableName(const std::string &name) {
  if (name.empty()) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

// ---- one file's bytes ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<FileBytes>> MapFile(const std::string &path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError("open", path, errno);
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    const int error = errno;
    close(fd);
    return FileError("stat", path, error);
  }
  if (S_ISDIR(info.st_mode)) {
    close(fd);
    return FileError("read", path, EISDIR);
  }
  auto bytes = std::make_unique<FileBytes>();
  absl::Status mapped = bytes->Open(fd, static_cast<uint64_t>(info.st_size), path);
  close(fd);
  if (!mapped.ok()) return mapped;
  return bytes;
}

// A first header whose length CRC matches is proof enough (a 1 in 2^32 accident otherwise); the
// record reader reports any damage after it.
bool LooksLikeTfRecord(std::string_view data) {
  if (data.size() < kTfRecordHeaderBytes) return false;
  uint32_t stored = 0;
  for (size_t index = 12; index-- > 8;) stored = stored << 8 | static_cast<unsigned char>(data[index]);
  return UnmaskCrc32c(stored) == Crc32c(data.substr(0, 8));
}

bool IsEventRecord(std::string_view record) {
  tensorflow::Event event;
  if (!event.ParseFromArray(record.data(), static_cast<int>(record.size()))) return false;
  return (event.has_file_version() && event.file_version().rfind("brain.Event:", 0) == 0) ||
         event.has_tagged_run_metadata();
}

}  // namespace

namespace {

// Why serialized step statistics (StepStats.dev_stats fields) do not look like real ones (see
// StepStatsProblem), or "" when they do; `parts` are the StepStats pieces (protobuf merges a
// message field given more than once).
std::string WireStepStatsProblem(const std::vector<std::string_view> &parts) {
  size_t devices = 0;
  for (std::string_view step_stats : parts) {
    size_t at = 0;
    WireField field;
    while (NextWireField(step_stats, &at, &field)) {
      if (field.number != kStepStatsDevStats || field.wire_type != 2) continue;
      std::string name;
      size_t inner = 0;
      WireField member;
      while (NextWireField(field.payload, &inner, &member)) {
        if (member.number == kDeviceStepStatsDevice && member.wire_type == 2) name.assign(member.payload);
      }
      if (!IsPrintableName(name)) {
        return absl::StrCat("DeviceStepStats ", devices, " has no printable device name");
      }
      ++devices;
    }
  }
  return devices == 0 ? "holds no DeviceStepStats" : "";
}

// The StepStats pieces of a serialized RunMetadata: its step_stats fields.
std::vector<std::string_view> StepStatsParts(std::string_view run_metadata) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  WireField field;
  while (NextWireField(run_metadata, &at, &field)) {
    if (field.number == kRunMetadataStepStats && field.wire_type == 2) parts.push_back(field.payload);
  }
  return parts;
}

}  // namespace

bool CheckStepStatsMessage(std::string_view bytes, Format *format, std::string *problem,
                           uint64_t *problem_offset, bool *ends_early) {
  // The protobuf runtime is tfprof's private copy: silence its own stderr lines (such as invalid
  // UTF-8 in a string field of a node parsed later), which would land in the host program's
  // output; what is wrong with the input is reported through `problem` instead.
  static const bool protobuf_quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)protobuf_quiet;
  *problem_offset = 0;
  if (ends_early != nullptr) *ends_early = false;
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    *problem = "message larger than 2 GiB, the protobuf limit";
    return false;
  }
  if (bytes.empty()) {
    *problem = "empty message (0 bytes)";
    return false;
  }
  std::string wire_problem;
  std::string step_stats_wire_problem;
  bool run_metadata_past_end = false;
  bool step_stats_past_end = false;
  // Nearly every message is sound: the quick walk first, the one that says why only after it.
  const std::optional<size_t> run_metadata_error =
      FramingSound(bytes, kRunMetadataSchema)
          ? std::nullopt
          : FindWireError(bytes, kRunMetadataSchema, 0, &wire_problem, &run_metadata_past_end);
  std::string run_metadata_problem;
  if (!run_metadata_error) {
    run_metadata_problem = WireStepStatsProblem(StepStatsParts(bytes));
    if (run_metadata_problem.empty()) {
      *format = Format::kRunMetadata;
      return true;
    }
  }
  const std::optional<size_t> step_stats_error =
      FramingSound(bytes, kStepStatsSchema)
          ? std::nullopt
          : FindWireError(bytes, kStepStatsSchema, 0, &step_stats_wire_problem,
                          &step_stats_past_end);
  if (!step_stats_error && WireStepStatsProblem({bytes}).empty()) {
    *format = Format::kStepStats;
    return true;
  }
  // Damage in the framing is named where it is: the further of the two readings' errors (a
  // RunMetadata read as StepStats may frame soundly and still hold no device).
  if (run_metadata_error || step_stats_error) {
    const bool step_stats_further =
        step_stats_error && (!run_metadata_error || *step_stats_error > *run_metadata_error);
    *problem_offset = step_stats_further ? *step_stats_error : *run_metadata_error;
    const bool past_end = step_stats_further ? step_stats_past_end : run_metadata_past_end;
    if (ends_early != nullptr) *ends_early = past_end;
    *problem = absl::StrCat(kCorruptProtobuf,
                            step_stats_further ? step_stats_wire_problem : wire_problem);
  } else if (!run_metadata_problem.empty()) {
    *problem = absl::StrCat("parses as a RunMetadata, but its step_stats ", run_metadata_problem);
  } else {
    *problem = "not a RunMetadata or StepStats protobuf";
  }
  return false;
}

absl::Status ForEachDeviceOf(std::string_view message, Format format,
                             const std::function<absl::Status(const DeviceStepStatsView &)> &visit) {
  const std::vector<std::string_view> parts =
      format == Format::kStepStats ? std::vector<std::string_view>{message} : StepStatsParts(message);
  DeviceStepStatsView view;
  for (std::string_view step_stats : parts) {
    size_t at = 0;
    WireField field;
    while (NextWireField(step_stats, &at, &field)) {
      if (field.number != kStepStatsDevStats || field.wire_type != 2) continue;
      view.device = {};
      view.thread_names.clear();
      view.nodes.clear();
      size_t inner = 0;
      WireField member;
      while (NextWireField(field.payload, &inner, &member)) {
        if (member.wire_type != 2) continue;
        if (member.number == kDeviceStepStatsDevice) {
          view.device = member.payload;
        } else if (member.number == kDeviceStepStatsNodeStats) {
          view.nodes.push_back(member.payload);
        } else if (member.number == kDeviceStepStatsThreadNames) {
          uint32_t thread = 0;
          std::string_view name;
          size_t entry_at = 0;
          WireField entry;
          while (NextWireField(member.payload, &entry_at, &entry)) {
            if (entry.number == kMapEntryKey && entry.wire_type == 0) {
              thread = static_cast<uint32_t>(entry.varint);
            } else if (entry.number == kMapEntryValue && entry.wire_type == 2) {
              name = entry.payload;
            }
          }
          view.thread_names.insert_or_assign(thread, name);
        }
      }
      if (absl::Status status = visit(view); !status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

namespace {

// TensorShapeProto.Dim: size (varint) and name (bytes); read for the framing only.
bool CheckShapeDim(std::string_view data) {
  return ForEachDecodedField(data, [](const WireField &field) {
    switch (field.number) {
      case 1: return field.wire_type == 0;
      case 2: return field.wire_type == 2;
      default: return true;  // unknown fields are skipped, as protobuf does
    }
  });
}

// TensorShapeProto: dim (repeated Dim), unknown_rank (bool).
bool CheckShape(std::string_view data) {
  return ForEachDecodedField(data, [](const WireField &field) {
    switch (field.number) {
      case 2: return field.wire_type == 2 && CheckShapeDim(field.payload);
      case 3: return field.wire_type == 0;
      default: return true;
    }
  });
}

// AllocationDescription: requested_bytes and allocator_name kept; the rest checked.
bool DecodeAllocation(std::string_view data, NodeOutputFields *output) {
  return ForEachDecodedField(data, [&](const WireField &field) {
    switch (field.number) {
      case 1:
        if (field.wire_type != 0) return false;
        output->requested_bytes = static_cast<int64_t>(field.varint);
        return true;
      case 3:
        if (field.wire_type != 2) return false;
        output->allocator_name = field.payload;
        return true;
      case 2: case 4: case 5: case 6: return field.wire_type == 0;
      default: return true;
    }
  });
}

// TensorDescription: dtype (enum), shape, allocation_description (each message at most once:
// protobuf merges repeats). The shape is read for its framing only, and not `again`.
bool DecodeTensorDescription(std::string_view data, NodeOutputFields *output, bool again) {
  bool shape_seen = false;
  bool allocation_seen = false;
  return ForEachDecodedField(data, [&](const WireField &field) {
    switch (field.number) {
      case 1: return field.wire_type == 0;
      case 2:
        if (field.wire_type != 2 || std::exchange(shape_seen, true)) return false;
        return again || CheckShape(field.payload);
      case 4:
        if (field.wire_type != 2 || std::exchange(allocation_seen, true)) return false;
        return DecodeAllocation(field.payload, output);
      default: return true;
    }
  });
}

// NodeOutput: slot, tensor_description (at most once).
bool DecodeOutput(std::string_view data, NodeOutputFields *output, bool again) {
  bool description_seen = false;
  return ForEachDecodedField(data, [&](const WireField &field) {
    switch (field.number) {
      case 1: return field.wire_type == 0;
      case 3:
        if (field.wire_type != 2 || std::exchange(description_seen, true)) return false;
        output->tensor_description = field.payload;
        return DecodeTensorDescription(field.payload, output, again);
      default: return true;
    }
  });
}

// AllocatorMemoryUsed, without allocation_records (left to protobuf).
bool DecodeMemory(std::string_view data, NodeMemoryFields *memory) {
  return ForEachDecodedField(data, [&](const WireField &field) {
    switch (field.number) {
      case 1:
        if (field.wire_type != 2) return false;
        memory->allocator_name = field.payload;
        return true;
      case 2:
        if (field.wire_type != 0) return false;
        memory->total_bytes = static_cast<int64_t>(field.varint);
        return true;
      case 5:
        if (field.wire_type != 0) return false;
        memory->allocator_bytes_in_use = static_cast<int64_t>(field.varint);
        return true;
      case 3: case 4: return field.wire_type == 0;
      case 6: return false;
      default: return true;
    }
  });
}

}  // namespace

bool DecodeNodeFields(std::string_view bytes, NodeFields *fields, NodeParts parts) {
  const bool again = parts != NodeParts::kAll;
  const bool names_only = parts == NodeParts::kNames;
  fields->node_name = {};
  fields->timeline_label = {};
  fields->all_start_micros = fields->op_end_rel_micros = fields->all_end_rel_micros = 0;
  fields->all_start_nanos = fields->op_end_rel_nanos = fields->all_end_rel_nanos = 0;
  fields->thread_id = 0;
  fields->outputs.clear();
  fields->memory.clear();
  return ForEachDecodedField(bytes, [&](const WireField &field) {
    const auto varint = [&](int64_t *value) {
      if (field.wire_type != 0) return false;
      *value = static_cast<int64_t>(field.varint);
      return true;
    };
    switch (field.number) {
      case 1:
        if (field.wire_type != 2) return false;
        fields->node_name = field.payload;
        return true;
      case 2: return varint(&fields->all_start_micros);
      case 4: return varint(&fields->op_end_rel_micros);
      case 5: return varint(&fields->all_end_rel_micros);
      case 13: return varint(&fields->all_start_nanos);
      case 15: return varint(&fields->op_end_rel_nanos);
      case 16: return varint(&fields->all_end_rel_nanos);
      case 3: case 9: case 14: case 17: return field.wire_type == 0;
      case 10:
        if (field.wire_type != 0) return false;
        fields->thread_id = static_cast<uint32_t>(field.varint);
        return true;
      case 8:
        if (field.wire_type != 2) return false;
        fields->timeline_label = field.payload;
        return true;
      case 6:
        if (field.wire_type != 2) return false;
        return again || DecodeMemory(field.payload, &fields->memory.emplace_back());
      case 7:
        if (field.wire_type != 2) return false;
        return names_only || DecodeOutput(field.payload, &fields->outputs.emplace_back(), again);
      case 11: case 12: return false;  // referenced_tensor, memory_stats: protobuf's
      default: return true;
    }
  });
}

absl::Status NodeExecStatsParser::Parse(const StepStatsRun &run, const DeviceStepStatsView &view,
                                        size_t index) {
  const std::string_view bytes = view.nodes[index];
  if (DecodeNodeFields(bytes, &fields_)) return absl::OkStatus();
  return ParseWithProtobuf(run, view, index);
}

void NodeExecStatsParser::ParseAgain(const StepStatsRun &run, const DeviceStepStatsView &view,
                                     size_t index, NodeParts parts) {
  if (DecodeNodeFields(view.nodes[index], &fields_, parts)) return;
  (void)ParseWithProtobuf(run, view, index);
}

absl::Status NodeExecStatsParser::ParseWithProtobuf(const StepStatsRun &run,
                                                    const DeviceStepStatsView &view, size_t index) {
  const std::string_view bytes = view.nodes[index];
  ++parsed_by_protobuf_;
  if (node_ == nullptr || ++parsed_on_arena_ > kNodesPerArena) {  // earlier parses' parts go
    arena_.Reset();
    node_ = google::protobuf::Arena::CreateMessage<tensorflow::NodeExecStats>(&arena_);
    parsed_on_arena_ = 1;
  }
  if (node_->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    NodeFieldsOf(*node_, &fields_, &descriptions_);
    return absl::OkStatus();
  }
  const uint64_t offset = run.offset + static_cast<uint64_t>(bytes.data() - run.message.data());
  return absl::DataLossError(absl::StrCat("'", run.file, "': byte offset ", offset, ": node ", index,
                                          " of device '", ToAbsl(view.device),
                                          "' is not a NodeExecStats"));
}

// Reads one file: detects its format, then yields its runs.
class StepStatsReader::FileCursor {
 public:
  // Reads `data` (`owner`'s bytes), named `path` in messages.
  static absl::StatusOr<std::unique_ptr<FileCursor>> Open(const std::string &path,
                                                         std::string_view data,
                                                         std::unique_ptr<FileBytes> owner,
                                                         bool named_as_event_file) {
    std::unique_ptr<FileCursor> cursor(new FileCursor(path, std::move(owner), data));
    if (data.empty()) return Damage(path, 0, "empty file");
    if (LooksLikeTfRecord(data)) {
      TfRecordReader peek(data);
      std::string_view first;
      const bool first_ok = peek.Next(&first).ok();
      cursor->format_ = named_as_event_file || (first_ok && IsEventRecord(first))
                            ? Format::kTensorBoard
                            : Format::kTfRecord;
      cursor->records_.emplace(data);
      return cursor;
    }
    std::string problem;
    uint64_t problem_offset = 0;
    bool ends_early = false;
    if (!CheckStepStatsMessage(data, &cursor->format_, &problem, &problem_offset, &ends_early)) {
      // The whole file is the message: a field running past its end is the file cut short.
      if (ends_early) {
        return Damage(path, problem_offset,
                      absl::StrCat("the file is cut short (a .pb is one message): ",
                                   problem.substr(std::strlen(kCorruptProtobuf))));
      }
      return Damage(path, problem_offset,
                    absl::StrCat("neither a TFRecord file (no valid record header) nor a binary "
                                 "RunMetadata or StepStats: ",
                                 problem));
    }
    return cursor;
  }

  Format format() const { return format_; }
  size_t records_seen() const { return records_seen_; }

  // OK with `*run` filled, OutOfRange at the end, DataLoss for damage.
  absl::Status Next(StepStatsRun *run) {
    run->file = path_;
    run->tag.clear();
    run->event_step.reset();
    if (!records_) {
      if (single_done_) return absl::OutOfRangeError("end");
      single_done_ = true;
      ++records_seen_;
      run->message = data_;
      run->message_format = format_;
      run->offset = 0;
      return absl::OkStatus();
    }
    while (true) {
      const uint64_t offset = records_->offset();
      std::string_view record;
      if (absl::Status status = records_->Next(&record); !status.ok()) {
        if (absl::IsOutOfRange(status)) return status;
        absl::Status named = absl::DataLossError(absl::StrCat("'", path_, "': ", status.message()));
        if (std::optional<CutFacts> cut = FileEndsEarly(status)) {
          cut->file = path_;
          named = MarkFileEndsEarly(std::move(named), *cut);
        }
        return named;
      }
      ++records_seen_;
      run->offset = offset;
      if (format_ == Format::kTfRecord) {
        std::string problem;
        uint64_t problem_offset = 0;
        if (!CheckStepStatsMessage(record, &run->message_format, &problem, &problem_offset)) {
          return RecordDamage(offset, absl::StrCat("not a RunMetadata record: ", problem, Where(
                                          offset + kTfRecordHeaderBytes, problem_offset)));
        }
        run->message = record;
        return absl::OkStatus();
      }
      tensorflow::Event &event = event_;
      if (!event.ParseFromArray(record.data(), static_cast<int>(record.size()))) {
        return RecordDamage(offset, "not an Event (the protobuf does not parse)");
      }
      if (!event.has_tagged_run_metadata()) continue;  // file_version, summaries, graphs
      const tensorflow::TaggedRunMetadata &tagged = event.tagged_run_metadata();
      std::string problem;
      uint64_t problem_offset = 0;
      if (!CheckStepStatsMessage(tagged.run_metadata(), &run->message_format, &problem,
                                 &problem_offset)) {
        return RecordDamage(
            offset, absl::StrCat("the run_metadata of tagged_run_metadata '", tagged.tag(),
                                 "' is no RunMetadata: ", problem,
                                 problem_offset == 0 ? "" : absl::StrCat(" (at byte ", problem_offset,
                                                                         " of run_metadata)")));
      }
      run->message = tagged.run_metadata();
      run->tag = tagged.tag();
      run->event_step = event.step();
      return absl::OkStatus();
    }
  }

 private:
  FileCursor(std::string path, std::unique_ptr<FileBytes> file, std::string_view data)
      : path_(std::move(path)), file_(std::move(file)), data_(data) {}

  // " (at byte offset N)" for a problem `relative` bytes into a payload starting at `payload`.
  static std::string Where(uint64_t payload, uint64_t relative) {
    return relative == 0 ? std::string() : absl::StrCat(" (at byte offset ", payload + relative, ")");
  }

  absl::Status RecordDamage(uint64_t offset, std::string_view problem) const {
    return absl::DataLossError(
        absl::StrCat("'", path_, "': record at byte offset ", offset, ": ", ToAbsl(problem)));
  }

  std::string path_;
  std::unique_ptr<FileBytes> file_;
  std::string_view data_;
  tensorflow::Event event_;  // event files: the event of the run delivered last
  Format format_ = Format::kRunMetadata;
  std::optional<TfRecordReader> records_;  // TFRecord formats
  bool single_done_ = false;
  size_t records_seen_ = 0;
};

StepStatsReader::StepStatsReader(std::string path, std::vector<std::string> files)
    : path_(std::move(path)), files_(std::move(files)) {}

StepStatsReader::~StepStatsReader() = default;

absl::StatusOr<std::unique_ptr<StepStatsReader>> StepStatsReader::Open(const std::string &path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error) return FileError("open", path, error.value());
  std::vector<std::string> files;
  if (std::filesystem::is_directory(status)) {
    absl::StatusOr<std::vector<std::string>> run = EventFilesOfOneRun(path);
    if (!run.ok()) return run.status();
    files = *std::move(run);
    if (files.empty()) {
      return absl::DataLossError(absl::StrCat(
          "'", path, "': byte offset 0: a directory with no event files (no file name below it "
          "contains \"tfevents\")"));
    }
  } else {
    files.push_back(path);
  }
  std::unique_ptr<StepStatsReader> reader(new StepStatsReader(path, std::move(files)));
  reader->FindRestarts();
  if (absl::Status opened = reader->OpenFile(0); !opened.ok()) return opened;
  return reader;
}

// The first step a file's runs record (its first tagged_run_metadata other than tfprof's
// "outside_steps" record); none when it has none or cannot be read (reading it proper says why).
std::optional<int64_t> StepStatsReader::FirstStepOf(const std::string &file) {
  absl::StatusOr<std::unique_ptr<FileBytes>> bytes = MapFile(file);
  if (!bytes.ok()) return std::nullopt;
  const std::string_view data = (*bytes)->data();
  absl::StatusOr<std::unique_ptr<FileCursor>> cursor =
      FileCursor::Open(file, data, *std::move(bytes), /*named_as_event_file=*/true);
  if (!cursor.ok()) return std::nullopt;
  StepStatsRun run;
  while ((*cursor)->Next(&run).ok()) {
    if (run.event_step.has_value() && run.tag != kOutsideStepsTag) return run.event_step;
  }
  return std::nullopt;
}

// A run folder's later event file that starts at a step an earlier file already passed is a job
// restarted from a checkpoint: as TensorBoard does, the earlier files' runs from that step on
// are dropped (the restarted job redid them), so each step number is read once and steps stay in
// order of time and of number.
void StepStatsReader::FindRestarts() {
  superseded_from_.assign(files_.size(), std::nullopt);
  std::optional<int64_t> earliest_later;  // the smallest first step of the files after `index`
  for (size_t index = files_.size(); index-- > 1;) {
    if (const std::optional<int64_t> first = FirstStepOf(files_[index])) {
      earliest_later = earliest_later ? std::min(*earliest_later, *first) : *first;
    }
    superseded_from_[index - 1] = earliest_later;
  }
}

absl::Status StepStatsReader::OpenFile(size_t index) {
  if (cursor_) records_seen_ += cursor_->records_seen();
  cursor_.reset();
  const bool named_as_event_file =
      std::filesystem::path(files_[index]).filename().string().find("tfevents") !=
      std::string::npos;
  absl::StatusOr<std::unique_ptr<FileBytes>> file = MapFile(files_[index]);
  if (!file.ok()) return file.status();
  const std::string_view data = (*file)->data();
  absl::StatusOr<std::unique_ptr<FileCursor>> cursor =
      FileCursor::Open(files_[index], data, *std::move(file), named_as_event_file);
  if (!cursor.ok()) return cursor.status();
  cursor_ = std::move(*cursor);
  next_file_ = index + 1;
  return absl::OkStatus();
}

Format StepStatsReader::format() const { return cursor_->format(); }

bool StepStatsReader::Superseded(const StepStatsRun &run) const {
  const size_t file = next_file_ - 1;  // the file `cursor_` reads
  if (file >= superseded_from_.size() || !superseded_from_[file]) return false;
  return run.event_step.has_value() && run.tag != kOutsideStepsTag &&
         *run.event_step >= *superseded_from_[file];
}

absl::Status StepStatsReader::Next(StepStatsRun *run) {
  while (true) {
    absl::Status status = cursor_ ? cursor_->Next(run) : absl::OutOfRangeError("end");
    if (status.ok() && Superseded(*run)) {
      ++superseded_runs_;
      continue;
    }
    if (status.ok()) {
      run->index = runs_++;
      return status;
    }
    if (!absl::IsOutOfRange(status)) {
      // A log directory's event file that ends early (its writer killed) loses its last record
      // only: the files after it are read too, and the cut is reported at the end.
      if (!FileEndsEarly(status) || next_file_ >= files_.size()) return status;
      if (first_cut_.ok()) first_cut_ = std::move(status);
    }
    if (next_file_ >= files_.size()) break;
    if (absl::Status opened = OpenFile(next_file_); !opened.ok()) return opened;
  }
  if (!first_cut_.ok()) return std::exchange(first_cut_, absl::OkStatus());
  if (runs_ == 0) {
    const size_t records = records_seen_ + (cursor_ ? cursor_->records_seen() : 0);
    return absl::DataLossError(absl::StrCat(
        "'", path_, "': byte offset 0: no step statistics to convert (", records, " records in ",
        files_.size(), files_.size() == 1 ? " file" : " files",
        ", none a tagged_run_metadata event)"));
  }
  return absl::OutOfRangeError("end of runs");
}

}  // namespace tfprof
