// Names in any bytes: the C ABI takes them as given, and every TensorFlow output holds them as
// valid UTF-8 (TensorFlow's and TensorBoard's protobuf reject anything else), while files that
// older writers filled with invalid bytes still read.
#include "runtime/common/utf8.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/formats/trace_reader.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/common/string_view_bridge.h"
#include "support/model_builders.h"
#include "support/step_stats_builder.h"
#include "support/test_files.h"
#include "tfprof/tensorflow/run_metadata.pb.h"
#include "tfprof/tensorflow/step_stats.pb.h"

namespace {

using tfprof::Activity;
using tfprof::ActivityKind;
using tfprof::Format;
using tfprof::IsValidUtf8;
using tfprof::ToValidUtf8;
using tfprof::Trace;
using tfprof_test::ReadFile;
using tfprof_test::TempDir;

constexpr char kFffd[] = "\xEF\xBF\xBD";

// A lone continuation byte, a cut two-byte sequence, an overlong form and a surrogate.
const std::vector<std::string> kInvalidNames = {"MatMul\xff", "conv\xc3(", "over\xc0\xafong",
                                                "sur\xed\xa0\x80gate"};

Trace TraceWithInvalidNames() {
  Trace trace;
  trace.format = Format::kChromeJson;
  trace.wall_offset_ns = int64_t{1700000000} * 1000000000;
  trace.processes.push_back(tfprof_test::ProcessOf(42, "trainer"));
  trace.tracks.push_back(
      tfprof_test::TrackOf(0, 42, "worker\xe2\x82", tfprof::TrackKind::kHostThread, -1, -1));
  int64_t ns = 1000;
  for (const std::string &name : kInvalidNames) {
    Activity activity;
    activity.kind = ActivityKind::kHostOp;
    activity.name = trace.names.Intern(name);
    activity.track = 0;
    activity.begin_ns = ns;
    activity.end_ns = ns + 500;
    trace.activities.push_back(activity);
    ns += 1000;
  }
  trace.end_ns = ns;
  return trace;
}

std::string Written(const Trace &trace, const std::string &path, Format format) {
  const absl::StatusOr<tfprof::WrittenTrace> written =
      tfprof::WriteTrace(trace, path, format);
  INFO(std::string(tfprof::ToStd(written.status().message())));
  REQUIRE(written.ok());
  return written->path;
}

std::vector<std::string> ActivityNames(const Trace &trace) {
  std::vector<std::string> names;
  for (const Activity &activity : trace.activities) {
    if (activity.kind == ActivityKind::kHostOp) names.push_back(trace.names.Get(activity.name));
  }
  return names;
}

// Every text field of the step statistics, as bytes.
std::vector<std::string> TextFields(const tensorflow::StepStats &stats) {
  std::vector<std::string> texts;
  for (const tensorflow::DeviceStepStats &device : stats.dev_stats()) {
    texts.push_back(device.device());
    for (const auto &[thread, name] : device.thread_names()) texts.push_back(name);
    for (const tensorflow::NodeExecStats &node : device.node_stats()) {
      texts.push_back(node.node_name());
      texts.push_back(node.timeline_label());
    }
  }
  return texts;
}

}  // namespace

