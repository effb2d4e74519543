// TensorFlow formats written through the C ABI and read back with the generated protobuf classes:
// one RunMetadata (.pb), a TFRecord of one RunMetadata per step (.tfrecord, also streamed while the
// session runs), and TensorBoard event files in a log directory.
#include <doctest/doctest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "integration/crashing_child.h"
#include "integration/trace_reader.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "support/test_files.h"
#include "tfprof/tensorflow/run_metadata.pb.h"
#include "tfprof/tfprof.h"

namespace {

using tfprof_test::TempDir;

constexpr char kHostDevice[] = "/job:localhost/replica:0/task:0/device:CPU:0";
// Every file ends with the session's losses on the host device (see kLossesNodeName).
constexpr char kLosses[] = "tfprof/losses";

int64_t WallNowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint32_t ThisThreadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

std::vector<std::string> ReadRecords(const std::string &path) {
  const std::string bytes = tfprof_test::ReadFile(path);
  tfprof::TfRecordReader reader(bytes);
  std::vector<std::string> records;
  std::string_view record;
  absl::Status status;
  while ((status = reader.Next(&record)).ok()) records.emplace_back(record);
  CHECK_MESSAGE(absl::IsOutOfRange(status), status.ToString());
  return records;
}

tensorflow::RunMetadata ParseRunMetadata(const std::string &bytes) {
  tensorflow::RunMetadata metadata;
  REQUIRE(metadata.ParseFromString(bytes));
  return metadata;
}

// Node names of the host device's stats, in stored order.
std::vector<std::string> NodeNames(const tensorflow::RunMetadata &metadata) {
  std::vector<std::string> names;
  for (const auto &device : metadata.step_stats().dev_stats()) {
    for (const auto &node : device.node_stats()) names.push_back(node.node_name());
  }
  return names;
}

// Three steps on the main thread; "load" on a second thread inside step 2; "setup" before the
// first step and "train" around all of them fit in no step.
struct Recording {
  uint32_t main_tid = 0;
  uint32_t loader_tid = 0;
  int64_t begin_us = 0;
  int64_t end_us = 0;
};

Recording RecordThreeSteps() {
  Recording recording;
  recording.main_tid = ThisThreadId();
  recording.begin_us = WallNowUs();
  prof_set_thread_name("trainer");
  prof_span_begin("setup");
  prof_span_end();
  prof_span_begin("train");
  for (int64_t step = 1; step <= 3; ++step) {
    prof_begin_step(step);
    prof_span_begin("model/dense/MatMul:MatMul");
    prof_span_begin("inner");
    prof_span_end();
    prof_span_end();
    if (step == 2) {
      std::thread loader([&] {
        recording.loader_tid = ThisThreadId();
        prof_set_thread_name("loader");
        prof_span_begin("load");
        prof_span_end();
      });
      loader.join();
    }
    prof_end_step();
  }
  prof_span_end();
  recording.end_us = WallNowUs() + 1;
  return recording;
}

// A session of RecordThreeSteps, stopped and exported to `path` (a directory: TensorBoard's).
Recording ExportThreeSteps(const std::string &path) {
  REQUIRE(prof_start(nullptr) == PROF_OK);
  const Recording recording = RecordThreeSteps();
  REQUIRE(prof_stop() == PROF_OK);
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  return recording;
}

void CheckTimes(const tensorflow::NodeExecStats &node, const Recording &recording) {
  CHECK(node.all_start_micros() >= recording.begin_us - 1);
  CHECK(node.all_start_micros() + node.all_end_rel_micros() <= recording.end_us);
  CHECK(node.all_end_rel_micros() >= 0);
  CHECK(node.op_end_rel_micros() == node.all_end_rel_micros());
  CHECK(node.all_start_nanos() / 1000 == node.all_start_micros());
  CHECK(node.all_end_rel_nanos() >= 0);
  CHECK(node.op_end_rel_nanos() == node.all_end_rel_nanos());
}

}  // namespace

