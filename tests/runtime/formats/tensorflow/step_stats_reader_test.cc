// Reading step statistics: format detection by content, streaming of runs, and damage reported
// with the file, the byte offset and the problem while the runs before it stay readable.
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/tensorflow/log_directory.h"
#include "runtime/formats/tensorflow/step_stats_decode.h"
#include "runtime/formats/tensorflow/step_stats_reader.h"
#include "support/step_stats_builder.h"
#include "support/test_files.h"

namespace tfprof {

namespace {

using tfprof_test::FileVersionRecord;
using tfprof_test::Framed;
using tfprof_test::SmallRun;
using tfprof_test::TaggedRecord;
using tfprof_test::TempDir;
using tfprof_test::WriteFile;

// A run's step statistics, its message parsed whole by protobuf (the reader never does).
tensorflow::StepStats StepStatsOf(const StepStatsRun &run) {
  const int size = static_cast<int>(run.message.size());
  if (run.message_format == Format::kStepStats) {
    tensorflow::StepStats stats;
    REQUIRE(stats.ParseFromArray(run.message.data(), size));
    return stats;
  }
  tensorflow::RunMetadata metadata;
  REQUIRE(metadata.ParseFromArray(run.message.data(), size));
  return metadata.step_stats();
}

struct ReadResult {
  absl::Status open;
  absl::Status end;  // the status that ended reading
  std::vector<StepStatsRun> runs;      // their messages no longer valid
  std::vector<tensorflow::StepStats> step_stats;  // each run's, parsed while it was
  Format format = Format::kRunMetadata;
};

ReadResult ReadAll(const std::string &path) {
  ReadResult result;
  absl::StatusOr<std::unique_ptr<StepStatsReader>> reader = StepStatsReader::Open(path);
  result.open = reader.status();
  if (!reader.ok()) return result;
  result.format = (*reader)->format();
  StepStatsRun run;
  while ((result.end = (*reader)->Next(&run)).ok()) {
    result.step_stats.push_back(StepStatsOf(run));
    result.runs.push_back(run);
  }
  return result;
}

std::string Message(const absl::Status &status) { return std::string(status.message()); }

std::string ThreeRecords(std::vector<size_t> *offsets) {
  std::string data;
  for (int index = 0; index < 3; ++index) {
    offsets->push_back(data.size());
    data += Framed(SmallRun(1000 * (index + 1)).SerializeAsString());
  }
  return data;
}

}  // namespace

TEST_CASE("reader: a binary RunMetadata and a bare StepStats are told apart by content") {
  TempDir dir;
  const tensorflow::RunMetadata run = SmallRun(5000);
  WriteFile(dir.File("run.bin"), run.SerializeAsString());
  WriteFile(dir.File("stats.pb"), run.step_stats().SerializeAsString());

  ReadResult metadata = ReadAll(dir.File("run.bin"));
  REQUIRE(metadata.open.ok());
  CHECK(metadata.format == Format::kRunMetadata);
  REQUIRE(metadata.runs.size() == 1);
  CHECK(absl::IsOutOfRange(metadata.end));
  CHECK(metadata.step_stats[0].dev_stats(0).node_stats_size() == 3);

  ReadResult stats = ReadAll(dir.File("stats.pb"));
  REQUIRE(stats.open.ok());
  CHECK(stats.format == Format::kStepStats);
  REQUIRE(stats.runs.size() == 1);
  const tensorflow::DeviceStepStats &device = stats.step_stats[0].dev_stats(0);
  CHECK(device.device() == run.step_stats().dev_stats(0).device());
  CHECK(device.node_stats_size() == 3);
  CHECK(device.thread_names().at(12) == "worker_b");
}

TEST_CASE("reader: a TFRecord file of RunMetadata yields its runs in order with their offsets") {
  TempDir dir;
  std::vector<size_t> offsets;
  WriteFile(dir.File("runs.pb"), ThreeRecords(&offsets));  // the extension does not decide
  ReadResult result = ReadAll(dir.File("runs.pb"));
  REQUIRE(result.open.ok());
  CHECK(result.format == Format::kTfRecord);
  REQUIRE(result.runs.size() == 3);
  for (size_t index = 0; index < 3; ++index) {
    CHECK(result.runs[index].index == index);
    CHECK(result.runs[index].offset == offsets[index]);
    CHECK(result.step_stats[index].dev_stats(0).node_stats(0).all_start_micros() ==
          static_cast<int64_t>(1000 * (index + 1)));
  }
  CHECK(absl::IsOutOfRange(result.end));
}

TEST_CASE("reader: event files give their tagged runs - a log directory all of its event files") {
  TempDir dir;
  tensorflow::Event graph;
  graph.set_graph_def("not read");
  const std::string first = FileVersionRecord() + tfprof_test::EventRecord(graph) +
                            TaggedRecord(SmallRun(100), "step_000001", 1) +
                            TaggedRecord(SmallRun(200), "step_000002", 2);
  std::filesystem::create_directories(dir.path() / "logs" / "eval");
  WriteFile(dir.File("logs/events.out.tfevents.1.host"), first);
  WriteFile(dir.File("logs/eval/events.out.tfevents.2.host"),
            FileVersionRecord() + TaggedRecord(SmallRun(300), "eval_0", 7));
  WriteFile(dir.File("logs/notes.txt"), "not an event file");

  ReadResult file = ReadAll(dir.File("logs/events.out.tfevents.1.host"));
  REQUIRE(file.open.ok());
  CHECK(file.format == Format::kTensorBoard);
  REQUIRE(file.runs.size() == 2);
  CHECK(file.runs[0].tag == "step_000001");
  CHECK(file.runs[1].event_step == 2);

  // Two folders with event files are two TensorBoard runs: not one trace.
  ReadResult both = ReadAll(dir.File("logs"));
  CHECK(absl::IsInvalidArgument(both.open));
  CHECK(Message(both.open) ==
        dir.File("logs") + ": holds 2 TensorBoard runs, each a trace of its own: . (1 event file), "
        "eval (1 event file). Give one run's folder (such as " + dir.File("logs/eval") +
        "), or put runs on one timeline with 'tfprof merge -o OUT RUN_DIR...'");

  // A folder above a single run reads that run.
  std::filesystem::remove(dir.File("logs/events.out.tfevents.1.host"));
  ReadResult above = ReadAll(dir.File("logs"));
  REQUIRE(above.open.ok());
  REQUIRE(above.runs.size() == 1);
  CHECK(above.runs[0].tag == "eval_0");
  CHECK(above.runs[0].file == dir.File("logs/eval/events.out.tfevents.2.host"));
  CHECK(absl::IsOutOfRange(above.end));
}

TEST_CASE("reader: a run's event files are read in the order written - a restart supersedes") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "run");
  // Written at second 999 (steps 1-4), then restarted from the checkpoint of step 3 at second
  // 1000: by name "1000" sorts before "999", by time it is later.
  WriteFile(dir.File("run/events.out.tfevents.999.host"),
            FileVersionRecord() + TaggedRecord(SmallRun(100), "step1", 1) +
                TaggedRecord(SmallRun(200), "step2", 2) + TaggedRecord(SmallRun(300), "step3", 3) +
                TaggedRecord(SmallRun(400), "step4", 4));
  WriteFile(dir.File("run/events.out.tfevents.1000.host"),
            FileVersionRecord() + TaggedRecord(SmallRun(500), "step3", 3) +
                TaggedRecord(SmallRun(600), "step4", 4) + TaggedRecord(SmallRun(700), "step5", 5));
  absl::StatusOr<std::unique_ptr<StepStatsReader>> reader = StepStatsReader::Open(dir.File("run"));
  REQUIRE(reader.ok());
  std::vector<std::pair<int64_t, std::string>> read;  // (step, file's seconds)
  StepStatsRun run;
  absl::Status status;
  while ((status = (*reader)->Next(&run)).ok()) {
    read.emplace_back(*run.event_step, run.file.substr(run.file.find("tfevents.") + 9));
  }
  CHECK(absl::IsOutOfRange(status));
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {1, "999.host"}, {2, "999.host"}, {3, "1000.host"}, {4, "1000.host"}, {5, "1000.host"}};
  CHECK(read == expected);
  CHECK((*reader)->superseded_runs() == 2);
}