TEST_CASE("utf8: valid sequences pass, each byte of an invalid one becomes U+FFFD") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8("plain ascii"));
  CHECK(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  CHECK(ToValidUtf8("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK_FALSE(IsValidUtf8("\xff"));
  CHECK(ToValidUtf8("a\xff" "b") == std::string("a") + kFffd + "b");
  // A cut sequence: the lead byte is replaced, the byte after it kept.
  CHECK(ToValidUtf8("\xc3(") == std::string(kFffd) + "(");
  // Overlong "/" (C0 AF) and a UTF-16 surrogate (ED A0 80): each byte replaced.
  CHECK(ToValidUtf8("\xc0\xaf") == std::string(kFffd) + kFffd);
  CHECK(ToValidUtf8("\xed\xa0\x80") == std::string(kFffd) + kFffd + kFffd);
  // Above U+10FFFF (F4 90 80 80) and a sequence cut by the end of the text.
  CHECK(ToValidUtf8("\xf4\x90\x80\x80") == std::string(kFffd) + kFffd + kFffd + kFffd);
  CHECK(ToValidUtf8("end\xe2\x82") == std::string("end") + kFffd + kFffd);
  for (const std::string &name : kInvalidNames) {
    CAPTURE(name);
    CHECK_FALSE(IsValidUtf8(name));
    CHECK(IsValidUtf8(ToValidUtf8(name)));
  }
  std::string storage;
  CHECK(tfprof::ValidUtf8View("kept", storage).data() != storage.data());
  CHECK(tfprof::ValidUtf8View("x\xff", storage) == std::string("x") + kFffd);
}

TEST_CASE("utf8: TensorFlow outputs hold invalid names as valid UTF-8 and read back replaced") {
  const Trace trace = TraceWithInvalidNames();
  std::vector<std::string> expected;
  for (const std::string &name : kInvalidNames) expected.push_back(ToValidUtf8(name));
  TempDir dir;
  for (const Format format : {Format::kRunMetadata, Format::kTfRecord, Format::kTensorBoard}) {
    const std::string target = format == Format::kRunMetadata ? dir.File("names.pb")
                               : format == Format::kTfRecord  ? dir.File("names.tfrecord")
                                                              : dir.File("logs") + "/";
    CAPTURE(target);
    const std::string path = Written(trace, target, format);
    // Every text field in the file is valid UTF-8 (a RunMetadata parsed by protobuf here; the
    // record formats are checked through the reader below and by TensorFlow in tests/interop).
    if (format == Format::kRunMetadata) {
      tensorflow::RunMetadata metadata;
      REQUIRE(metadata.ParseFromString(ReadFile(path)));
      const std::vector<std::string> texts = TextFields(metadata.step_stats());
      CHECK(texts.size() > 2 * kInvalidNames.size());
      for (const std::string &text : texts) {
        CAPTURE(text);
        CHECK(IsValidUtf8(text));
      }
    }
    const absl::StatusOr<Trace> read = tfprof::LoadTrace(path, tfprof::LoadOptions{});
    INFO(std::string(tfprof::ToStd(read.status().message())));
    REQUIRE(read.ok());
    std::vector<std::string> names = ActivityNames(*read);
    // The names as TensorFlow splits "name:Type": ours have no colon, so they come back whole.
    CHECK(names == expected);
    bool thread_named = false;
    for (const tfprof::Track &track : read->tracks) {
      if (track.name == std::string("worker") + kFffd + kFffd) thread_named = true;
    }
    CHECK(thread_named);
  }
}

TEST_CASE("utf8: a RunMetadata with invalid UTF-8 names (an older writer's) reads, and converts") {
  tensorflow::RunMetadata metadata;
  tensorflow::DeviceStepStats *device = metadata.mutable_step_stats()->add_dev_stats();
  device->set_device("/job:localhost/replica:0/task:0/device:CPU:0");
  (*device->mutable_thread_names())[7] = "loader\xff";
  const std::vector<std::string> raw = {"Old\xffName", "half\xe2\x82"};
  int64_t micros = 1700000000000000;
  for (const std::string &name : raw) {
    tensorflow::NodeExecStats *node = device->add_node_stats();
    node->set_node_name(name);
    node->set_timeline_label(name + " = Op()");
    node->set_all_start_micros(micros);
    node->set_op_end_rel_micros(10);
    node->set_all_end_rel_micros(10);
    node->set_thread_id(7);
    micros += 100;
  }
  TempDir dir;
  const std::string input = dir.File("old.pb");
  tfprof_test::WriteFile(input, metadata.SerializeAsString());
  const absl::StatusOr<Trace> read = tfprof::LoadTrace(input, tfprof::LoadOptions{});
  INFO(std::string(tfprof::ToStd(read.status().message())));
  REQUIRE(read.ok());
  // Stored as given ("name:Type", the type from the label)...
  CHECK(ActivityNames(*read) == std::vector<std::string>{raw[0] + ":Op", raw[1] + ":Op"});
  // ...and written valid: the Chrome trace parses, with U+FFFD where the bad bytes were.
  const std::string json_path = Written(*read, dir.File("old.json"), Format::kChromeJson);
  const nlohmann::json parsed = nlohmann::json::parse(ReadFile(json_path));
  std::vector<std::string> json_names;
  for (const nlohmann::json &event : parsed["traceEvents"]) {
    if (event.value("ph", "") == "X" && event.value("cat", "") != "step") {
      json_names.push_back(event["name"].get<std::string>());
    }
  }
  CHECK(json_names ==
        std::vector<std::string>{ToValidUtf8(raw[0]) + ":Op", ToValidUtf8(raw[1]) + ":Op"});
  const std::string pb_path = Written(*read, dir.File("again.pb"), Format::kRunMetadata);
  tensorflow::RunMetadata again;
  REQUIRE(again.ParseFromString(ReadFile(pb_path)));
  for (const std::string &text : TextFields(again.step_stats())) {
    CAPTURE(text);
    CHECK(IsValidUtf8(text));
  }
}