TEST_CASE("tf export: .pb is one RunMetadata with every span and step, and the losses, on the host device") {
  TempDir dir;
  const Recording recording = ExportThreeSteps(dir.File("run.pb"));

  const tensorflow::RunMetadata metadata = ParseRunMetadata(tfprof_test::ReadFile(dir.File("run.pb")));
  REQUIRE(metadata.step_stats().dev_stats_size() == 1);
  const tensorflow::DeviceStepStats &device = metadata.step_stats().dev_stats(0);
  CHECK(device.device() == kHostDevice);
  // 3 steps + 3 x (MatMul, inner) + load + setup + train, then the losses.
  REQUIRE(device.node_stats_size() == 3 + 6 + 3 + 1);
  const auto &losses = device.node_stats(device.node_stats_size() - 1);
  CHECK(losses.node_name() == kLosses);
  // The GPU state depends on the build and the machine.
  CHECK(losses.timeline_label().rfind(
            "tfprof/losses = Losses(dropped_events=0, unmatched_span_ends=0, unmatched_step_ends=0, "
            "gpu_records_dropped=0, gpu_buffers_refused=0, gpu_records_unparsed=0, "
            "gpu_late_records=0, gpu_state=", 0) == 0);
  CHECK(device.thread_names().at(0) == "tfprof");
  std::multiset<std::string> names;
  std::map<std::string, std::string> labels;
  for (const auto &node : device.node_stats()) {
    if (node.node_name() == kLosses) continue;  // at the session's end, on no thread
    names.insert(node.node_name());
    labels[node.node_name()] = node.timeline_label();
    CheckTimes(node, recording);
    CHECK(node.thread_id() == (node.node_name() == "load" ? recording.loader_tid : recording.main_tid));
  }
  CHECK(names.count("model/dense/MatMul") == 3);
  CHECK(names.count("inner") == 3);
  CHECK(names.count("step_000002") == 1);
  CHECK(labels["model/dense/MatMul"] == "model/dense/MatMul = MatMul()");
  CHECK(labels["inner"] == "inner = inner()");
  CHECK(labels["step_000003"] == "step_000003 = TrainingStep()");
  REQUIRE(device.thread_names().count(recording.main_tid) == 1);
  CHECK(device.thread_names().at(recording.main_tid) == "trainer");
  REQUIRE(device.thread_names().count(recording.loader_tid) == 1);
  CHECK(device.thread_names().at(recording.loader_tid) == "loader");
}

TEST_CASE("tf export: .tfrecord holds one RunMetadata per step, then the spans outside steps") {
  TempDir dir;
  const Recording recording = ExportThreeSteps(dir.File("run.tfrecord"));

  const std::vector<std::string> records = ReadRecords(dir.File("run.tfrecord"));
  REQUIRE(records.size() == 4);
  CHECK(NodeNames(ParseRunMetadata(records[0])) ==
        std::vector<std::string>{"step_000001", "model/dense/MatMul", "inner"});
  CHECK(NodeNames(ParseRunMetadata(records[1])) ==
        std::vector<std::string>{"step_000002", "model/dense/MatMul", "inner", "load"});
  CHECK(NodeNames(ParseRunMetadata(records[2])) ==
        std::vector<std::string>{"step_000003", "model/dense/MatMul", "inner"});
  CHECK(NodeNames(ParseRunMetadata(records[3])) == std::vector<std::string>{"setup", "train", kLosses});
  // Each record names only the threads it has nodes of.
  const auto step2 = ParseRunMetadata(records[1]).step_stats().dev_stats(0);
  CHECK(step2.thread_names_size() == 2);
  CHECK(ParseRunMetadata(records[0]).step_stats().dev_stats(0).thread_names_size() == 1);
  for (const std::string &record : records) {
    const tensorflow::RunMetadata metadata = ParseRunMetadata(record);
    for (const auto &node : metadata.step_stats().dev_stats(0).node_stats()) {
      if (node.node_name() != kLosses) CheckTimes(node, recording);
    }
  }
}

TEST_CASE("tf export: a streamed .tfrecord grows step by step while the session runs") {
  TempDir dir;
  const std::string path = dir.File("live.tfrecord");
  REQUIRE(prof_start(("flush_interval_ms=2,output=" + path).c_str()) == PROF_OK);
  // Named only with its first record (a process killed before leaves no empty file); a bad path
  // still fails at start (below).
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(dir.path()));
  for (int64_t step = 1; step <= 2; ++step) {
    prof_begin_step(step);
    prof_span_begin("work");
    prof_span_end();
    prof_end_step();
  }
  size_t seen = 0;
  for (int attempt = 0; attempt < 400 && seen < 2; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (std::filesystem::exists(path)) seen = ReadRecords(path).size();
  }
  CHECK(seen == 2);
  CHECK(prof_is_running());
  prof_begin_step(3);
  prof_span_begin("unfinished");  // still open at stop: written, marked by its end at stop
  REQUIRE(prof_stop() == PROF_OK);
  // Nothing ran outside the steps: one record per step, the last one ending with the losses.
  const std::vector<std::string> records = ReadRecords(path);
  REQUIRE(records.size() == 3);
  CHECK(NodeNames(ParseRunMetadata(records[0])) == std::vector<std::string>{"step_000001", "work"});
  CHECK(NodeNames(ParseRunMetadata(records[2])) ==
        std::vector<std::string>{"step_000003", "unfinished", kLosses});
}