TEST_CASE("reader: event file names give their Unix seconds") {
  CHECK(EventFileSeconds("events.out.tfevents.1795875401.vm.16084.0.v2") == 1795875401);
  CHECK(EventFileSeconds("events.out.tfevents.7.host") == 7);
  CHECK(EventFileSeconds("my.tfevents.host") == -1);
  CHECK(EventFileSeconds("notes.txt") == -1);
}

TEST_CASE("reader: damage names the file, the byte offset and the problem - earlier runs survive") {
  TempDir dir;
  std::vector<size_t> offsets;
  const std::string data = ThreeRecords(&offsets);
  const std::string path = dir.File("runs.tfrecord");
  const std::string third_at =
      "'" + path + "': record at byte offset " + std::to_string(offsets[2]) + ": ";

  SUBCASE("truncated") {
    WriteFile(path, data.substr(0, data.size() - 30));
    ReadResult result = ReadAll(path);
    REQUIRE(result.open.ok());
    CHECK(result.runs.size() == 2);
    CHECK(absl::IsDataLoss(result.end));
    CHECK(Message(result.end).rfind(third_at + "truncated", 0) == 0);
  }
  SUBCASE("a bad data CRC") {
    std::string damaged = data;
    damaged[offsets[2] + 20] ^= 0x40;
    WriteFile(path, damaged);
    ReadResult result = ReadAll(path);
    CHECK(result.runs.size() == 2);
    CHECK(Message(result.end).rfind(third_at + "data CRC mismatch", 0) == 0);
  }
  SUBCASE("a record that is no RunMetadata") {
    WriteFile(path, data.substr(0, offsets[2]) + Framed("certainly not a protobuf"));
    ReadResult result = ReadAll(path);
    CHECK(result.runs.size() == 2);
    CHECK(absl::IsDataLoss(result.end));
    CHECK(Message(result.end).rfind(third_at + "not a RunMetadata record: corrupt protobuf", 0) == 0);
  }
  SUBCASE("an empty record, which parses as a RunMetadata with nothing in it") {
    WriteFile(path, data.substr(0, offsets[2]) + Framed(""));
    ReadResult result = ReadAll(path);
    CHECK(result.runs.size() == 2);
    CHECK(Message(result.end) == third_at + "not a RunMetadata record: empty message (0 bytes)");
  }
  SUBCASE("a record that parses but holds no step statistics") {
    tensorflow::RunMetadata no_stats;
    no_stats.add_partition_graphs()->add_node()->set_name("n");
    WriteFile(path, data.substr(0, offsets[2]) + Framed(no_stats.SerializeAsString()));
    ReadResult result = ReadAll(path);
    CHECK(result.runs.size() == 2);
    CHECK(Message(result.end).find("holds no DeviceStepStats") != std::string::npos);
  }
}

