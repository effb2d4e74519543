// The XPlane writer: a trace model built by hand, written through the one driver (whole, and in
// pieces), parsed with the generated tensorflow::profiler classes and checked plane by plane,
// line by line, stat by stat; then read back with tfprof's own reader.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/common/json_text.h"
#include "runtime/formats/format.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/model/event_args.h"
#include "runtime/model/trace.h"
#include "support/model_builders.h"
#include "support/test_files.h"
#include "tfprof/tensorflow/xplane.pb.h"

namespace {

namespace xp = tensorflow::profiler;
using tfprof::Activity;
using tfprof::ActivityKind;
using tfprof::Format;
using tfprof::GpuDetail;
using tfprof::Trace;
using tfprof::TrackKind;
using tfprof_test::ProcessOf;
using tfprof_test::StepOf;
using tfprof_test::TempDir;
using tfprof_test::TrackOf;

constexpr int64_t kStart = 1'000'000'000;          // the model's clock
constexpr int64_t kWallOffset = 1'700'000'000'000'000'000;
// A host op's args as a Chrome trace reader keeps them (runtime/model/event_args.h).
constexpr char kOpArgs[] = "\"Sequence number\":12\x1e\"shape\":\"(3,4)\"";

Activity Span(ActivityKind kind, uint32_t name, uint32_t track, int64_t begin, int64_t end,
              uint32_t detail = tfprof::kNoDetail) {
  Activity activity;
  activity.kind = kind;
  activity.name = name;
  activity.track = track;
  activity.begin_ns = kStart + begin;
  activity.end_ns = kStart + end;
  activity.detail = detail;
  return activity;
}

// A host thread that marks two steps, with an op, a launch call each (and one file arg), and a
// GPU stream running their kernels and a copy; a sync row of the GPU.
Trace SmallGpuTrace() {
  Trace trace;
  trace.hostname = "node7";
  trace.start_ns = kStart;
  trace.wall_offset_ns = kWallOffset;
  trace.processes = {ProcessOf(42, "train.py"), ProcessOf(0, "GPU 0")};
  trace.tracks = {TrackOf(0, 4242, "main", TrackKind::kHostThread, -1, -1),
                  TrackOf(1, 7, "stream 7", TrackKind::kGpuStream, 0, 7),
                  TrackOf(1, 7, "stream 7 sync", TrackKind::kGpuSync, 0, 7)};
  tfprof::DeviceProperties device;
  device.id = 0;
  device.name = "NVIDIA H200";
  device.global_memory_bytes = 150'000'000'000;
  device.compute_major = 9;
  device.compute_minor = 0;
  device.multiprocessors = 132;
  trace.devices.push_back(device);
  const uint32_t forward = trace.names.Intern("forward");
  const uint32_t launch = trace.names.Intern("cudaLaunchKernel");
  const uint32_t gemm = trace.names.Intern("gemm(float*)");
  const uint32_t copy = trace.names.Intern("Memcpy HtoD (Pinned -> Device)");
  const uint32_t sync = trace.names.Intern("cudaStreamSynchronize");
  for (int step = 0; step < 2; ++step) {
    const int64_t base = step * 1000;
    tfprof::Step marked = StepOf(step + 5, kStart + base, kStart + base + 1000, 0);
    marked.track = 0;
    trace.steps.push_back(marked);
    Activity op = Span(ActivityKind::kHostOp, forward, 0, base + 100, base + 600);
    if (step == 0) op.detail = trace.file_args.Add(kOpArgs);
    GpuDetail call;
    call.correlation = 10 + step;
    call.fields = tfprof::kGpuHasCorrelation | tfprof::kGpuLaunchesWork;
    const uint32_t call_detail = trace.gpu_details.Add(ActivityKind::kRuntimeApi, call);
    GpuDetail kernel = call;
    kernel.context = 1;
    kernel.op = forward;
    tfprof::GpuWorkShape shape;
    shape.grid[0] = 128;
    shape.grid[1] = 2;
    shape.grid[2] = 1;
    shape.block[0] = 256;
    shape.block[1] = 1;
    shape.block[2] = 1;
    shape.registers = 40;
    shape.static_shared = 1024;
    shape.dynamic_shared = 2048;
    kernel.shape = trace.work_shapes.Intern(shape);
    kernel.fields = tfprof::kGpuHasCorrelation | tfprof::kGpuHasContext |
                    tfprof::kGpuHasLaunchShape;
    const uint32_t kernel_detail = trace.gpu_details.Add(ActivityKind::kKernel, kernel);
    // Recorded in end order, as tfprof's collector sees them: the writer sorts each line.
    trace.activities.push_back(
        Span(ActivityKind::kRuntimeApi, launch, 0, base + 200, base + 210, call_detail));
    trace.activities.push_back(op);
    trace.activities.push_back(
        Span(ActivityKind::kKernel, gemm, 1, base + 300, base + 700, kernel_detail));
  }
  Activity copy_span = Span(ActivityKind::kMemcpy, copy, 1, 1800, 1850);
  copy_span.bytes = 8192;
  trace.activities.push_back(copy_span);
  trace.activities.push_back(Span(ActivityKind::kSync, sync, 2, 1850, 1900));
  return trace;
}

xp::XSpace ReadSpace(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  xp::XSpace space;
  REQUIRE(space.ParseFromString(bytes.str()));
  return space;
}

const xp::XPlane &PlaneNamed(const xp::XSpace &space, const std::string &name) {
  for (const xp::XPlane &plane : space.planes()) {
    if (plane.name() == name) return plane;
  }
  FAIL("no plane " << name);
  return space.planes(0);
}

const xp::XLine &LineNamed(const xp::XPlane &plane, const std::string &name) {
  for (const xp::XLine &line : plane.lines()) {
    if (line.name() == name) return line;
  }
  FAIL("no line " << name);
  return plane.lines(0);
}

// An event's name and its stats by name, each as text ("int 5", "str regs:40 ...").
struct Event {
  std::string name;
  int64_t offset_ps = 0;
  int64_t duration_ps = 0;
  std::map<std::string, std::string> stats;
};

std::string StatText(const xp::XPlane &plane, const xp::XStat &stat) {
  switch (stat.value_case()) {
    case xp::XStat::kInt64Value: return "int " + std::to_string(stat.int64_value());
    case xp::XStat::kUint64Value: return "uint " + std::to_string(stat.uint64_value());
    case xp::XStat::kDoubleValue: return "double " + std::to_string(stat.double_value());
    case xp::XStat::kStrValue: return "str " + stat.str_value();
    case xp::XStat::kRefValue: return "ref " + plane.stat_metadata().at(stat.ref_value()).name();
    default: return "none";
  }
}

std::vector<Event> EventsOf(const xp::XPlane &plane, const xp::XLine &line) {
  std::vector<Event> events;
  for (const xp::XEvent &event : line.events()) {
    Event read;
    read.name = plane.event_metadata().at(event.metadata_id()).name();
    read.offset_ps = event.offset_ps();
    read.duration_ps = event.duration_ps();
    for (const xp::XStat &stat : event.stats()) {
      read.stats[plane.stat_metadata().at(stat.metadata_id()).name()] = StatText(plane, stat);
    }
    events.push_back(read);
  }
  return events;
}

TEST_CASE("the XPlane writer: planes, lines, sorted events and the stats XProf reads") {
  TempDir dir;
  const std::string path = dir.File("node7.xplane.pb");
  const Trace trace = SmallGpuTrace();
  absl::StatusOr<tfprof::WrittenTrace> written = WriteTrace(trace, path, Format::kXPlane);
  REQUIRE_MESSAGE(written.ok(), written.status().ToString());
  const xp::XSpace space = ReadSpace(path);
  REQUIRE(space.hostnames_size() == 1);
  CHECK(space.hostnames(0) == "node7");

  const xp::XPlane &host = PlaneNamed(space, "/host:CPU");
  REQUIRE(host.lines_size() == 2);  // the thread, and the GPU's sync row beside it
  const xp::XLine &main = LineNamed(host, "main");
  CHECK(main.id() == 4242);
  const std::vector<Event> events = EventsOf(host, main);
  // Steps first at their begin, then by begin, the enclosing first.
  std::vector<std::string> names;
  for (const Event &event : events) names.push_back(event.name);
  CHECK(names == std::vector<std::string>{"step", "forward", "cudaLaunchKernel", "step",
                                          "forward", "cudaLaunchKernel"});
  CHECK(events[0].offset_ps == 0);
  CHECK(events[0].duration_ps == 1'000'000);
  CHECK(events[0].stats == std::map<std::string, std::string>{{"_r", "int 1"},
                                                              {"step_num", "int 5"}});
  CHECK(events[3].stats.at("step_num") == "int 6");
  CHECK(events[3].offset_ps == 1'000'000);  // 1000 ns
  CHECK(events[1].offset_ps == 100'000);
  CHECK(events[1].duration_ps == 500'000);
  // The file args come back as stats: an integer, a string.
  CHECK(events[1].stats == std::map<std::string, std::string>{{"Sequence number", "int 12"},
                                                              {"shape", "str (3,4)"}});
  CHECK(events[4].stats.empty());
  CHECK(events[2].stats == std::map<std::string, std::string>{{"correlation_id", "int 10"}});
  const xp::XLine &sync = LineNamed(host, "/device:GPU:0 stream 7 sync");
  REQUIRE(sync.events_size() == 1);
  CHECK(EventsOf(host, sync)[0].name == "cudaStreamSynchronize");

  const xp::XPlane &gpu = PlaneNamed(space, "/device:GPU:0");
  REQUIRE(gpu.lines_size() == 1);
  const xp::XLine &stream = gpu.lines(0);
  CHECK(stream.id() == 7);
  CHECK(stream.name() == "Stream #7");
  const std::vector<Event> work = EventsOf(gpu, stream);
  REQUIRE(work.size() == 3);
  CHECK(work[0].name == "gemm(float*)");
  CHECK(work[0].offset_ps == 300'000);
  CHECK(work[0].duration_ps == 400'000);
  CHECK(work[0].stats == std::map<std::string, std::string>{
                             {"correlation_id", "int 10"},
                             {"context_id", "uint 1"},
                             {"tf_op", "str forward"},
                             {"kernel_details", "str regs:40 static_shared:1024 "
                                                "dynamic_shared:2048 grid:128,2,1 block:256,1,1"}});
  CHECK(work[2].name == "Memcpy HtoD (Pinned -> Device)");
  CHECK(work[2].stats == std::map<std::string, std::string>{{"memcpy_details", "str size:8192"}});
  std::map<std::string, std::string> device;
  for (const xp::XStat &stat : gpu.stats()) {
    device[gpu.stat_metadata().at(stat.metadata_id()).name()] = StatText(gpu, stat);
  }
  CHECK(device == std::map<std::string, std::string>{{"gpu_device_name", "str NVIDIA H200"},
                                                     {"device_vendor", "str Nvidia"},
                                                     {"memory_size", "uint 150000000000"},
                                                     {"compute_cap_major", "int 9"},
                                                     {"compute_cap_minor", "int 0"},
                                                     {"core_count", "int 132"}});

  const xp::XPlane &environment = PlaneNamed(space, "Task Environment");
  std::map<std::string, std::string> times;
  for (const xp::XStat &stat : environment.stats()) {
    times[environment.stat_metadata().at(stat.metadata_id()).name()] =
        StatText(environment, stat);
  }
  CHECK(times.at("profile_start_time") == "uint " + std::to_string(kStart + kWallOffset));
  CHECK(times.at("profile_stop_time") == "uint " + std::to_string(kStart + 2000 + kWallOffset));
}

TEST_CASE("the XPlane writer: read back by tfprof, the same events, steps and wall clock") {
  TempDir dir;
  const std::string path = dir.File("node7.xplane.pb");
  const Trace trace = SmallGpuTrace();
  REQUIRE(WriteTrace(trace, path, Format::kXPlane).ok());
  absl::StatusOr<Trace> read = tfprof::LoadTrace(path, tfprof::LoadOptions{});
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK(read->format == Format::kXPlane);
  REQUIRE(read->steps.size() == 2);
  CHECK(read->steps[0].number == 5);
  CHECK(read->steps[1].number == 6);
  REQUIRE(read->wall_offset_ns.has_value());
  CHECK(read->steps[0].begin_ns + *read->wall_offset_ns == kStart + kWallOffset);
  CHECK(read->steps[1].end_ns - read->steps[1].begin_ns == 1000);
  std::map<std::string, int> kinds;
  for (const Activity &activity : read->activities) {
    ++kinds[std::string(tfprof::ActivityKindName(activity.kind)) + " " +
            read->names.Get(activity.name)];
  }
  CHECK(kinds == std::map<std::string, int>{{"host_op forward", 2},
                                            {"runtime_api cudaLaunchKernel", 2},
                                            {"kernel gemm(float*)", 2},
                                            {"memcpy Memcpy HtoD (Pinned -> Device)", 1},
                                            {"host_op cudaStreamSynchronize", 1}});
  for (const Activity &activity : read->activities) {
    if (activity.kind != ActivityKind::kKernel) continue;
    REQUIRE(read->gpu_details.Has(activity.detail));
    const GpuDetail detail = read->gpu_details.Get(activity.detail);
    const tfprof::GpuWorkShape &shape = read->work_shapes.Get(detail.shape);
    CHECK(shape.registers == 40);
    CHECK(shape.grid[0] == 128);
    CHECK(shape.block[0] == 256);
    CHECK(shape.dynamic_shared == 2048);
    CHECK(read->names.Get(detail.op) == "forward");
  }
  // The host op's args survive: the reader keeps the stats it has no field for.
  bool found_args = false;
  for (const Activity &activity : read->activities) {
    if (activity.kind == ActivityKind::kHostOp && activity.detail < read->file_args.size()) {
      CHECK(read->file_args.Get(activity.detail) ==
            kOpArgs);
      found_args = true;
    }
  }
  CHECK(found_args);
}

// Every line of every plane as "plane/line: name@offset+duration {stats}" rows, in order.
std::vector<std::string> Rows(const xp::XSpace &space) {
  std::vector<std::string> rows;
  for (const xp::XPlane &plane : space.planes()) {
    for (const xp::XLine &line : plane.lines()) {
      for (const Event &event : EventsOf(plane, line)) {
        std::string row = plane.name() + "/" + line.name() + ": " + event.name + "@" +
                          std::to_string(event.offset_ps) + "+" +
                          std::to_string(event.duration_ps);
        for (const auto &[name, value] : event.stats) row += " " + name + "=" + value;
        rows.push_back(row);
      }
    }
  }
  return rows;
}

TEST_CASE("the XPlane writer: pieces give the same events as the whole") {
  TempDir dir;
  const Trace whole = SmallGpuTrace();
  REQUIRE(WriteTrace(whole, dir.File("whole.xplane.pb"), Format::kXPlane).ok());
  // The first step's activities, then the rest, as an export's windows hand them over.
  absl::StatusOr<std::unique_ptr<tfprof::TraceWriteDriver>> driver =
      tfprof::TraceWriteDriver::ToFile(dir.File("pieces.xplane.pb"), Format::kXPlane,
                                       kStart + kWallOffset, nullptr);
  REQUIRE(driver.ok());
  Trace piece = whole;
  piece.steps.resize(1);
  piece.activities.resize(3);
  (*driver)->Append(piece, false, kStart + 2000);
  piece.steps = {whole.steps[1]};
  piece.activities.assign(whole.activities.begin() + 3, whole.activities.end());
  (*driver)->Append(piece, true, kStart + 2000);
  REQUIRE((*driver)->Finish(piece, kStart + 2000).ok());
  const std::vector<std::string> rows = Rows(ReadSpace(dir.File("whole.xplane.pb")));
  CHECK(rows.size() == 10);
  CHECK(Rows(ReadSpace(dir.File("pieces.xplane.pb"))) == rows);
  // And the same bytes on every run.
  REQUIRE(WriteTrace(whole, dir.File("again.xplane.pb"), Format::kXPlane).ok());
  CHECK(tfprof_test::ReadFile(dir.File("again.xplane.pb")) ==
        tfprof_test::ReadFile(dir.File("whole.xplane.pb")));
}

TEST_CASE("the XPlane writer: a piece that brings earlier events is put in order") {
  // A span that fits in no step is written in the piece where it ends, after the steps it
  // encloses; late GPU work likewise: each line is sorted again before it is written.
  TempDir dir;
  const Trace whole = SmallGpuTrace();
  REQUIRE(WriteTrace(whole, dir.File("whole.xplane.pb"), Format::kXPlane).ok());
  absl::StatusOr<std::unique_ptr<tfprof::TraceWriteDriver>> driver =
      tfprof::TraceWriteDriver::ToFile(dir.File("late.xplane.pb"), Format::kXPlane,
                                       kStart + kWallOffset, nullptr);
  REQUIRE(driver.ok());
  Trace piece = whole;
  piece.steps = {whole.steps[1]};
  piece.activities.assign(whole.activities.begin() + 3, whole.activities.end());
  (*driver)->Append(piece, false, kStart + 2000);
  piece.steps = {whole.steps[0]};
  piece.activities.assign(whole.activities.begin(), whole.activities.begin() + 3);
  (*driver)->Append(piece, true, kStart + 2000);
  REQUIRE((*driver)->Finish(piece, kStart + 2000).ok());
  CHECK(Rows(ReadSpace(dir.File("late.xplane.pb"))) ==
        Rows(ReadSpace(dir.File("whole.xplane.pb"))));
}

TEST_CASE("a TensorBoard log directory gets the Profile tab's XPlane beside its event file") {
  TempDir dir;
  const std::string logs = dir.File("logs") + "/";
  const Trace trace = SmallGpuTrace();
  absl::StatusOr<tfprof::WrittenTrace> written = WriteTrace(trace, logs, Format::kTensorBoard);
  REQUIRE_MESSAGE(written.ok(), written.status().ToString());
  // Named for the recording's start in UTC, as TensorFlow names its runs, and the trace's host.
  CHECK(written->profile == dir.File("logs/plugins/profile/2023_11_14_22_13_21/node7.xplane.pb"));
  CHECK(std::filesystem::exists(written->profile));
  CHECK(PlaneNamed(ReadSpace(written->profile), "/device:GPU:0").lines_size() == 1);
  // A second export in the same second gets a run of its own.
  absl::StatusOr<tfprof::WrittenTrace> again = WriteTrace(trace, logs, Format::kTensorBoard);
  REQUIRE(again.ok());
  CHECK(again->profile ==
        dir.File("logs/plugins/profile/2023_11_14_22_13_21_2/node7.xplane.pb"));
  // The log directory reads as its event file (tfprof's header), not as the profile.
  absl::StatusOr<Trace> read = tfprof::LoadTrace(logs, tfprof::LoadOptions{});
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK(read->format == Format::kTensorBoard);
  // Turned off, only the event file.
  const std::string plain = dir.File("plain") + "/";
  absl::StatusOr<tfprof::WrittenTrace> without =
      WriteTrace(trace, plain, Format::kTensorBoard, nullptr, /*tensorboard_profile=*/false);
  REQUIRE(without.ok());
  CHECK(without->profile.empty());
  CHECK(!std::filesystem::exists(dir.File("plain/plugins")));
}

TEST_CASE("a log directory whose profile cannot be written is left as it was") {
  TempDir dir;
  const std::string logs = dir.File("logs");
  // "plugins" taken by a file: the profile's folder cannot be made.
  std::filesystem::create_directory(logs);
  std::ofstream(logs + "/plugins") << "in the way";
  absl::StatusOr<tfprof::WrittenTrace> written =
      WriteTrace(SmallGpuTrace(), logs, Format::kTensorBoard);
  REQUIRE(!written.ok());
  CHECK(written.status().message() ==
        "cannot create the folder '" + logs + "/plugins': File exists");
  std::vector<std::string> left;
  for (const auto &entry : std::filesystem::directory_iterator(logs)) {
    left.push_back(entry.path().filename().string());
  }
  CHECK(left == std::vector<std::string>{"plugins"});  // no event file, nothing else
}

TEST_CASE("DecodeJsonString undoes AppendJsonString") {
  const std::vector<std::string> texts = {"", "plain", "quote \" and \\ backslash", "tab\tnew\nline",
                                          "control \x01", "UTF-8 \xc3\xa9 \xf0\x9f\x98\x80"};
  for (const std::string &text : texts) {
    std::string quoted;
    tfprof::AppendJsonString(quoted, text);
    std::string decoded;
    CHECK(tfprof::DecodeJsonString(quoted + ",rest", &decoded) == quoted.size());
    CHECK(decoded == text);
  }
  std::string decoded;
  CHECK(tfprof::DecodeJsonString(R"("\ud83d\ude00 \u00e9")", &decoded) > 0);
  CHECK(decoded == "\xf0\x9f\x98\x80 \xc3\xa9");
  CHECK(tfprof::DecodeJsonString(R"("\ud83d")", &decoded) > 0);
  CHECK(decoded == "\xef\xbf\xbd");  // half a pair
  CHECK(tfprof::DecodeJsonString(R"("open)", &decoded) == 0);
  CHECK(tfprof::DecodeJsonString(R"("bad \q")", &decoded) == 0);
  CHECK(tfprof::DecodeJsonString("no quote", &decoded) == 0);
}

}  // namespace
