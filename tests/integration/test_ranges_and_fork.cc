// prof_range_start/end (ranges that end on another thread, in any order) in every format, and a
// session across fork(): the child has none, the parent's output is the parent's alone.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "integration/trace_reader.h"
#include "tfprof/tensorflow/run_metadata.pb.h"
#include "tfprof/tfprof.h"

namespace tfprof_test {
namespace {

TEST_CASE("ranges: start and end on different threads, overlapping, one never ended") {
  REQUIRE(prof_start("cuda=off") == PROF_OK);
  prof_begin_step(0);
  const uint64_t first = prof_range_start("first");
  const uint64_t second = prof_range_start("second");
  CHECK(first != 0);
  CHECK(second != first);
  std::thread([first] { prof_range_end(first); }).join();  // ends on another thread, first
  prof_range_end(second);
  prof_range_end(second);  // a second end of one range is ignored
  prof_range_end(0);
  prof_range_start("left open");
  prof_end_step();
  REQUIRE(prof_stop() == PROF_OK);
  CHECK(prof_range_start("after stop") == 0);

  const std::string json_path = TempPath("ranges.json");
  REQUIRE(prof_export(json_path.c_str()) == PROF_OK);
  const Json trace = ReadTrace(json_path);
  std::map<std::string, std::map<std::string, Json>> edges;  // name -> ph -> event
  for (const Json &event : trace["traceEvents"]) {
    if (event.value("cat", "") != "range") continue;
    CHECK(edges[event["name"]].count(event["ph"]) == 0);
    edges[event["name"]][event["ph"]] = event;
  }
  REQUIRE(edges.size() == 3);
  CHECK(edges["first"]["b"]["tid"] != edges["first"]["e"]["tid"]);
  CHECK(edges["first"]["b"]["id"] == edges["first"]["e"]["id"]);
  CHECK(TsNs(edges["first"]["b"]) <= TsNs(edges["second"]["b"]));
  CHECK(TsNs(edges["second"]["e"]) >= TsNs(edges["first"]["e"]));
  CHECK(edges["second"]["e"]["tid"] == edges["second"]["b"]["tid"]);
  CHECK(edges["left open"]["e"]["args"]["incomplete"] == true);
  CHECK(edges["first"]["b"]["args"]["step"] == 0);

  // TensorFlow formats: ops of the starting thread, placed in the step that holds them.
  const std::string pb_path = TempPath("ranges.pb");
  REQUIRE(prof_export(pb_path.c_str()) == PROF_OK);
  tensorflow::RunMetadata metadata;
  REQUIRE(metadata.ParseFromString(ReadFileBytes(pb_path)));
  std::map<std::string, int> ops;
  for (const auto &device : metadata.step_stats().dev_stats()) {
    for (const auto &node : device.node_stats()) ++ops[node.node_name()];
  }
  CHECK(ops["first"] == 1);
  CHECK(ops["second"] == 1);
  CHECK(ops["left open"] == 1);
}

TEST_CASE("fork: the child has no session and never writes the parent's output") {
  const std::string path = TempPath("parent.json");
  REQUIRE(prof_start(("cuda=off,output=" + path).c_str()) == PROF_OK);
  prof_span_begin("before fork");
  prof_span_end();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Exit codes tell the parent what went wrong; no doctest in the child.
    if (prof_is_running() != 0 || prof_session_active != 0) _exit(10);
    prof_span_begin("in child");  // recorded nowhere
    prof_span_end();
    if (prof_stop() != PROF_ENOTSTARTED) _exit(11);
#if defined(__SANITIZE_THREAD__)
    _exit(0);  // ThreadSanitizer stops a child of a threaded process from starting threads
#endif
    if (prof_start("cuda=off") != PROF_OK) _exit(12);  // the child may start its own
    prof_span_begin("child session");
    prof_span_end();
    if (prof_stop() != PROF_OK) _exit(13);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  prof_span_begin("after fork");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  std::map<std::string, int> names;
  for (const Json &event : EventsWithPhase(ReadTrace(path), "X")) ++names[event["name"]];
  CHECK(names["before fork"] == 1);
  CHECK(names["after fork"] == 1);
  CHECK(names.count("in child") == 0);
  CHECK(names.count("child session") == 0);
}

}  // namespace
}  // namespace tfprof_test