TEST_CASE("reader: files that are no step statistics at all fail to open, saying why") {
  TempDir dir;
  SUBCASE("empty") {
    WriteFile(dir.File("empty.pb"), "");
    ReadResult result = ReadAll(dir.File("empty.pb"));
    CHECK(absl::IsDataLoss(result.open));
    CHECK(Message(result.open) == "'" + dir.File("empty.pb") + "': byte offset 0: empty file");
  }
  SUBCASE("wrong magic: text") {
    WriteFile(dir.File("trace.json"), "{\"traceEvents\": []}\n");
    ReadResult result = ReadAll(dir.File("trace.json"));
    CHECK(absl::IsDataLoss(result.open));
    CHECK(Message(result.open).rfind("'" + dir.File("trace.json") + "': byte offset ", 0) == 0);
    CHECK(Message(result.open).find("neither a TFRecord file (no valid record header) nor a binary "
                                    "RunMetadata or StepStats: corrupt protobuf") != std::string::npos);
  }
  SUBCASE("a truncated .pb names where its framing breaks") {
    const std::string bytes = SmallRun(5000).SerializeAsString();
    WriteFile(dir.File("cut.pb"), bytes.substr(0, bytes.size() - 5));
    ReadResult result = ReadAll(dir.File("cut.pb"));
    CHECK(absl::IsDataLoss(result.open));
    // The outer field's length runs past the end: reported where that field starts.
    CHECK(Message(result.open).rfind("'" + dir.File("cut.pb") + "': byte offset 0: ", 0) == 0);
    CHECK(Message(result.open) ==
          "'" + dir.File("cut.pb") + "': byte offset 0: the file is cut short (a .pb is one "
          "message): field 1's length (" + std::to_string(bytes.size() - 3) + " bytes) runs past "
          "the end of the message (" + std::to_string(bytes.size() - 8) + " bytes left)");
  }
  SUBCASE("a directory with no event files") {
    std::filesystem::create_directories(dir.path() / "logs");
    WriteFile(dir.File("logs/readme.txt"), "hello");
    ReadResult result = ReadAll(dir.File("logs"));
    CHECK(absl::IsDataLoss(result.open));
    CHECK(Message(result.open).find("'" + dir.File("logs") + "': byte offset 0: a directory with no "
                                    "event files") == 0);
  }
  SUBCASE("an event file with no run metadata") {
    WriteFile(dir.File("events.out.tfevents.1.h"), FileVersionRecord());
    ReadResult result = ReadAll(dir.File("events.out.tfevents.1.h"));
    REQUIRE(result.open.ok());
    CHECK(result.runs.empty());
    CHECK(absl::IsDataLoss(result.end));
    CHECK(Message(result.end).find("no step statistics to convert (1 records in 1 file, none a "
                                   "tagged_run_metadata event)") != std::string::npos);
  }
  SUBCASE("a missing file is a file error, not damage") {
    ReadResult result = ReadAll(dir.File("missing.pb"));
    CHECK(absl::IsUnavailable(result.open));
    CHECK(Message(result.open).find("missing.pb': No such file or directory") != std::string::npos);
  }
}

