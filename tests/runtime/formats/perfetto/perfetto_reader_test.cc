// The Perfetto trace reader: packets built with the generated tfprof::perfetto classes, written to
// a file, read back through LoadTrace (format detection included) and checked event by event.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/formats/perfetto/perfetto_reader.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/model/trace.h"
#include "support/test_files.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace {

namespace pf = tfprof::perfetto;
using tfprof::Activity;
using tfprof::ActivityKind;
using tfprof::Format;
using tfprof::LoadOptions;
using tfprof::LoadTrace;
using tfprof::Producer;
using tfprof::Trace;
using tfprof::TrackKind;
using tfprof_test::TempDir;

constexpr uint32_t kSequence = 1;

// Builds a trace packet by packet.
class Builder {
 public:
  pf::TracePacket &Packet(uint32_t sequence = kSequence) {
    pf::TracePacket *packet = trace_.add_packet();
    packet->set_trusted_packet_sequence_id(sequence);
    return *packet;
  }

  void Process(uint64_t uuid, int32_t pid, const std::string &name,
               const std::string &label = "") {
    pf::TrackDescriptor *track = Packet().mutable_track_descriptor();
    track->set_uuid(uuid);
    track->mutable_process()->set_pid(pid);
    track->mutable_process()->set_process_name(name);
    if (!label.empty()) track->mutable_process()->add_process_labels(label);
  }

  void Thread(uint64_t uuid, uint64_t parent, int32_t pid, int64_t tid, const std::string &name) {
    pf::TrackDescriptor *track = Packet().mutable_track_descriptor();
    track->set_uuid(uuid);
    track->set_parent_uuid(parent);
    track->mutable_thread()->set_pid(pid);
    track->mutable_thread()->set_tid(tid);
    track->mutable_thread()->set_thread_name(name);
  }

  void Named(uint64_t uuid, std::optional<uint64_t> parent, const std::string &name) {
    pf::TrackDescriptor *track = Packet().mutable_track_descriptor();
    track->set_uuid(uuid);
    if (parent) track->set_parent_uuid(*parent);
    track->set_name(name);
  }

  void Counter(uint64_t uuid, uint64_t parent, const std::string &name, const std::string &unit) {
    pf::TrackDescriptor *track = Packet().mutable_track_descriptor();
    track->set_uuid(uuid);
    track->set_parent_uuid(parent);
    track->set_name(name);
    pf::CounterDescriptor *counter = track->mutable_counter();
    if (!unit.empty()) counter->set_unit_name(unit);
  }

  // An event at `ns` on the trace's clock, with an inline name and category.
  pf::TrackEvent &Event(uint64_t ns, uint64_t track, pf::TrackEvent::Type type,
                        const std::string &name = "", const std::string &category = "") {
    pf::TracePacket &packet = Packet();
    packet.set_timestamp(ns);
    pf::TrackEvent *event = packet.mutable_track_event();
    event->set_type(type);
    event->set_track_uuid(track);
    if (!name.empty()) event->set_name(name);
    if (!category.empty()) event->add_categories(category);
    return *event;
  }
  pf::TrackEvent &Begin(uint64_t ns, uint64_t track, const std::string &name,
                        const std::string &category) {
    return Event(ns, track, pf::TrackEvent::TYPE_SLICE_BEGIN, name, category);
  }
  pf::TrackEvent &End(uint64_t ns, uint64_t track) {
    return Event(ns, track, pf::TrackEvent::TYPE_SLICE_END);
  }

  std::string Bytes() const { return trace_.SerializeAsString(); }

  std::string Write(const TempDir &dir, const std::string &name = "trace.pftrace") const {
    const std::string path = dir.File(name);
    std::ofstream(path, std::ios::binary) << Bytes();
    return path;
  }

 private:
  pf::Trace trace_;
};

pf::DebugAnnotation *Arg(pf::TrackEvent &event, const std::string &name) {
  pf::DebugAnnotation *arg = event.add_debug_annotations();
  arg->set_name(name);
  return arg;
}
void IntArg(pf::TrackEvent &event, const std::string &name, int64_t value) {
  Arg(event, name)->set_int_value(value);
}
void Triple(pf::TrackEvent &event, const std::string &name, int a, int b, int c) {
  pf::DebugAnnotation *arg = Arg(event, name);
  for (int value : {a, b, c}) arg->add_array_values()->set_int_value(value);
}