TEST_CASE("tf export: a program that crashes keeps the steps it finished") {
  TempDir dir;
  const std::string path = dir.File("crash.tfrecord");
  tfprof_test::RunChildThatCrashes(path);
  const std::vector<std::string> records = ReadRecords(path);
  REQUIRE(records.size() == 3);
  for (size_t index = 0; index < records.size(); ++index) {
    CHECK(NodeNames(ParseRunMetadata(records[index])) ==
          std::vector<std::string>{"step_00000" + std::to_string(index + 1), "work"});
  }
}

TEST_CASE("tf export: a program that crashes before its first step leaves no .tfrecord") {
  TempDir dir;
  const std::string path = dir.File("early.tfrecord");
  tfprof_test::RunChildThatCrashes(path, 0);
  // No empty file that readers would call "not a trace", and no temporary under any name.
  CHECK(dir.Entries().empty());
}

TEST_CASE("tf export: a directory gets a TensorBoard event file with a graph and tagged steps") {
  TempDir dir;
  const std::string logdir = dir.File("logs") + "/";
  ExportThreeSteps(logdir);
  REQUIRE(prof_export(logdir.c_str()) == PROF_OK);  // a second file, never overwriting the first

  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(dir.File("logs"))) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  // Beside the event files, TensorBoard's Profile tab's folder: a run (an XPlane) per export.
  REQUIRE(files.size() == 3);
  CHECK(files.back() == "plugins");
  files.pop_back();
  size_t profiles = 0;
  for (const auto &entry :
       std::filesystem::recursive_directory_iterator(dir.File("logs/plugins/profile"))) {
    if (entry.path().filename().string().ends_with(".xplane.pb")) ++profiles;
  }
  CHECK(profiles == 2);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string prefix = "events.out.tfevents.";
  REQUIRE(files[0].rfind(prefix, 0) == 0);
  const std::string rest = files[0].substr(prefix.size());
  CHECK(rest.size() == 10 + 1 + std::string(host).size());
  CHECK(rest.substr(10) == "." + std::string(host));
  CHECK(files[1] == files[0] + ".2");

  const std::vector<std::string> records = ReadRecords(dir.File("logs/" + files[0]));
  REQUIRE(records.size() == 1 + 1 + 3 * 2 + 1);  // each step's run, then its scalars
  tensorflow::Event version;
  REQUIRE(version.ParseFromString(records[0]));
  CHECK(version.file_version() == "brain.Event:2");
  CHECK(version.wall_time() > 1.6e9);

  tensorflow::Event graph_event;
  REQUIRE(graph_event.ParseFromString(records[1]));
  REQUIRE(graph_event.what_case() == tensorflow::Event::kGraphDef);
  tensorflow::GraphDef graph;
  REQUIRE(graph.ParseFromString(graph_event.graph_def()));
  std::map<std::string, std::string> ops;
  for (const auto &node : graph.node()) ops[node.name()] = node.op();
  CHECK(ops == std::map<std::string, std::string>{{"model/dense/MatMul", "MatMul"},
                                                  {"inner", "inner"},
                                                  {"load", "load"},
                                                  {"setup", "setup"},
                                                  {"train", "train"}});
  CHECK(graph.node(0).device() == kHostDevice);

  const std::vector<std::string> tags = {"step_000001", "step_000002", "step_000003", "outside_steps"};
  for (size_t index = 0; index < tags.size(); ++index) {
    tensorflow::Event event;
    REQUIRE(event.ParseFromString(records[2 + 2 * index]));
    REQUIRE(event.what_case() == tensorflow::Event::kTaggedRunMetadata);
    if (index < 3) {
      tensorflow::Event scalars;
      REQUIRE(scalars.ParseFromString(records[3 + 2 * index]));
      REQUIRE(scalars.what_case() == tensorflow::Event::kSummary);
      CHECK(scalars.step() == static_cast<int64_t>(index + 1));
      CHECK(scalars.summary().value(0).tag() == "tfprof/step_time_ms");
      CHECK(scalars.summary().value(0).simple_value() > 0);
    }
    CHECK(event.tagged_run_metadata().tag() == tags[index]);
    CHECK(event.step() == (index < 3 ? static_cast<int64_t>(index + 1) : 0));
    const auto metadata = ParseRunMetadata(event.tagged_run_metadata().run_metadata());
    CHECK(NodeNames(metadata).size() == (index == 1 ? 4u : 3u));  // outside: setup, train, losses
  }
}