TEST_CASE("reader: a tagged_run_metadata whose payload is no RunMetadata names its record") {
  TempDir dir;
  const std::string good = FileVersionRecord() + TaggedRecord(SmallRun(100), "ok", 1);
  tensorflow::Event bad;
  bad.mutable_tagged_run_metadata()->set_tag("broken");
  bad.mutable_tagged_run_metadata()->set_run_metadata("\xff\xff garbage");
  const std::string path = dir.File("events.out.tfevents.9.h");
  WriteFile(path, good + tfprof_test::EventRecord(bad));
  ReadResult result = ReadAll(path);
  CHECK(result.runs.size() == 1);
  CHECK(Message(result.end).rfind("'" + path + "': record at byte offset " +
                                      std::to_string(good.size()) +
                                      ": the run_metadata of tagged_run_metadata 'broken' is no "
                                      "RunMetadata: corrupt protobuf",
                                  0) == 0);
}

namespace {

// What protobuf makes of a serialized node, as NodeFields (the decoder's reference).
struct ProtobufNode {
  tensorflow::NodeExecStats message;
  std::vector<std::string> descriptions;
  NodeFields fields;
  bool parsed = false;
  explicit ProtobufNode(const std::string &bytes) {
    parsed = message.ParseFromString(bytes);
    if (parsed) NodeFieldsOf(message, &fields, &descriptions);
  }
};

// The fields of two decodings, equal field by field (TensorDescriptions compared parsed: the
// serialization of a parsed one may order its fields differently).
void CheckSameFields(const NodeFields &got, const NodeFields &want) {
  CHECK(got.node_name == want.node_name);
  CHECK(got.timeline_label == want.timeline_label);
  CHECK(got.all_start_micros == want.all_start_micros);
  CHECK(got.op_end_rel_micros == want.op_end_rel_micros);
  CHECK(got.all_end_rel_micros == want.all_end_rel_micros);
  CHECK(got.all_start_nanos == want.all_start_nanos);
  CHECK(got.op_end_rel_nanos == want.op_end_rel_nanos);
  CHECK(got.all_end_rel_nanos == want.all_end_rel_nanos);
  CHECK(got.thread_id == want.thread_id);
  REQUIRE(got.outputs.size() == want.outputs.size());
  for (size_t index = 0; index < got.outputs.size(); ++index) {
    CHECK(got.outputs[index].allocator_name == want.outputs[index].allocator_name);
    CHECK(got.outputs[index].requested_bytes == want.outputs[index].requested_bytes);
    tensorflow::TensorDescription got_description;
    tensorflow::TensorDescription want_description;
    REQUIRE(got_description.ParseFromString(std::string(got.outputs[index].tensor_description)));
    REQUIRE(want_description.ParseFromString(std::string(want.outputs[index].tensor_description)));
    CHECK(got_description.SerializeAsString() == want_description.SerializeAsString());
  }
  REQUIRE(got.memory.size() == want.memory.size());
  for (size_t index = 0; index < got.memory.size(); ++index) {
    CHECK(got.memory[index].allocator_name == want.memory[index].allocator_name);
    CHECK(got.memory[index].total_bytes == want.memory[index].total_bytes);
    CHECK(got.memory[index].allocator_bytes_in_use == want.memory[index].allocator_bytes_in_use);
  }
}

// Decodes `bytes` with NodeExecStatsParser, as the readers do.
absl::Status ParseNode(NodeExecStatsParser &parser, const std::string &bytes) {
  StepStatsRun run;
  run.message = bytes;
  run.file = "f.pb";
  DeviceStepStatsView view;
  view.device = "/cpu:0";
  view.nodes.push_back(run.message);
  return parser.Parse(run, view, 0);
}

tensorflow::NodeExecStats FullNode() {
  tensorflow::DeviceStepStats device;
  tensorflow::NodeExecStats *node =
      tfprof_test::AddOp(&device, "dense/MatMul", "dense/MatMul = MatMul(x, w)", 1700000000000001,
                         7, 4242);
  tfprof_test::AddOutput(node, "GPU_0_bfc", 4096);
  tfprof_test::AddOutput(node, "cpu", -3);
  tensorflow::TensorShapeProto *shape =
      node->mutable_output(1)->mutable_tensor_description()->mutable_shape();
  shape->add_dim()->set_name("batch");
  shape->set_unknown_rank(true);
  node->set_all_start_nanos(1700000000000001234);
  node->set_op_end_rel_nanos(6500);
  node->set_all_end_rel_nanos(7100);
  node->set_op_start_rel_micros(1);
  node->set_scheduled_micros(-5);
  tensorflow::AllocatorMemoryUsed *memory = node->add_memory();
  memory->set_allocator_name("GPU_0_bfc");
  memory->set_total_bytes(1 << 20);
  memory->set_peak_bytes(1 << 21);
  memory->set_allocator_bytes_in_use(123456);
  node->add_memory()->set_allocator_name("cpu");
  return *node;
}

}  // namespace

