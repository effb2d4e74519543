// Reads TensorFlow step statistics from the files TensorFlow and tfprof write: a binary RunMetadata
// or bare StepStats (.pb), a TFRecord file of RunMetadata records, a TensorBoard event file
// (tagged_run_metadata events) or a log directory of event files. The format is detected from the
// content. Runs are delivered one at a time; the files are mapped, never copied whole.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/arena.h"
#include "runtime/formats/format.h"
#include "runtime/formats/tensorflow/step_stats_decode.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace tfprof {

// One run (one session.run, or one step of tfprof's writer).
//
// Runs are delivered serialized, checked on the wire (CheckStepStatsMessage()), never parsed whole
// (a parsed RunMetadata costs about 1.2 KB of heap per node): readers take them device by device
// with ForEachDeviceOf() and node by node with NodeExecStatsParser.
struct StepStatsRun {
  // The run's serialized message, a RunMetadata or a bare StepStats as `message_format` says:
  // valid until the next Next().
  std::string_view message;
  Format message_format = Format::kRunMetadata;
  std::string tag;                   // the event's tag (event files only)
  std::optional<int64_t> event_step;  // Event.step (event files only)
  size_t index = 0;                   // runs delivered before this one from the same input
  std::string file;                   // the file it came from
  uint64_t offset = 0;                // byte offset of its record in that file
};

class StepStatsReader {
 public:
  // Opens a file or a TensorBoard run's directory (every file below it whose name contains
  // "tfevents", in the order written: EventFilesOfOneRun()). Fails with Unavailable when a path
  // cannot be opened or read, DataLoss when the first file is empty or in no supported format, or
  // a directory holds no event file, InvalidArgument when it holds several runs.
  //
  // A run's later event file that starts at a step number an earlier file already reached (a job
  // restarted from a checkpoint) supersedes the earlier files' runs from that number on, as in
  // TensorBoard: they are skipped, and counted by superseded_runs().
  static absl::StatusOr<std::unique_ptr<StepStatsReader>> Open(const std::string &path);

  ~StepStatsReader();
  StepStatsReader(const StepStatsReader &) = delete;
  StepStatsReader &operator=(const StepStatsReader &) = delete;

  // Fills `*run` and returns OK; OutOfRange at the clean end; DataLoss naming the file, the byte
  // offset and the problem for damage (every run before it has been delivered), or when the input
  // held no run at all. Unavailable when a later file of a directory cannot be read.
  absl::Status Next(StepStatsRun *run);

  // The format of the file being read (of the first one before any Next()).
  Format format() const;

  // Runs skipped so far as redone by a restarted job's later event file.
  size_t superseded_runs() const { return superseded_runs_; }

 private:
  class FileCursor;
  StepStatsReader(std::string path, std::vector<std::string> files);
  absl::Status OpenFile(size_t index);
  static std::optional<int64_t> FirstStepOf(const std::string &file);
  void FindRestarts();
  bool Superseded(const StepStatsRun &run) const;

  std::string path_;
  std::vector<std::string> files_;
  size_t next_file_ = 0;
  std::unique_ptr<FileCursor> cursor_;
  size_t runs_ = 0;
  absl::Status first_cut_;  // the first file of a directory found ending early
  size_t records_seen_ = 0;  // records of all files, for the "nothing to convert" message
  // By file: its runs from this step number on are redone by a later file (a restart).
  std::vector<std::optional<int64_t>> superseded_from_;
  size_t superseded_runs_ = 0;
};

// Interprets `bytes` as a serialized RunMetadata, else as a StepStats, on the wire: every field's
// framing against the schema, strings UTF-8, and at least one DeviceStepStats whose device name
// is printable text (protobuf parsers accept many byte strings; this rejects what is no step
// data). `*format` is kRunMetadata or kStepStats. On failure `*problem` says what was wrong and
// `*problem_offset` where in `bytes` (0 when the framing is sound and the content is wrong);
// `*ends_early` (when given) whether the problem is a top-level field running past the end of
// `bytes` (of a whole .pb file: the file cut short) rather than corrupt bytes.
bool CheckStepStatsMessage(std::string_view bytes, Format *format, std::string *problem,
                           uint64_t *problem_offset, bool *ends_early = nullptr);

// One DeviceStepStats of a serialized run, as ForEachDeviceOf() hands it over: its name, its
// thread names, and each NodeExecStats still serialized (parse them one at a time).
struct DeviceStepStatsView {
  std::string_view device;
  // By thread id, the last entry of an id winning as when parsed (looked up per node: a list
  // made 80,000 threads cost 80,000^2 steps).
  absl::flat_hash_map<uint32_t, std::string_view> thread_names;
  std::vector<std::string_view> nodes;
};

// Visits the devices of `message` (a RunMetadata or a StepStats, as `format` says, checked by
// CheckStepStatsMessage()). Returns the first error `visit` returns.
absl::Status ForEachDeviceOf(std::string_view message, Format format,
                             const std::function<absl::Status(const DeviceStepStatsView &)> &visit);

// What NodeExecStatsParser and DecodeNodeFields() decode of a node.
enum class NodeParts : uint8_t {
  kAll,
  kAgain,  // a node decoded before: all but its memory entries (left empty), shapes not checked
  kNames,  // a node decoded before: its scalars, name and label only (no outputs or memory)
};

// Decodes nodes one at a time into NodeFields (step_stats_decode.h): by hand, straight from the
// wire, for the fields the readers use; a node holding anything the hand decoder leaves alone
// (fields it does not walk, such as memory_stats; a message field given twice, which protobuf
// merges; a field of an unexpected wire type; framing it cannot read) is parsed by protobuf
// instead, on an arena emptied every kNodesPerArena nodes, so the result and the errors are
// protobuf's in every case.
class NodeExecStatsParser {
 public:
  // Decodes the `index`th node of `view`, a device of `run`; DataLoss naming the file, the byte
  // offset, the node and the device when it is no NodeExecStats. node() is valid until the next
  // Parse() (and while `run`'s message is).
  absl::Status Parse(const StepStatsRun &run, const DeviceStepStatsView &view, size_t index);
  const NodeFields &node() const { return fields_; }

  // Decodes again a node Parse() accepted, for a later pass over a run, only the `parts` it needs
  // (kAgain or kNames); its framing is not checked again.
  void ParseAgain(const StepStatsRun &run, const DeviceStepStatsView &view, size_t index,
                  NodeParts parts);

  // Nodes left to protobuf so far (for tests).
  size_t parsed_by_protobuf() const { return parsed_by_protobuf_; }

 private:
  absl::Status ParseWithProtobuf(const StepStatsRun &run, const DeviceStepStatsView &view,
                                 size_t index);

  static constexpr size_t kNodesPerArena = 1024;
  NodeFields fields_;
  google::protobuf::Arena arena_;
  tensorflow::NodeExecStats *node_ = nullptr;
  size_t parsed_on_arena_ = 0;
  size_t parsed_by_protobuf_ = 0;
  std::vector<std::string> descriptions_;  // the outputs' TensorDescriptions of a parsed node
};

// Decodes `bytes`, a serialized NodeExecStats, into `*fields` by hand; false when it holds
// something left to protobuf (see NodeExecStatsParser), `*fields` then undefined. `parts`: what
// to decode (kAgain and kNames only for bytes that kAll accepted, or protobuf parsed).
bool DecodeNodeFields(std::string_view bytes, NodeFields *fields,
                      NodeParts parts = NodeParts::kAll);

}  // namespace tfprof