TEST_CASE("tf export: output with format=tensorboard streams an event file while running") {
  TempDir dir;
  REQUIRE(prof_start(("flush_interval_ms=2,format=tensorboard,output=" + dir.File("tb")).c_str()) ==
          PROF_OK);
  prof_begin_step(7);
  prof_span_begin("op");
  prof_span_end();
  prof_end_step();
  std::string event_file;
  size_t seen = 0;
  for (int attempt = 0; attempt < 400 && seen < 4; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (const auto &entry : std::filesystem::directory_iterator(dir.File("tb"))) {
      event_file = entry.path().string();
    }
    if (!event_file.empty()) seen = ReadRecords(event_file).size();
  }
  CHECK(seen == 4);  // file_version, graph, step_000007 and its scalars
  REQUIRE(prof_stop() == PROF_OK);
  const std::vector<std::string> records = ReadRecords(event_file);
  REQUIRE(records.size() == 5);
  tensorflow::Event step;
  REQUIRE(step.ParseFromString(records[2]));
  CHECK(step.tagged_run_metadata().tag() == "step_000007");
  CHECK(step.step() == 7);
  tensorflow::Event scalars;
  REQUIRE(scalars.ParseFromString(records[3]));
  CHECK(scalars.step() == 7);
  CHECK(scalars.summary().value(0).tag() == "tfprof/step_time_ms");
  tensorflow::Event last;
  REQUIRE(last.ParseFromString(records[4]));
  CHECK(last.tagged_run_metadata().tag() == "outside_steps");  // only the losses
}

TEST_CASE("tf export: format and output options are checked at start") {
  TempDir dir;
  CHECK(prof_start("format=csv,output=x") == PROF_EOPTION);
  CHECK(std::string(prof_last_error()).find("'csv' is not one of json, json.gz, pb, tfrecord, tensorboard") !=
        std::string::npos);
  CHECK(prof_start("format=pb") == PROF_EOPTION);
  CHECK(std::string(prof_last_error()).find("needs option 'output'") != std::string::npos);
  CHECK(prof_start("output=/nonexistent_dir_for_tfprof/run.tfrecord") == PROF_EIO);
  CHECK(std::string(prof_last_error()).find("/nonexistent_dir_for_tfprof/run.tfrecord") !=
        std::string::npos);
  CHECK_FALSE(prof_is_running());

  // An extension the format option overrides.
  const std::string path = dir.File("run.bin");
  REQUIRE(prof_start(("format=pb,output=" + path).c_str()) == PROF_OK);
  prof_span_begin("only");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(NodeNames(ParseRunMetadata(tfprof_test::ReadFile(path))) ==
        std::vector<std::string>{"only", kLosses});
}

TEST_CASE("tf export: a .tfrecord whose first length byte looks like JSON is still a TFRecord") {
  // A record of 123 bytes starts the file with '{' (91 bytes: '['); readers once took such
  // files for JSON. About 1 run in 100 of a streamed .tfrecord produced one.
  for (const size_t wanted : {size_t{123}, size_t{91}, size_t{0x7b20}}) {
    tensorflow::RunMetadata metadata;
    auto *device = metadata.mutable_step_stats()->add_dev_stats();
    device->set_device("/job:localhost/replica:0/task:0/device:CPU:0");
    auto *node = device->add_node_stats();
    node->set_all_start_micros(1700000000000000);
    node->set_all_end_rel_micros(5);
    std::string name = "op";
    node->set_node_name(name);
    while (metadata.ByteSizeLong() < wanted) {
      name += 'x';
      node->set_node_name(name);
    }
    REQUIRE(metadata.ByteSizeLong() == wanted);
    std::string framed;
    tfprof::AppendTfRecord(metadata.SerializeAsString(), &framed);
    CHECK(tfprof::StartsWithTfRecordHeader(framed));
    CHECK_FALSE(tfprof::StartsWithTfRecordHeader("{\"traceEvents\": []}"));
    TempDir dir;
    const std::string path = dir.File("looks_like_json.tfrecord");
    { std::ofstream(path, std::ios::binary) << framed; }
    const std::string converted = dir.File("converted.json");
    REQUIRE(prof_convert(path.c_str(), converted.c_str(), nullptr) == PROF_OK);
    size_t spans = 0;
    const tfprof_test::Json trace = tfprof_test::ReadTrace(converted);
    for (const tfprof_test::Json &event : trace["traceEvents"]) {
      if (event.value("ph", "") == "X" && event.value("name", "") == name) ++spans;
    }
    CHECK(spans == 1);
  }
}