TEST_CASE("node decoder: the fields protobuf gives, decoded by hand from the wire") {
  NodeExecStatsParser parser;
  SUBCASE("a node with every field the readers use") {
    const std::string bytes = FullNode().SerializeAsString();
    const ProtobufNode want(bytes);
    NodeFields got;
    REQUIRE(DecodeNodeFields(bytes, &got));
    CheckSameFields(got, want.fields);
    CHECK(got.thread_id == 4242);
    CHECK(got.outputs.size() == 2);
    CHECK(got.outputs[1].requested_bytes == -3);
    CHECK(got.memory[0].allocator_bytes_in_use == 123456);
  }
  SUBCASE("scalars given twice: the last wins; unknown fields are skipped") {
    std::string bytes = FullNode().SerializeAsString();
    AppendLengthDelimited(1, "renamed", bytes);
    AppendVarintField(2, 99, bytes);
    AppendVarintField(10, uint64_t{1} << 33 | 5, bytes);  // uint32: the low 32 bits
    AppendVarintField(100, 1, bytes);                    // no such field
    AppendLengthDelimited(200, "skipped", bytes);
    const ProtobufNode want(bytes);
    REQUIRE(want.parsed);
    NodeFields got;
    REQUIRE(DecodeNodeFields(bytes, &got));
    CheckSameFields(got, want.fields);
    CHECK(got.node_name == "renamed");
    CHECK(got.thread_id == 5);
  }
  SUBCASE("what the decoder leaves to protobuf gives protobuf's fields") {
    std::string bytes = FullNode().SerializeAsString();
    SUBCASE("memory_stats") {
      tensorflow::NodeExecStats node = FullNode();
      node.mutable_memory_stats()->set_temp_memory_size(8);
      bytes = node.SerializeAsString();
    }
    SUBCASE("a tensor_description given twice (protobuf merges them)") {
      tensorflow::NodeOutput output;
      output.mutable_tensor_description()->mutable_allocation_description()->set_requested_bytes(5);
      std::string twice = output.SerializeAsString();
      tensorflow::NodeOutput second;
      second.mutable_tensor_description()->mutable_allocation_description()->set_allocator_name(
          "late");
      twice += second.SerializeAsString();
      AppendLengthDelimited(7, twice, bytes);
    }
    SUBCASE("a known field of another wire type (protobuf keeps it as an unknown field)") {
      AppendVarintField(1, 7, bytes);
    }
    SUBCASE("an unknown group (protobuf skips it)") {
      bytes += "\xa3\x06\xa4\x06";  // field 100: start group, end group
    }
    const ProtobufNode want(bytes);
    REQUIRE(want.parsed);
    NodeFields hand;
    CHECK_FALSE(DecodeNodeFields(bytes, &hand));
    REQUIRE(ParseNode(parser, bytes).ok());
    CHECK(parser.parsed_by_protobuf() == 1);
    CheckSameFields(parser.node(), want.fields);
  }
  SUBCASE("a damaged node is protobuf's error") {
    std::string bytes = FullNode().SerializeAsString();
    AppendLengthDelimited(7, std::string("\x1a\x10short", 7), bytes);  // a TensorDescription cut
    CHECK_FALSE(ProtobufNode(bytes).parsed);
    const absl::Status status = ParseNode(parser, bytes);
    CHECK(absl::IsDataLoss(status));
    CHECK(Message(status) ==
          "'f.pb': byte offset 0: node 0 of device '/cpu:0' is not a NodeExecStats");
  }
  SUBCASE("parsed nodes after a protobuf one are decoded by hand again") {
    tensorflow::NodeExecStats node = FullNode();
    node.mutable_memory_stats()->set_temp_memory_size(8);
    REQUIRE(ParseNode(parser, node.SerializeAsString()).ok());
    const std::string plain = FullNode().SerializeAsString();
    REQUIRE(ParseNode(parser, plain).ok());
    CHECK(parser.parsed_by_protobuf() == 1);
    CheckSameFields(parser.node(), ProtobufNode(plain).fields);
  }
  SUBCASE("decoded again, a node gives the same fields but its memory entries") {
    const std::string plain = FullNode().SerializeAsString();
    REQUIRE(ParseNode(parser, plain).ok());
    StepStatsRun run;
    run.message = plain;
    DeviceStepStatsView view;
    view.nodes.push_back(run.message);
    parser.ParseAgain(run, view, 0, NodeParts::kAgain);
    ProtobufNode want(plain);
    CHECK(parser.node().memory.empty());
    want.fields.memory.clear();
    CheckSameFields(parser.node(), want.fields);
    parser.ParseAgain(run, view, 0, NodeParts::kNames);
    CHECK(parser.node().outputs.empty());
    want.fields.outputs.clear();
    CheckSameFields(parser.node(), want.fields);
    CHECK(parser.parsed_by_protobuf() == 0);
  }
}