Trace MustLoad(const std::string &path) {
  absl::StatusOr<Trace> trace = LoadTrace(path, LoadOptions{});
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  return std::move(*trace);
}

const Activity &Named(const Trace &trace, std::string_view name) {
  for (const Activity &activity : trace.activities) {
    if (trace.names.Get(activity.name) == name) return activity;
  }
  FAIL("no activity named ", std::string(name));
  return trace.activities.front();
}

size_t CountNamed(const Trace &trace, std::string_view name) {
  size_t count = 0;
  for (const Activity &activity : trace.activities) count += trace.names.Get(activity.name) == name;
  return count;
}

}  // namespace

TEST_CASE("perfetto reader: slices nest on their thread, with names, processes and categories") {
  Builder b;
  b.Process(1, 10, "trainer", "rank 0");
  b.Thread(2, 1, 10, 11, "main");
  b.Begin(1000, 2, "outer", "app");
  b.Begin(1500, 2, "inner", "app");
  b.End(2000, 2);
  b.Event(2500, 2, pf::TrackEvent::TYPE_INSTANT, "mark");
  b.End(3000, 2);
  TempDir dir;
  const Trace trace = MustLoad(b.Write(dir));
  CHECK(trace.format == Format::kPerfetto);
  CHECK(trace.producer == Producer::kOther);
  CHECK_FALSE(trace.wall_offset_ns.has_value());
  CHECK_FALSE(trace.losses.reported);
  CHECK(trace.events_in_file == 3);  // two spans (a begin and an end each) and an instant
  REQUIRE(trace.activities.size() == 3);
  const Activity &outer = Named(trace, "outer");
  const Activity &inner = Named(trace, "inner");
  CHECK(outer.begin_ns == 1000);
  CHECK(outer.end_ns == 3000);
  CHECK(inner.begin_ns == 1500);
  CHECK(inner.end_ns == 2000);
  CHECK(outer.kind == ActivityKind::kHostOp);
  CHECK(outer.flags == 0);
  CHECK(Named(trace, "mark").kind == ActivityKind::kInstant);
  CHECK(Named(trace, "mark").begin_ns == 2500);
  REQUIRE(trace.tracks.size() == 1);
  CHECK(inner.track == outer.track);
  CHECK(trace.tracks[0].name == "main");
  CHECK(trace.tracks[0].tid == 11);
  CHECK(trace.tracks[0].kind == TrackKind::kHostThread);
  REQUIRE(trace.processes.size() == 1);
  CHECK(trace.processes[0].pid == 10);
  CHECK(trace.processes[0].name == "trainer");
  CHECK(trace.processes[0].labels == "rank 0");
  REQUIRE(trace.unknown_categories.size() == 1);
  CHECK(trace.unknown_categories[0].first == "app");
  CHECK(trace.unknown_categories[0].second == 2);
}