TEST_CASE("node decoder: of mutated nodes it decodes only what protobuf parses, alike") {
  // Every byte of a node flipped or cut in turn, a few ways each: whenever the hand decoder
  // accepts the bytes, protobuf must parse them and give the same fields.
  const std::string node = FullNode().SerializeAsString();
  size_t decoded = 0;
  size_t refused = 0;
  std::vector<std::string> variants;
  for (size_t at = 0; at < node.size(); ++at) {
    for (const int value : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::string changed = node;
      changed[at] = static_cast<char>(value);
      variants.push_back(std::move(changed));
    }
    std::string flipped = node;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x08);  // another wire type, or value
    variants.push_back(std::move(flipped));
    variants.push_back(node.substr(0, at));
  }
  for (const std::string &bytes : variants) {
    NodeFields hand;
    if (!DecodeNodeFields(bytes, &hand)) {
      ++refused;
      continue;
    }
    ++decoded;
    ProtobufNode want(bytes);
    REQUIRE(want.parsed);
    CheckSameFields(hand, want.fields);
    // Decoded again, as the timeline layout's later passes do, the parts give the same fields.
    want.fields.memory.clear();
    REQUIRE(DecodeNodeFields(bytes, &hand, NodeParts::kAgain));
    CheckSameFields(hand, want.fields);
    want.fields.outputs.clear();
    REQUIRE(DecodeNodeFields(bytes, &hand, NodeParts::kNames));
    CheckSameFields(hand, want.fields);
  }
  CHECK(decoded > 100);  // both kinds occur: the check above is not vacuous
  CHECK(refused > 100);
}

}  // namespace tfprof