TEST_CASE("perfetto reader: interning across a state clear, an incremental clock in units") {
  Builder b;
  {
    pf::TracePacket &first = b.Packet();
    first.set_first_packet_on_sequence(true);
    first.set_sequence_flags(pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    first.mutable_trace_packet_defaults()->set_timestamp_clock_id(64);
    first.mutable_trace_packet_defaults()->mutable_track_event_defaults()->set_track_uuid(2);
    pf::InternedData *interned = first.mutable_interned_data();
    pf::EventName *name = interned->add_event_names();
    name->set_iid(1);
    name->set_name("forward");
    pf::EventCategory *category = interned->add_event_categories();
    category->set_iid(1);
    category->set_name("user_annotation");
    pf::DebugAnnotationName *arg = interned->add_debug_annotation_names();
    arg->set_iid(1);
    arg->set_name("incomplete");
  }
  const auto snapshot = [&](uint64_t microseconds) {
    pf::ClockSnapshot *clocks = b.Packet().mutable_clock_snapshot();
    pf::ClockSnapshot::Clock *sequence_clock = clocks->add_clocks();
    sequence_clock->set_clock_id(64);
    sequence_clock->set_timestamp(microseconds);
    sequence_clock->set_is_incremental(true);
    sequence_clock->set_unit_multiplier_ns(1000);
    pf::ClockSnapshot::Clock *boottime = clocks->add_clocks();
    boottime->set_clock_id(6);
    boottime->set_timestamp(microseconds * 1000);
    pf::ClockSnapshot::Clock *realtime = clocks->add_clocks();
    realtime->set_clock_id(1);
    realtime->set_timestamp(1700000000000000000 + microseconds * 1000);
  };
  const auto event = [&](uint64_t delta_us, pf::TrackEvent::Type type, uint64_t name_iid) {
    pf::TracePacket &packet = b.Packet();
    packet.set_sequence_flags(pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    packet.set_timestamp(delta_us);
    pf::TrackEvent *track_event = packet.mutable_track_event();
    track_event->set_type(type);
    if (name_iid != 0) {
      track_event->set_name_iid(name_iid);
      track_event->add_category_iids(1);
    }
    return track_event;
  };
  b.Process(1, 10, "trainer");
  b.Thread(2, 1, 10, 11, "main");
  snapshot(100);
  event(5, pf::TrackEvent::TYPE_SLICE_BEGIN, 1);  // 105 us
  event(10, pf::TrackEvent::TYPE_SLICE_END, 0);   // 115 us
  // A new snapshot restarts the deltas (the writer emits one before going back in time).
  snapshot(50);
  pf::TrackEvent *marked = event(1, pf::TrackEvent::TYPE_SLICE_BEGIN, 1);  // 51 us
  marked->add_debug_annotations()->set_name_iid(1);
  marked->mutable_debug_annotations(0)->set_bool_value(true);
  event(2, pf::TrackEvent::TYPE_SLICE_END, 0);  // 53 us
  // The state is cleared: iid 1 now names another event and category.
  {
    pf::TracePacket &cleared = b.Packet();
    cleared.set_sequence_flags(pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    cleared.mutable_trace_packet_defaults()->set_timestamp_clock_id(64);
    cleared.mutable_trace_packet_defaults()->mutable_track_event_defaults()->set_track_uuid(2);
    pf::EventName *name = cleared.mutable_interned_data()->add_event_names();
    name->set_iid(1);
    name->set_name("backward");
    pf::EventCategory *category = cleared.mutable_interned_data()->add_event_categories();
    category->set_iid(1);
    category->set_name("python_function");
  }
  event(100, pf::TrackEvent::TYPE_SLICE_BEGIN, 1);  // 153 us
  event(7, pf::TrackEvent::TYPE_SLICE_END, 0);      // 160 us

  TempDir dir;
  const Trace trace = MustLoad(b.Write(dir));
  REQUIRE(trace.activities.size() == 3);
  CHECK(trace.wall_offset_ns == 1700000000000000000);
  CHECK(CountNamed(trace, "forward") == 2);
  const Activity &backward = Named(trace, "backward");
  CHECK(backward.kind == ActivityKind::kPythonFunction);
  CHECK(backward.begin_ns == 153000);
  CHECK(backward.end_ns == 160000);
  std::vector<std::pair<int64_t, int64_t>> forward;
  for (const Activity &activity : trace.activities) {
    if (trace.names.Get(activity.name) != "forward") continue;
    CHECK(activity.kind == ActivityKind::kHostOp);
    forward.emplace_back(activity.begin_ns, activity.end_ns);
    CHECK(activity.flags == (activity.begin_ns == 51000 ? tfprof::kActivityIncomplete : 0));
  }
  std::sort(forward.begin(), forward.end());
  CHECK(forward == std::vector<std::pair<int64_t, int64_t>>{{51000, 53000}, {105000, 115000}});
  CHECK(trace.producer == Producer::kPytorch);  // its categories are the PyTorch profiler's
}

TEST_CASE("perfetto reader: lanes fold into their row, ranges cross threads, steps") {
  Builder b;
  b.Process(1, 10, "trainer");
  b.Thread(2, 1, 10, 11, "main");
  b.Thread(5, 1, 10, 12, "worker");
  b.Named(3, 2, "main");  // a lane of "main"
  b.Named(4, 1, "load");  // a range track
  b.Named(6, 1, "Steps");
  b.Begin(10, 2, "a", "user_annotation");
  b.Begin(20, 3, "b", "user_annotation");
  b.End(30, 2);
  b.End(40, 3);
  pf::TrackEvent &range = b.Begin(50, 4, "load", "range");
  IntArg(range, "thread", 11);
  IntArg(range, "end thread", 12);
  b.End(80, 4);
  pf::TrackEvent &step1 = b.Begin(0, 6, "step 1", "step");
  IntArg(step1, "step", 1);
  IntArg(step1, "thread", 11);
  b.End(100, 6);
  b.Begin(100, 6, "step 2", "step");  // never ended: the recording stopped inside it
  b.Begin(120, 2, "c", "user_annotation");
  b.End(150, 2);

  TempDir dir;
  const Trace trace = MustLoad(b.Write(dir));
  const Activity &a = Named(trace, "a");
  const Activity &lane = Named(trace, "b");
  CHECK(lane.track == a.track);
  CHECK(lane.begin_ns == 20);
  CHECK(lane.end_ns == 40);
  CHECK(trace.tracks[a.track].name == "main");
  const Activity &load = Named(trace, "load");
  CHECK(load.kind == ActivityKind::kRange);
  CHECK(load.begin_ns == 50);
  CHECK(load.end_ns == 80);
  CHECK(load.track == a.track);
  REQUIRE(load.detail < trace.tracks.size());
  CHECK(trace.tracks[load.detail].name == "worker");
  CHECK(trace.tracks[load.detail].tid == 12);
  REQUIRE(trace.steps.size() == 2);
  CHECK(trace.steps[0].number == 1);
  CHECK(trace.steps[0].begin_ns == 0);
  CHECK(trace.steps[0].end_ns == 100);
  CHECK(trace.steps[0].track == a.track);
  CHECK_FALSE(trace.steps[0].incomplete);
  CHECK(trace.steps[1].number == 2);
  CHECK(trace.steps[1].end_ns == 150);  // the trace's last timestamp
  CHECK(trace.steps[1].incomplete);
  CHECK(trace.processes[trace.steps[1].process].pid == 10);
  CHECK(Named(trace, "c").step == 2);  // the model's step rule ran
  for (const tfprof::Track &track : trace.tracks) CHECK(track.name != "Steps");
}

TEST_CASE("perfetto reader: GPU streams, sync rows, counters, launches and flows") {
  Builder b;
  b.Process(1, 10, "trainer");
  b.Thread(2, 1, 10, 11, "main");
  b.Process(100, 1000, "GPU 0", "NVIDIA H100");
  b.Named(101, 100, "stream 7");
  b.Named(102, 100, "stream 7 sync");
  b.Counter(103, 100, "device memory", "bytes in use");
  b.Counter(104, 2, "loss", "");
  pf::TrackEvent &launch = b.Begin(1000, 2, "cudaLaunchKernel", "cuda_runtime");
  IntArg(launch, "correlation", 5);
  IntArg(launch, "cbid", 211);
  launch.add_flow_ids(5);
  b.End(1200, 2);
  pf::TrackEvent &kernel = b.Begin(1500, 101, "volta_sgemm", "kernel");
  IntArg(kernel, "device", 0);
  IntArg(kernel, "stream", 7);
  IntArg(kernel, "correlation", 5);
  IntArg(kernel, "registers per thread", 32);
  Triple(kernel, "grid", 1, 2, 3);
  Triple(kernel, "block", 4, 5, 6);
  kernel.add_terminating_flow_ids(5);
  b.End(2500, 101);
  pf::TrackEvent &copy = b.Begin(2600, 101, "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy");
  IntArg(copy, "bytes", 4096);
  Arg(copy, "kind")->set_string_value("HtoD");
  b.End(2700, 101);
  pf::TrackEvent &sync = b.Begin(2800, 102, "cudaStreamSynchronize", "cuda_sync");
  IntArg(sync, "device", 0);
  IntArg(sync, "stream", 7);
  b.End(2900, 102);
  b.Event(1000, 103, pf::TrackEvent::TYPE_COUNTER).set_double_counter_value(1024);
  b.Event(2000, 103, pf::TrackEvent::TYPE_COUNTER).set_double_counter_value(4096);
  b.Event(1100, 104, pf::TrackEvent::TYPE_COUNTER).set_counter_value(3);

  TempDir dir;
  const Trace trace = MustLoad(b.Write(dir));
  CHECK(trace.events_in_file == 4 + 3 + 2);  // spans, counter samples, the flow's two ends
  const Activity &call = Named(trace, "cudaLaunchKernel");
  CHECK(call.kind == ActivityKind::kRuntimeApi);
  REQUIRE(trace.gpu_details.Has(call.detail));
  CHECK((trace.gpu_details.Get(call.detail).fields & tfprof::kGpuLaunchesWork) != 0);
  CHECK(trace.gpu_details.Get(call.detail).callback_id == 211);
  const Activity &kernel_read = Named(trace, "volta_sgemm");
  CHECK(kernel_read.kind == ActivityKind::kKernel);
  REQUIRE(trace.gpu_details.Has(kernel_read.detail));
  const tfprof::GpuDetail detail = trace.gpu_details.Get(kernel_read.detail);
  CHECK(detail.correlation == 5);
  CHECK(detail.launch_ns == 1000);
  CHECK(detail.thread_id == 11);
  CHECK(trace.work_shapes.Get(detail.shape).registers == 32);
  CHECK(trace.work_shapes.Get(detail.shape).grid[2] == 3);
  CHECK(trace.work_shapes.Get(detail.shape).block[0] == 4);
  CHECK((detail.fields & tfprof::kGpuHasLaunchShape) != 0);
  const tfprof::Track &stream = trace.tracks[kernel_read.track];
  CHECK(stream.kind == TrackKind::kGpuStream);
  CHECK(stream.name == "stream 7");
  CHECK(stream.device == 0);
  CHECK(stream.stream == 7);
  CHECK(trace.processes[stream.process].labels == "NVIDIA H100");
  const Activity &copy_read = Named(trace, "Memcpy HtoD (Pageable -> Device)");
  CHECK(copy_read.kind == ActivityKind::kMemcpy);
  CHECK(copy_read.copy == tfprof::CopyKind::kHostToDevice);
  CHECK(copy_read.bytes == 4096);
  CHECK(copy_read.track == kernel_read.track);
  const Activity &sync_read = Named(trace, "cudaStreamSynchronize");
  CHECK(sync_read.kind == ActivityKind::kSync);
  CHECK(trace.tracks[sync_read.track].kind == TrackKind::kGpuSync);
  CHECK(trace.tracks[sync_read.track].stream == 7);
  REQUIRE(trace.counters.size() == 3);
  int memory = 0;
  for (const tfprof::CounterSample &sample : trace.counters) {
    if (trace.names.Get(sample.name) == "device memory") {
      ++memory;
      CHECK(trace.names.Get(sample.series) == "bytes in use");
      CHECK(trace.tracks[sample.track].kind == TrackKind::kCounters);
      CHECK(trace.tracks[sample.track].device == 0);
      CHECK(sample.value == (sample.ns == 1000 ? 1024 : 4096));
    } else {
      CHECK(trace.names.Get(sample.name) == "loss");
      CHECK(trace.names.Get(sample.series) == "value");
      CHECK(trace.tracks[sample.track].name == "main");
      CHECK(sample.value == 3);
    }
  }
  CHECK(memory == 2);
  CHECK(trace.producer == Producer::kPytorch);
}

TEST_CASE("perfetto reader: tfprof's trace info is the header; the last one counts") {
  Builder b;
  b.Process(1, 10, "trainer");
  b.Process(2, 20, "GPU 0");
  b.Thread(3, 1, 10, 11, "main");
  b.Named(9, std::nullopt, "tfprof");
  b.Begin(5, 3, "op", "user_annotation");
  b.End(6, 3);
  const auto info = [&](uint64_t dropped) {
    pf::TrackEvent &instant = b.Event(7, 9, pf::TrackEvent::TYPE_INSTANT, "tfprof trace info");
    pf::DebugAnnotation *root = Arg(instant, "tfprof");
    const auto entry = [&](pf::DebugAnnotation *dict, const std::string &name) {
      pf::DebugAnnotation *value = dict->add_dict_entries();
      value->set_name(name);
      return value;
    };
    entry(root, "version")->set_string_value("1.2.3");
    entry(root, "clock")->set_string_value("tsc");
    entry(root, "pid")->set_int_value(10);
    entry(root, "hostname")->set_string_value("node7");
    pf::DebugAnnotation *argv = entry(root, "command_line");
    argv->add_array_values()->set_string_value("python");
    argv->add_array_values()->set_string_value("train.py");
    entry(root, "start_time_unix_ns")->set_int_value(1700000000000001000);
    entry(root, "start_time_monotonic_ns")->set_int_value(1000);
    entry(root, "end_time_monotonic_ns")->set_int_value(9000);
    entry(root, "events_recorded")->set_uint_value(1234);
    entry(root, "rank")->set_int_value(3);
    entry(root, "dropped_events")->set_uint_value(dropped);
    entry(root, "gpu_records_dropped")->set_uint_value(2);
    entry(root, "unmatched_span_ends")->set_uint_value(3);
    entry(root, "unmatched_step_ends")->set_uint_value(4);
    entry(root, "memory_dropped_events")->set_uint_value(5);
    entry(root, "discarded_events")->set_uint_value(6);
    pf::DebugAnnotation *gpu = entry(root, "gpu");
    entry(gpu, "state")->set_string_value("active");
    entry(gpu, "reason")->set_string_value("");
    entry(gpu, "cupti")->set_string_value("libcupti.so.12");
    entry(gpu, "buffers_refused")->set_uint_value(7);
    entry(gpu, "records_unparsed")->set_uint_value(8);
    entry(gpu, "late_records")->set_uint_value(9);
    pf::DebugAnnotation *device = entry(root, "deviceProperties")->add_array_values();
    entry(device, "id")->set_int_value(0);
    entry(device, "name")->set_string_value("NVIDIA H100");
    entry(device, "totalGlobalMem")->set_uint_value(85000000000);
    entry(device, "computeMajor")->set_int_value(9);
    entry(device, "computeMinor")->set_int_value(0);
    entry(device, "numSms")->set_int_value(132);
    pf::DebugAnnotation *groups = entry(root, "process_groups");
    for (int pid : {10, 20}) {
      pf::DebugAnnotation *group = groups->add_array_values();
      entry(group, "pid")->set_int_value(pid);
      entry(group, "group")->set_int_value(1);
      entry(group, "rank")->set_int_value(3);
    }
    entry(root, "sources")->set_string_value(R"([{"path":"a.json"}])");
  };
  info(100);
  info(1);  // a later piece: this one counts
  b.Begin(8, 3, "later", "user_annotation");
  b.End(9, 3);

  TempDir dir;
  const Trace trace = MustLoad(b.Write(dir));
  CHECK(trace.producer == Producer::kTfprof);
  CHECK(trace.events_in_file == 2);  // the trace info is no event
  CHECK(trace.activities.size() == 2);
  CHECK(trace.pid == 10);
  CHECK(trace.process_name == "trainer");
  CHECK(trace.hostname == "node7");
  CHECK(trace.clock == "tsc");
  CHECK(trace.command_line == std::vector<std::string>{"python", "train.py"});
  CHECK(trace.wall_offset_ns == 1700000000000000000);
  CHECK(trace.start_ns == 1000);
  CHECK(trace.end_ns == 9000);
  CHECK(trace.events_recorded == 1234u);
  CHECK(trace.rank == 3);
  CHECK(trace.losses.reported);
  CHECK(trace.losses.dropped_events == 1);
  CHECK(trace.losses.gpu_records_dropped == 2);
  CHECK(trace.losses.unmatched_span_ends == 3);
  CHECK(trace.losses.unmatched_step_ends == 4);
  CHECK(trace.losses.memory_dropped_events == 5);
  CHECK(trace.losses.discarded_events == 6);
  CHECK(trace.losses.gpu_buffers_refused == 7);
  CHECK(trace.losses.gpu_records_unparsed == 8);
  CHECK(trace.losses.gpu_late_records == 9);
  CHECK(trace.gpu.reported);
  CHECK(trace.gpu.state == "active");
  CHECK(trace.gpu.library == "libcupti.so.12");
  REQUIRE(trace.devices.size() == 1);
  CHECK(trace.devices[0].name == "NVIDIA H100");
  CHECK(trace.devices[0].global_memory_bytes == 85000000000u);
  CHECK(trace.devices[0].compute_major == 9);
  CHECK(trace.devices[0].multiprocessors == 132);
  CHECK(trace.sources_json == R"([{"path":"a.json"}])");
  REQUIRE(trace.processes.size() == 1);  // the GPU process holds no events
  CHECK(trace.processes[0].group == 1);
  CHECK(trace.processes[0].rank == 3);
  for (const tfprof::Track &track : trace.tracks) CHECK(track.name != "tfprof");
}

TEST_CASE("perfetto reader: a track's events out of time order; unmatched begins and ends") {
  Builder b;
  b.Thread(2, 0, 10, 11, "main");  // a thread whose process has no descriptor
  b.Begin(100, 2, "later", "user_annotation");
  b.End(200, 2);
  b.Begin(10, 2, "earlier", "user_annotation");
  b.Begin(20, 2, "nested", "user_annotation");
  b.End(30, 2);
  b.End(50, 2);
  b.End(300, 2);  // no begin
  b.Begin(400, 2, "open", "user_annotation");
  b.Event(500, 7, pf::TrackEvent::TYPE_INSTANT, "elsewhere");  // a track never described
  TempDir dir;
  const Trace trace = MustLoad(b.Write(dir));
  CHECK(Named(trace, "earlier").begin_ns == 10);
  CHECK(Named(trace, "earlier").end_ns == 50);
  CHECK(Named(trace, "nested").end_ns == 30);
  CHECK(Named(trace, "later").end_ns == 200);
  const Activity &open = Named(trace, "open");
  CHECK(open.end_ns == 500);
  CHECK(open.flags == tfprof::kActivityIncomplete);
  CHECK(trace.processes[trace.tracks[open.track].process].pid == 10);
  CHECK(Named(trace, "elsewhere").track != open.track);
}

TEST_CASE("perfetto reader: events without a track go on the sequence's process") {
  Builder b;
  pf::TracePacket &packet = b.Packet(5);
  packet.set_trusted_pid(77);
  packet.set_timestamp(42);
  packet.mutable_track_event()->set_type(pf::TrackEvent::TYPE_INSTANT);
  packet.mutable_track_event()->set_name("tick");
  TempDir dir;
  const Trace trace = MustLoad(b.Write(dir));
  const Activity &tick = Named(trace, "tick");
  CHECK(tick.begin_ns == 42);
  CHECK(trace.processes[trace.tracks[tick.track].process].pid == 77);
}

TEST_CASE("perfetto reader: damage and truncation keep what came before") {
  Builder b;
  b.Thread(2, 0, 10, 11, "main");
  for (int index = 0; index < 10; ++index) {
    b.Begin(static_cast<uint64_t>(index) * 10, 2, "op" + std::to_string(index), "user_annotation");
    b.End(static_cast<uint64_t>(index) * 10 + 5, 2);
  }
  const std::string whole = b.Bytes();
  TempDir dir;
  {
    // Cut short (a writer killed): no error, everything before the cut (no steps to drop).
    const std::string path = dir.File("cut.pftrace");
    std::ofstream(path, std::ios::binary) << whole.substr(0, whole.size() - 3);
    const absl::StatusOr<Trace> cut = LoadTrace(path, LoadOptions{});
    REQUIRE(cut.ok());
    REQUIRE(cut->cut.has_value());
    CHECK(cut->cut->file_bytes == whole.size() - 3);
    CHECK(cut->cut->problem == "inside a packet");
    CHECK(cut->activities.size() >= 9);
    CHECK(Named(*cut, "op8").end_ns == 85);
  }
  // Bytes that are no field (tag 0) after the packets: damage, not a cut (which a varint running
  // into the end, like "\xff\xff\xff", could be).
  for (const std::string &bytes : {whole + std::string("\0\0\0", 3)}) {
    const std::string path = dir.File("damaged.pftrace");
    std::ofstream(path, std::ios::binary) << bytes;
    const absl::StatusOr<Trace> failed = LoadTrace(path, LoadOptions{});
    REQUIRE_FALSE(failed.ok());
    CHECK(absl::IsDataLoss(failed.status()));
    const std::string message(failed.status().message());
    CHECK(message.rfind(path + ": byte ", 0) == 0);
    LoadOptions salvage;
    salvage.salvage = true;
    const absl::StatusOr<Trace> kept = LoadTrace(path, salvage);
    REQUIRE(kept.ok());
    CHECK(kept->damage == message);
    CHECK(kept->format == Format::kPerfetto);
    CHECK(kept->activities.size() >= 9);
    CHECK(Named(*kept, "op8").end_ns == 85);
  }
  // A packet whose TrackEvent is damaged inside.
  std::string inner = whole;
  const size_t at = inner.rfind("op9");
  REQUIRE(at != std::string::npos);
  inner[at - 2] = static_cast<char>(0xff);  // the name's tag
  std::ofstream(dir.File("inner.pftrace"), std::ios::binary) << inner;
  const absl::StatusOr<Trace> failed = LoadTrace(dir.File("inner.pftrace"), LoadOptions{});
  REQUIRE_FALSE(failed.ok());
  CHECK(absl::IsDataLoss(failed.status()));
}

TEST_CASE("perfetto reader: the content decides; other formats are not taken for Perfetto") {
  Builder b;
  b.Thread(2, 0, 10, 11, "main");
  b.Begin(1, 2, "op", "user_annotation");
  b.End(2, 2);
  CHECK(tfprof::LooksLikePerfettoTrace(b.Bytes()));
  // JSON that starts with a newline: '\n' is also the packet tag, '{' or '[' a length.
  for (const std::string_view json : {"\n{\"traceEvents\":[]}", "\n[{\"ph\":\"X\"}]", "\n{ }",
                                      "\n{\n\"a\":1}", "\n[]", "\n\n{}"}) {
    CAPTURE(json);
    CHECK_FALSE(tfprof::LooksLikePerfettoTrace(json));
  }
  // A RunMetadata and a StepStats start with field 1 too; their first inner field is 1 (or 2).
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *device = run.mutable_step_stats()->add_dev_stats();
  device->set_device("/job:localhost/replica:0/task:0/device:CPU:0");
  tensorflow::NodeExecStats *node = device->add_node_stats();
  node->set_node_name("MatMul");
  node->set_all_start_micros(1000);
  node->set_op_end_rel_micros(5);
  node->set_all_end_rel_micros(5);
  CHECK_FALSE(tfprof::LooksLikePerfettoTrace(run.SerializeAsString()));
  CHECK_FALSE(tfprof::LooksLikePerfettoTrace(run.step_stats().SerializeAsString()));
  tensorflow::StepStats nameless;
  *nameless.add_dev_stats()->add_node_stats() = *node;
  CHECK_FALSE(tfprof::LooksLikePerfettoTrace(nameless.SerializeAsString()));

  TempDir dir;
  std::ofstream(dir.File("run.pb"), std::ios::binary) << run.SerializeAsString();
  const Trace tensorflow = MustLoad(dir.File("run.pb"));
  CHECK(tensorflow.format == Format::kRunMetadata);
  CHECK(tensorflow.producer == Producer::kTensorFlow);
  std::ofstream(dir.File("trace.bin"), std::ios::binary) << b.Bytes();
  CHECK(MustLoad(dir.File("trace.bin")).format == Format::kPerfetto);
  std::ofstream(dir.File("junk.pftrace"), std::ios::binary) << "plain text, no trace\n";
  const absl::StatusOr<Trace> junk = LoadTrace(dir.File("junk.pftrace"), LoadOptions{});
  REQUIRE_FALSE(junk.ok());
  CHECK(absl::IsInvalidArgument(junk.status()));
  CHECK(std::string(junk.status().message()).find("not a trace") != std::string::npos);
}
