// The Chrome trace JSON reader through the trace loader of the `tfprof` file commands (tfprof's,
// the PyTorch profiler's, any other; plain and gzip), then the loader itself: a session of the
// real runtime in every format it writes, and every kind of error, checked on the loaded content.
// (TensorFlow's formats: tests/runtime/formats/tensorflow/step_stats_trace_reader_test.cc.)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "doctest/doctest.h"
#include "support/test_files.h"
#include "tfprof/tfprof.h"
#include "runtime/formats/chrome/chrome_json_reader.h"
#include "runtime/formats/tensorflow/step_stats_trace_reader.h"
#include "runtime/formats/trace_reader.h"
#include "tools/tfprof/progress.h"
#include "support/loaded_trace_checks.h"
#include "support/step_stats_builder.h"

namespace tfprof::cli {

namespace {

using tfprof_test::CountKind;
using tfprof_test::MustLoad;
using tfprof_test::Named;
using tfprof_test::StepNumbers;
using tfprof_test::TempDir;

void WriteText(const std::string &path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

void WriteGzip(const std::string &path, std::string_view text) {
  gzFile file = gzopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  REQUIRE(gzwrite(file, text.data(), static_cast<unsigned>(text.size())) ==
          static_cast<int>(text.size()));
  REQUIRE(gzclose(file) == Z_OK);
}

absl::Status LoadError(const std::string &path) {
  absl::StatusOr<Trace> trace = LoadTrace(path, LoadOptions{});
  REQUIRE_MESSAGE(!trace.ok(), path << " loaded");
  return trace.status();
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string Message(const absl::Status &status) { return std::string(status.message()); }

// Host ops by name with their Unix-time extents, in a comparable order.
std::vector<std::tuple<std::string, int64_t, int64_t>> WallOps(const Trace &trace) {
  std::vector<std::tuple<std::string, int64_t, int64_t>> ops;
  const int64_t offset = trace.wall_offset_ns.value_or(0);
  for (const Activity &activity : trace.activities) {
    if (activity.kind != ActivityKind::kHostOp) continue;
    ops.emplace_back(trace.names.Get(activity.name), activity.begin_ns + offset,
                     activity.end_ns + offset);
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

constexpr std::string_view kGenericTrace = R"json({"traceEvents":[
 {"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"trainer"}},
 {"ph":"M","name":"thread_name","pid":7,"tid":70,"args":{"name":"main"}},
 {"ph":"X","cat":"Op","name":"MatMul","pid":7,"tid":70,"ts":1.5,"dur":2},
 {"ph":"X","name":"esc\"aped\u00e9\ud83d\ude00","pid":7,"tid":70,"ts":12.345,"dur":0.001,
  "args":{"nested":{"a":[1,-2.5e-3,{"b":null}],"c":"x\\y"},"t":true,"f":false}},
 {"ph":"B","cat":"cpu_op","name":"outer","pid":7,"tid":71,"ts":100},
 {"ph":"B","name":"inner","pid":7,"tid":71,"ts":110},
 {"ph":"E","pid":7,"tid":71,"ts":120},
 {"ph":"E","pid":7,"tid":71,"ts":1.5e2},
 {"ph":"E","pid":7,"tid":72,"ts":155},
 {"ph":"b","cat":"range","name":"load","id":"0x1","pid":7,"tid":70,"ts":200},
 {"ph":"b","cat":"range","name":"other","id":"0x2","pid":7,"tid":71,"ts":205},
 {"ph":"e","cat":"range","name":"load","id":"0x1","pid":7,"tid":71,"ts":250},
 {"ph":"e","cat":"range","id":"0x2","pid":7,"tid":71,"ts":260},
 {"ph":"i","name":"mark","pid":7,"tid":70,"ts":300,"s":"t"},
 {"ph":"C","name":"mem","pid":7,"ts":310,"args":{"v":1.5}},
 {"ph":"s","cat":"flow","id":1,"name":"f","pid":7,"tid":70,"ts":1},
 {"ph":"X","cat":"python_function","name":"train.py(10): step","pid":7,"tid":70,"ts":400,"dur":10},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":7,"tid":70,"ts":405,"dur":1}
],"displayTimeUnit":"ns","otherData":{"version":"x"}}
)json";

// As PyTorch's profiler (Kineto's output_json.cpp) writes it, pretty-printed, ts relative to
// baseTimeNanoseconds.
constexpr std::string_view kPytorchTrace = R"json({
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85031714816,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132
    }
  ],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_count": 1, "nccl_version": "2.21.5"},
  "record_shapes": 1,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
  {
    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 4242, "tid": 4242,
    "ts": 100.000, "dur": 900.500,
    "args": {
      "External id": 1,"Record function id": 0, "Ev Idx": 0
    }
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": 4242,
    "ts": 110.250, "dur": 50.000,
    "args": {
      "External id": 2,"Record function id": 0, "Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"], "Ev Idx": 1
    }
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242,
    "ts": 120.000, "dur": 5.000,
    "args": {
      "External id": 2,
      "cbid": 211, "correlation": 77
    }
  },
  {
    "ph": "s", "id": 77, "pid": 4242, "tid": 4242, "ts": 120.000,
    "cat": "ac2g", "name": "ac2g"
  },
  {
    "ph": "X", "cat": "kernel", "name": "volta_sgemm_64x64_nn", "pid": 0, "tid": 7,
    "ts": 130.000, "dur": 20.125,
    "args": {
      "External id": 2,
      "queued": 0, "device": 0, "context": 1,
      "stream": 7, "correlation": 77,
      "registers per thread": 128,
      "shared memory": 16384,
      "blocks per SM": 0.121212,
      "warps per SM": 0.969697,
      "grid": [16, 1, 1],
      "block": [256, 1, 1],
      "est. achieved occupancy %": 12
    }
  },
  {
    "ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 130.000,
    "cat": "ac2g", "name": "ac2g", "bp": "e"
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 4242, "tid": 4242,
    "ts": 200.000, "dur": 4.000,
    "args": {
      "cbid": 41, "correlation": 78
    }
  },
  {
    "ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7,
    "ts": 210.000, "dur": 3.500,
    "args": {
      "device": 0, "context": 1,
      "stream": 7, "correlation": 78,
      "bytes": 16384, "memory bandwidth (GB/s)": 4.68114
    }
  },
  {
    "ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 13,
    "ts": 220.000, "dur": 1.000,
    "args": {
      "device": 0, "context": 1,
      "stream": 13, "correlation": 79,
      "bytes": 512, "memory bandwidth (GB/s)": 0.512
    }
  },
  {
    "ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3", "pid": 0, "tid": 7,
    "ts": 129.999, "dur": 91.002,
    "args": {
      "External id": 1
    }
  },
  {
    "name": "process_name", "ph": "M", "ts": 100.000, "pid": 0, "tid": 0,
    "args": {
      "name": "GPU 0"
    }
  },
  {
    "name": "thread_name", "ph": "M", "ts": 100.000, "pid": 0, "tid": 7,
    "args": {
      "name": "stream 7 "
    }
  },
  {
    "name": "thread_name", "ph": "M", "ts": 100.000, "pid": 4242, "tid": 4242,
    "args": {
      "name": "thread 4242 (python)"
    }
  },
  {
    "ph": "X", "cat": "Trace", "ts": 90.000, "dur": 1000.000,
    "pid": "Spans", "tid": "PyTorch Profiler",
    "name": "PyTorch Profiler (0)",
    "args": {
      "Op count": 0
    }
  },
  {
    "name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",
    "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 90.000
  },
  {
    "name": "Record Window End", "ph": "i", "s": "g",
    "pid": "", "tid": "", "ts": 1100.000
  }
  ],
  "traceName": "/tmp/trace.json"
})json";

// As tfprof's chrome_trace_writer.cc and gpu_chrome_rows.cc write it (GPU rows without a GPU).
constexpr std::string_view kTfprofTrace =
    R"json({"displayTimeUnit":"ns",
"dropped_events":5,
"gpu_records_dropped":2,
"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":85031714816,"computeMajor":9,"computeMinor":0,"numSms":132}],
"tfprof":{"version":"0.2.0","clock":"tsc","pid":4242,"command_line":["python","train.py"],"start_time_unix_ns":1700000000000000000,"start_time_monotonic_ns":1000000000,"end_time_monotonic_ns":2000000000,"events_recorded":10,"unmatched_span_ends":1,"unmatched_step_ends":0,"gpu":{"state":"active","reason":"","cupti":"/usr/lib/libcupti.so","records_dropped":2,"buffers_refused":0,"records_unparsed":0,"late_records":0,"kernels":1,"memcpys":1,"memsets":0,"api_calls":1},"hostname":"node7","timestamps":"CLOCK_MONOTONIC microseconds; add start_time_unix_ns - start_time_monotonic_ns (in ns) for wall-clock time"},
"distributedInfo":{"rank":2},
"traceEvents":[
{"ph":"M","pid":4242,"tid":0,"name":"process_name","args":{"name":"trainer"}},
{"ph":"M","pid":4242,"tid":0,"name":"process_sort_index","args":{"sort_index":0}},
{"ph":"M","pid":4242,"tid":2000000000,"name":"thread_name","args":{"name":"Steps"}},
{"ph":"M","pid":4242,"tid":2000000000,"name":"thread_sort_index","args":{"sort_index":0}},
{"ph":"M","pid":4242,"tid":1001,"name":"thread_name","args":{"name":"main"}},
{"ph":"M","pid":4242,"tid":1001,"name":"thread_sort_index","args":{"sort_index":1}},
{"ph":"X","cat":"step","name":"step 2","pid":4242,"tid":2000000000,"ts":1000100.000,"dur":100.000,"args":{"step":2}},
{"ph":"X","cat":"step","name":"step 1","pid":4242,"tid":2000000000,"ts":1000000.000,"dur":100.000,"args":{"step":1}},
{"ph":"X","cat":"user_annotation","name":"forward","pid":4242,"tid":1001,"ts":1000005.000,"dur":55.000,"args":{"step":1}},
{"ph":"i","s":"t","cat":"user_annotation","name":"mark","pid":4242,"tid":1001,"ts":1000006.000,"args":{"step":1}},
{"ph":"C","cat":"counter","name":"loss","pid":4242,"tid":1001,"ts":1000007.000,"args":{"value":0.5}},
{"ph":"b","cat":"range","name":"data","id":1,"pid":4242,"tid":1001,"ts":1000008.000,"args":{"step":1}},
{"ph":"e","cat":"range","name":"data","id":1,"pid":4242,"tid":1001,"ts":1000009.500,"args":{"step":1}},
{"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":"GPU 0"}},
{"ph":"M","pid":0,"tid":0,"name":"process_labels","args":{"labels":"NVIDIA H100 80GB HBM3"}},
{"ph":"M","pid":0,"tid":7,"name":"thread_name","args":{"name":"stream 7"}},
{"ph":"M","pid":0,"tid":13,"name":"thread_name","args":{"name":"stream 13"}},
{"ph":"M","pid":0,"tid":1000007,"name":"thread_name","args":{"name":"stream 7 sync"}},
{"ph":"M","pid":4242,"tid":1999999999,"name":"thread_name","args":{"name":"CUPTI overhead"}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":13,"ts":1000020.000,"dur":10.000,"args":{"device":0,"context":1,"stream":13,"correlation":1,"External id":1,"bytes":1048576,"memory bandwidth (GB/s)":104.8576,"kind":"HtoD","op":"forward","step":1}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1000030.000,"dur":20.000,"args":{"device":0,"context":1,"stream":7,"correlation":2,"External id":1,"registers per thread":32,"shared memory":0,"static shared memory":0,"dynamic shared memory":0,"grid":[1,1,1],"block":[128,1,1],"op":"forward","step":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,"tid":1001,"ts":1000012.000,"dur":2.000,"args":{"cbid":211,"correlation":2,"External id":1,"step":1}},
{"ph":"s","cat":"ac2g","name":"ac2g","id":2,"pid":4242,"tid":1001,"ts":1000012.000},
{"ph":"f","cat":"ac2g","name":"ac2g","id":2,"pid":0,"tid":7,"ts":1000030.000,"bp":"e"},
{"ph":"X","cat":"gpu_user_annotation","name":"step 1","pid":0,"tid":7,"ts":1000030.000,"dur":20.000,"args":{"step":1}},
{"ph":"C","name":"GPU memory","pid":0,"tid":0,"ts":1000020.000,"args":{"bytes in use":4096}},
{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":1000007,"ts":1000060.000,"dur":5.000,"args":{"context":1,"stream":7,"correlation":9,"step":1}},
{"ph":"X","cat":"overhead","name":"Activity Buffer Request","pid":4242,"tid":1999999999,"ts":1000001.000,"dur":1.000}
]}
)json";

// Everything the loader fills in, compared field by field.
void CheckSame(const Trace &a, const Trace &b) {
  CHECK(a.format == b.format);
  CHECK(a.events_in_file == b.events_in_file);
  REQUIRE(a.names.size() == b.names.size());
  for (uint32_t index = 0; index < a.names.size(); ++index) CHECK(a.names.Get(index) == b.names.Get(index));
  REQUIRE(a.processes.size() == b.processes.size());
  for (size_t index = 0; index < a.processes.size(); ++index) {
    CHECK(a.processes[index].pid == b.processes[index].pid);
    CHECK(a.processes[index].name == b.processes[index].name);
  }
  REQUIRE(a.tracks.size() == b.tracks.size());
  for (size_t index = 0; index < a.tracks.size(); ++index) {
    const Track &x = a.tracks[index];
    const Track &y = b.tracks[index];
    CHECK(std::tie(x.process, x.tid, x.name, x.kind, x.device, x.stream) ==
          std::tie(y.process, y.tid, y.name, y.kind, y.device, y.stream));
  }
  REQUIRE(a.activities.size() == b.activities.size());
  for (size_t index = 0; index < a.activities.size(); ++index) {
    const Activity &x = a.activities[index];
    const Activity &y = b.activities[index];
    CHECK(std::tie(x.begin_ns, x.end_ns, x.bytes, x.name, x.track, x.kind, x.copy) ==
          std::tie(y.begin_ns, y.end_ns, y.bytes, y.name, y.track, y.kind, y.copy));
  }
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t index = 0; index < a.steps.size(); ++index) {
    const Step &x = a.steps[index];
    const Step &y = b.steps[index];
    CHECK(std::tie(x.number, x.begin_ns, x.end_ns, x.process) ==
          std::tie(y.number, y.begin_ns, y.end_ns, y.process));
  }
  CHECK(a.wall_offset_ns == b.wall_offset_ns);
  CHECK(a.pid == b.pid);
  CHECK(a.hostname == b.hostname);
  CHECK(a.rank == b.rank);
  CHECK(std::tie(a.losses.reported, a.losses.dropped_events, a.losses.gpu_records_dropped,
                 a.losses.unmatched_span_ends, a.losses.unmatched_step_ends) ==
        std::tie(b.losses.reported, b.losses.dropped_events, b.losses.gpu_records_dropped,
                 b.losses.unmatched_span_ends, b.losses.unmatched_step_ends));
}

// `path` read through a window of `window_bytes`.
absl::Status ReadThroughWindow(const std::string &path, bool gzip, size_t window_bytes,
                               Trace *trace) {
  trace->path = path;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const absl::Status status = ReadChromeTrace(fd, gzip, 0, nullptr, trace, window_bytes);
  close(fd);
  return status;
}

void CheckTfprofTrace(const Trace &trace) {
  CHECK(trace.producer == Producer::kTfprof);
  CHECK(trace.events_in_file == 28);
  REQUIRE(trace.wall_offset_ns.has_value());
  CHECK(*trace.wall_offset_ns == 1700000000000000000 - 1000000000);
  CHECK(trace.pid == 4242);
  CHECK(trace.hostname == "node7");
  CHECK(trace.rank == 2);
  CHECK(trace.losses.reported);
  CHECK(trace.losses.dropped_events == 5);
  CHECK(trace.losses.gpu_records_dropped == 2);
  CHECK(trace.losses.unmatched_span_ends == 1);
  CHECK(trace.losses.unmatched_step_ends == 0);
  CHECK(trace.damage.empty());

  // Steps are steps, sorted, not activities; the step row holds nothing else, so it is no track.
  REQUIRE(trace.steps.size() == 2);
  CHECK(trace.steps[0].number == 1);
  CHECK(trace.steps[0].begin_ns == 1000000000);
  CHECK(trace.steps[0].end_ns == 1000100000);
  CHECK(trace.steps[1].number == 2);
  CHECK(trace.processes[trace.steps[0].process].name == "trainer");
  CHECK(trace.activities.size() == 9);
  CHECK(CountKind(trace, ActivityKind::kHostOp) == 1);
  CHECK(CountKind(trace, ActivityKind::kRange) == 1);
  CHECK(CountKind(trace, ActivityKind::kKernel) == 1);
  CHECK(CountKind(trace, ActivityKind::kMemcpy) == 1);
  CHECK(CountKind(trace, ActivityKind::kRuntimeApi) == 1);
  CHECK(CountKind(trace, ActivityKind::kGpuAnnotation) == 1);
  CHECK(CountKind(trace, ActivityKind::kInstant) == 1);
  CHECK(CountKind(trace, ActivityKind::kSync) == 1);
  CHECK(CountKind(trace, ActivityKind::kOverhead) == 1);
  // main, streams 7 and 13, GPU 0's memory counter, stream 7's sync row, CUPTI's overhead row.
  REQUIRE(trace.tracks.size() == 6);

  // What the writer wrote besides spans comes back: the header's facts, counters, GPU details.
  CHECK(trace.clock == "tsc");
  CHECK(trace.command_line == std::vector<std::string>{"python", "train.py"});
  CHECK(trace.start_ns == 1000000000);
  CHECK(trace.end_ns == 2000000000);
  CHECK(trace.events_recorded == 10u);
  CHECK(trace.process_name == "trainer");
  CHECK(trace.gpu.reported);
  CHECK(trace.gpu.state == "active");
  CHECK(trace.gpu.library == "/usr/lib/libcupti.so");
  REQUIRE(trace.devices.size() == 1);
  CHECK(trace.devices[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(trace.devices[0].multiprocessors == 132);
  REQUIRE(trace.counters.size() == 2);
  CHECK(trace.names.Get(trace.counters[0].name) == "loss");
  CHECK(trace.counters[0].value == 0.5);
  CHECK(trace.names.Get(trace.counters[0].series) == "value");
  CHECK(trace.names.Get(trace.counters[1].series) == "bytes in use");
  CHECK(trace.tracks[trace.counters[1].track].kind == TrackKind::kCounters);
  const Activity &launch = Named(trace, "cudaLaunchKernel");
  REQUIRE(trace.gpu_details.Has(launch.detail));
  CHECK(trace.gpu_details.Get(launch.detail).callback_id == 211);
  CHECK((trace.gpu_details.Get(launch.detail).fields & kGpuLaunchesWork) != 0);  // gemm shares its id
  const Activity &kernel = Named(trace, "gemm");
  REQUIRE(trace.gpu_details.Has(kernel.detail));
  const GpuDetail shape = trace.gpu_details.Get(kernel.detail);
  CHECK(shape.correlation == 2);
  CHECK(shape.external_id == 1);
  CHECK(trace.work_shapes.Get(shape.shape).block[0] == 128);
  CHECK(trace.work_shapes.Get(shape.shape).registers == 32);
  CHECK(trace.names.Get(shape.op) == "forward");
  const Activity &sync = Named(trace, "Stream Sync");
  CHECK(trace.tracks[sync.track].tid == 1000007);
  const Activity &mark = Named(trace, "mark");
  CHECK(mark.begin_ns == mark.end_ns);
  CHECK(mark.step == 1);  // the one step rule, as for every activity
  CHECK(trace.processes[trace.tracks[kernel.track].process].labels == "NVIDIA H100 80GB HBM3");

  const Activity &forward = Named(trace, "forward");
  CHECK(forward.begin_ns == 1000005000);
  CHECK(forward.end_ns == 1000060000);
  const Track &main = trace.tracks[forward.track];
  CHECK(main.name == "main");
  CHECK(main.tid == 1001);
  CHECK(main.kind == TrackKind::kHostThread);
  CHECK(trace.processes[main.process].pid == 4242);
  CHECK(Named(trace, "cudaLaunchKernel").track == forward.track);
  const Activity &data = Named(trace, "data");
  CHECK(data.kind == ActivityKind::kRange);
  CHECK(data.end_ns - data.begin_ns == 1500);

  const Activity &gemm = Named(trace, "gemm");
  const Track &stream7 = trace.tracks[gemm.track];
  CHECK(stream7.kind == TrackKind::kGpuStream);
  CHECK(stream7.device == 0);
  CHECK(stream7.stream == 7);
  CHECK(stream7.name == "stream 7");
  CHECK(trace.processes[stream7.process].name == "GPU 0");
  CHECK(Named(trace, "step 1").track == gemm.track);
  const Activity &copy = Named(trace, "Memcpy HtoD (Pinned -> Device)");
  CHECK(copy.copy == CopyKind::kHostToDevice);
  CHECK(copy.bytes == 1048576);
  CHECK(trace.tracks[copy.track].stream == 13);
  CHECK(gemm.bytes == 0);
  CHECK(gemm.copy == CopyKind::kNone);
}

}  // namespace

TEST_CASE("chrome reader: microseconds become exact nanoseconds") {
  const auto ns = [](std::string_view text) {
    int64_t value = -12345;
    REQUIRE_MESSAGE(JsonMicrosToNanos(text, &value), text);
    return value;
  };
  CHECK(ns("1.5") == 1500);
  CHECK(ns("12.345") == 12345);
  CHECK(ns("1.5e3") == 1500000);
  CHECK(ns("1.5E+3") == 1500000);
  CHECK(ns("0") == 0);
  CHECK(ns("-0.001") == -1);
  CHECK(ns("1000000.001") == 1000000001);
  CHECK(ns("1700000000000000.123") == 1700000000000000123);
  CHECK(ns("9223372036854775.807") == INT64_MAX);
  CHECK(ns("-9223372036854775.808") == INT64_MIN);
  CHECK(ns("0.0004") == 0);
  CHECK(ns("0.0005") == 1);
  CHECK(ns("2.9999") == 3000);
  CHECK(ns("0.0029999") == 3);
  CHECK(ns("1e-9") == 0);
  CHECK(ns("123456789012345678901234e-20") == 1234568);
  CHECK(ns("0.000000000000000000000000000001") == 0);
  int64_t value = 0;
  CHECK_FALSE(JsonMicrosToNanos("9223372036854775.808", &value));
  CHECK_FALSE(JsonMicrosToNanos("1e300", &value));
  CHECK_FALSE(JsonMicrosToNanos("", &value));
  CHECK_FALSE(JsonMicrosToNanos("1.", &value));
  CHECK_FALSE(JsonMicrosToNanos(".5", &value));
  CHECK_FALSE(JsonMicrosToNanos("01", &value));
  CHECK_FALSE(JsonMicrosToNanos("1e", &value));
  CHECK_FALSE(JsonMicrosToNanos("12a", &value));
  CHECK_FALSE(JsonMicrosToNanos("NaN", &value));
}

TEST_CASE("chrome reader: any Chrome trace: complete, begin/end and async events") {
  TempDir dir;
  const std::string path = dir.File("generic.json");
  WriteText(path, kGenericTrace);
  const Trace trace = MustLoad(path);
  CHECK(trace.path == path);
  CHECK(trace.producer == Producer::kOther);
  CHECK_FALSE(trace.wall_offset_ns.has_value());
  CHECK_FALSE(trace.pid.has_value());
  CHECK_FALSE(trace.rank.has_value());
  CHECK_FALSE(trace.losses.reported);
  CHECK(trace.events_in_file == 18);
  CHECK(trace.steps.empty());
  CHECK(trace.activities.size() == 9);
  CHECK(CountKind(trace, ActivityKind::kInstant) == 1);
  REQUIRE(trace.counters.size() == 1);
  CHECK(trace.counters[0].value == 1.5);
  CHECK(trace.names.Get(trace.counters[0].series) == "v");
  CHECK(CountKind(trace, ActivityKind::kHostOp) == 4);
  CHECK(CountKind(trace, ActivityKind::kRange) == 2);
  CHECK(CountKind(trace, ActivityKind::kPythonFunction) == 1);
  CHECK(CountKind(trace, ActivityKind::kRuntimeApi) == 1);

  REQUIRE(trace.processes.size() == 1);
  CHECK(trace.processes[0].pid == 7);
  CHECK(trace.processes[0].name == "trainer");
  const Activity &matmul = Named(trace, "MatMul");
  CHECK(matmul.begin_ns == 1500);
  CHECK(matmul.end_ns == 3500);
  CHECK(trace.tracks[matmul.track].name == "main");
  CHECK(trace.tracks[matmul.track].tid == 70);
  const Activity &escaped = Named(trace, "esc\"aped\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(escaped.begin_ns == 12345);
  CHECK(escaped.end_ns == 12346);
  // "E" closes the innermost open "B" of its thread.
  const Activity &inner = Named(trace, "inner");
  CHECK(inner.begin_ns == 110000);
  CHECK(inner.end_ns == 120000);
  const Activity &outer = Named(trace, "outer");
  CHECK(outer.begin_ns == 100000);
  CHECK(outer.end_ns == 150000);
  CHECK(trace.tracks[outer.track].tid == 71);
  CHECK(trace.tracks[outer.track].name.empty());
  // Async ranges pair by category and id, across threads, and sit on their start's row.
  const Activity &load = Named(trace, "load");
  CHECK(load.kind == ActivityKind::kRange);
  CHECK(load.begin_ns == 200000);
  CHECK(load.end_ns == 250000);
  CHECK(load.track == matmul.track);
  CHECK(Named(trace, "other").end_ns == 260000);
  CHECK(Named(trace, "train.py(10): step").kind == ActivityKind::kPythonFunction);
}

TEST_CASE("chrome reader: launch shapes in every spelling read as their numbers") {
  // The plain "[x,y,z]" tfprof and Kineto write is read straight; anything else (spaces, signs,
  // a tenth digit, more or fewer items, fractions) goes through the general path. Both must
  // agree: each kernel's expected grid, a launch shape only with three items.
  struct Case {
    std::string grid;
    bool shape;
    int32_t x, y, z;
  };
  const std::vector<Case> cases = {
      {"[80,1,1]", true, 80, 1, 1},
      {"[0,0,0]", true, 0, 0, 0},
      {"[999999999,65535,2]", true, 999999999, 65535, 2},
      {"[1000000000,1,1]", true, 1000000000, 1, 1},  // ten digits
      {"[99999999999,1,1]", true, INT32_MAX, 1, 1},  // past an int32: clamped
      {"[-3,1,1]", true, -3, 1, 1},
      {"[ 80 , 1 , 1 ]", true, 80, 1, 1},
      {"[80,\n1,1]", true, 80, 1, 1},
      {"[80,1]", false, 80, 1, 0},        // the axes read are kept; no shape
      {"[80,1,1,1]", false, 80, 1, 1},
      {"[]", false, 0, 0, 0},
      {"[1.5,2,3]", true, 2, 2, 3},  // a fraction: rounded
  };
  std::string events;
  for (size_t index = 0; index < cases.size(); ++index) {
    std::string grid = cases[index].grid;
    for (size_t at = grid.find("\\n"); at != std::string::npos; at = grid.find("\\n")) {
      grid.replace(at, 2, "\n");
    }
    events += (index ? ",\n" : "") + std::string(R"({"ph":"X","cat":"kernel","name":"k)") +
              std::to_string(index) + R"(","pid":0,"tid":7,"ts":)" + std::to_string(10 * index) +
              R"(,"dur":1,"args":{"device":0,"stream":7,"correlation":)" + std::to_string(index) +
              R"(,"grid":)" + grid + "}}";
  }
  TempDir dir;
  const std::string path = dir.File("shapes.json");
  WriteText(path, R"({"traceEvents":[)" + events + "]}");
  const Trace trace = MustLoad(path);
  for (size_t index = 0; index < cases.size(); ++index) {
    CAPTURE(cases[index].grid);
    const Activity &kernel = Named(trace, "k" + std::to_string(index));
    REQUIRE(trace.gpu_details.Has(kernel.detail));
    const GpuDetail detail = trace.gpu_details.Get(kernel.detail);
    const GpuWorkShape &shape = trace.work_shapes.Get(detail.shape);
    // Only a grid of three items makes a launch shape.
    CHECK(((detail.fields & kGpuHasLaunchShape) != 0) == cases[index].shape);
    CHECK(shape.grid[0] == cases[index].x);
    CHECK(shape.grid[1] == cases[index].y);
    CHECK(shape.grid[2] == cases[index].z);
  }
  // Leading zeros are not JSON: an error at the byte, as before (with an event after it, so
  // that the plain path has its 32 bytes to look at).
  WriteText(path, R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,)"
                  R"("ts":1,"dur":1,"args":{"grid":[08,1,1]}},)"
                  R"({"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":2,"dur":1}]})");
  const absl::Status error = LoadError(path);
  CHECK(Message(error).find("shapes.json: byte") != std::string::npos);
}

TEST_CASE("chrome reader: the PyTorch profiler's trace") {
  TempDir dir;
  const std::string path = dir.File("pytorch.json");
  WriteText(path, kPytorchTrace);
  const Trace trace = MustLoad(path);
  CHECK(trace.producer == Producer::kPytorch);
  // Kineto writes ts relative to baseTimeNanoseconds, a Unix time.
  CHECK(trace.wall_offset_ns == 1700000000000000000);
  CHECK(trace.rank == 3);
  CHECK_FALSE(trace.losses.reported);
  CHECK(trace.events_in_file == 16);
  REQUIRE(trace.steps.size() == 1);
  CHECK(trace.steps[0].number == 3);
  CHECK(trace.steps[0].begin_ns == 100000);
  CHECK(trace.steps[0].end_ns == 1000500);
  CHECK(trace.processes[trace.steps[0].process].pid == 4242);

  // ProfilerStep#3 on the host is the step; the whole-trace span is dropped.
  CHECK(trace.activities.size() == 7);
  CHECK(CountKind(trace, ActivityKind::kHostOp) == 1);
  CHECK(CountKind(trace, ActivityKind::kRuntimeApi) == 2);
  CHECK(CountKind(trace, ActivityKind::kKernel) == 1);
  CHECK(CountKind(trace, ActivityKind::kMemcpy) == 1);
  CHECK(CountKind(trace, ActivityKind::kMemset) == 1);
  CHECK(CountKind(trace, ActivityKind::kGpuAnnotation) == 1);
  const Activity &mm = Named(trace, "aten::mm");
  CHECK(mm.begin_ns == 110250);
  CHECK(mm.end_ns == 160250);
  CHECK(trace.tracks[mm.track].name == "thread 4242 (python)");
  CHECK(Named(trace, "cudaLaunchKernel").track == mm.track);

  const Activity &kernel = Named(trace, "volta_sgemm_64x64_nn");
  CHECK(kernel.begin_ns == 130000);
  CHECK(kernel.end_ns == 150125);
  const Track &stream7 = trace.tracks[kernel.track];
  CHECK(stream7.kind == TrackKind::kGpuStream);
  CHECK(stream7.device == 0);
  CHECK(stream7.stream == 7);
  CHECK(stream7.name == "stream 7 ");
  CHECK(trace.processes[stream7.process].name == "GPU 0");
  const Activity &copy = Named(trace, "Memcpy DtoH (Device -> Pinned)");
  CHECK(copy.kind == ActivityKind::kMemcpy);
  CHECK(copy.copy == CopyKind::kDeviceToHost);
  CHECK(copy.bytes == 16384);
  CHECK(copy.track == kernel.track);
  const Activity &memset = Named(trace, "Memset (Device)");
  CHECK(memset.bytes == 512);
  const Track &stream13 = trace.tracks[memset.track];
  CHECK(stream13.kind == TrackKind::kGpuStream);
  CHECK(stream13.stream == 13);
  CHECK(stream13.name == "stream 13");
  const Activity &annotation = Named(trace, "ProfilerStep#3");
  CHECK(annotation.kind == ActivityKind::kGpuAnnotation);
  CHECK(annotation.begin_ns == 129999);
}

TEST_CASE("chrome reader: tfprof's Chrome trace, plain and gzip") {
  TempDir dir;
  WriteText(dir.File("tfprof.json"), kTfprofTrace);
  CheckTfprofTrace(MustLoad(dir.File("tfprof.json")));
  WriteGzip(dir.File("tfprof.json.gz"), kTfprofTrace);
  CheckTfprofTrace(MustLoad(dir.File("tfprof.json.gz")));
  // The content decides, not the name; concatenated gzip members are one stream.
  const std::string half(kTfprofTrace.substr(0, 1000));
  WriteGzip(dir.File("a.gz"), half);
  WriteGzip(dir.File("b.gz"), kTfprofTrace.substr(1000));
  WriteText(dir.File("trace.bin"), tfprof_test::ReadFile(dir.File("a.gz")) +
                                       tfprof_test::ReadFile(dir.File("b.gz")));
  CheckTfprofTrace(MustLoad(dir.File("trace.bin")));
  // A byte order mark, CRLF line ends.
  std::string crlf = "\xEF\xBB\xBF";
  for (char c : kTfprofTrace) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  WriteText(dir.File("crlf.json"), crlf);
  CheckTfprofTrace(MustLoad(dir.File("crlf.json")));
}

TEST_CASE("chrome reader: a window boundary anywhere in an event changes nothing") {
  TempDir dir;
  const std::string trailing_spaces = std::string(kGenericTrace) + std::string(100, ' ');
  for (const std::string_view text : {kGenericTrace, kPytorchTrace, kTfprofTrace,
                                      std::string_view(trailing_spaces)}) {
    for (const bool gzip : {false, true}) {
      const std::string path = dir.File(gzip ? "trace.json.gz" : "trace.json");
      if (gzip) {
        WriteGzip(path, text);
      } else {
        WriteText(path, text);
      }
      const Trace whole = MustLoad(path);
      for (size_t window = 1; window <= 80; window += window < 16 ? 1 : 7) {
        CAPTURE(gzip);
        CAPTURE(window);
        Trace windowed;
        const absl::Status status = ReadThroughWindow(path, gzip, window, &windowed);
        REQUIRE_MESSAGE(status.ok(), status.ToString());
        CheckSame(windowed, whole);
      }
    }
  }
  // The end of a cut file is found at the same byte whatever the window (LoadTrace() recovers
  // what precedes it; the reader itself reports it).
  const std::string cut = dir.File("cut.json");
  WriteText(cut, kTfprofTrace.substr(0, 2500));
  Trace in_one_window;
  const absl::Status expected = ReadThroughWindow(cut, false, size_t{1} << 20, &in_one_window);
  REQUIRE(absl::IsDataLoss(expected));
  for (size_t window = 1; window <= 64; window *= 2) {
    Trace windowed;
    CHECK(ReadThroughWindow(cut, false, window, &windowed) == expected);
  }
}

TEST_CASE("chrome reader: the array form, with and without its closing bracket") {
  TempDir dir;
  const std::string events =
      R"([{"ph":"X","name":"a","pid":1,"tid":2,"ts":1,"dur":1},)"
      "\n"
      R"({"ph":"X","name":"b","pid":1,"tid":2,"ts":3,"dur":1},)";
  for (const std::string &text : {events + "\n]", events + "\n", events.substr(0, events.size() - 1),
                                  events + R"({"ph":"i","name":"c","pid":1,"ts":4}])"}) {
    CAPTURE(text);
    WriteText(dir.File("array.json"), text);
    const Trace trace = MustLoad(dir.File("array.json"));
    CHECK(trace.producer == Producer::kOther);
    CHECK(trace.activities.size() - CountKind(trace, ActivityKind::kInstant) == 2);
    CHECK(Named(trace, "b").begin_ns == 3000);
  }
}

TEST_CASE("chrome reader: events larger than the read window, and many of them") {
  TempDir dir;
  // An event with 9 MB of args crosses the 4 MB window; 100000 small ones cross it many times.
  std::string text = R"({"traceEvents":[{"ph":"X","name":"big","pid":1,"tid":1,"ts":5,"dur":1,"args":{"blob":")";
  text.append(9 << 20, 'x');
  text += R"("}})";
  for (int index = 0; index < 100000; ++index) {
    text += ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op" + std::to_string(index % 7) +
            "\",\"pid\":1,\"tid\":" + std::to_string(index % 3) + ",\"ts\":" + std::to_string(index) +
            ".25,\"dur\":0.5}";
  }
  text += "]}";
  WriteText(dir.File("big.json"), text);
  Progress progress(false);
  LoadOptions options;
  options.progress = &progress;
  const Trace trace = MustLoad(dir.File("big.json"), options);
  CHECK(trace.activities.size() == 100001);
  CHECK(trace.names.size() == 8);
  CHECK(trace.tracks.size() == 3);
  CHECK(Named(trace, "big").begin_ns == 5000);
  CHECK(trace.activities.back().begin_ns == 99999250);
  CHECK(trace.activities.back().end_ns == 99999750);
}

TEST_CASE("trace loader: a session of the real runtime, in every format it writes") {
  TempDir dir;
  const std::string json = dir.File("session.json");
  REQUIRE(prof_start(("output=" + json + ",cuda=off,warnings=off,flush_interval_ms=0").c_str()) == 0);
  prof_set_thread_name("main");
  for (int64_t step = 1; step <= 3; ++step) {
    prof_begin_step(step);
    prof_span_begin("forward");
    prof_span_begin("conv1:Conv2D");
    prof_span_end();
    prof_span_end();
    prof_span_begin("backward");
    prof_span_end();
    prof_end_step();
  }
  prof_span_begin("teardown");
  prof_span_end();
  REQUIRE(prof_stop() == 0);
  REQUIRE(prof_export(dir.File("session.json.gz").c_str()) == 0);
  REQUIRE(prof_export(dir.File("session.pb").c_str()) == 0);
  REQUIRE(prof_export(dir.File("session.tfrecord").c_str()) == 0);
  const std::string logs = dir.File("logs/");
  REQUIRE(prof_export(logs.c_str()) == 0);

  const Trace chrome = MustLoad(json);
  CHECK(chrome.producer == Producer::kTfprof);
  CHECK(chrome.pid == static_cast<int64_t>(getpid()));
  CHECK(chrome.losses.reported);
  CHECK(chrome.losses.dropped_events == 0);
  CHECK(StepNumbers(chrome) == std::vector<int64_t>{1, 2, 3});
  CHECK(chrome.activities.size() == 10);
  CHECK(CountKind(chrome, ActivityKind::kHostOp) == 10);
  REQUIRE(chrome.wall_offset_ns.has_value());
  const int64_t now_ns = static_cast<int64_t>(std::time(nullptr)) * 1000000000;
  const int64_t first_wall = chrome.activities.front().begin_ns + *chrome.wall_offset_ns;
  CHECK(first_wall > now_ns - 3600 * int64_t{1000000000});
  CHECK(first_wall < now_ns + 3600 * int64_t{1000000000});
  for (const Activity &activity : chrome.activities) {
    CHECK(chrome.tracks[activity.track].name == "main");
    CHECK(activity.end_ns >= activity.begin_ns);
  }
  for (const Step &step : chrome.steps) CHECK(step.end_ns > step.begin_ns);

  CHECK(WallOps(MustLoad(dir.File("session.json.gz"))) == WallOps(chrome));

  // TensorFlow's formats hold the same spans at the same Unix times, to the nanosecond.
  for (const std::string &path : {dir.File("session.pb"), dir.File("session.tfrecord"), logs}) {
    CAPTURE(path);
    const Trace tf = MustLoad(path);
    CHECK(tf.wall_offset_ns == 0);
    CHECK(StepNumbers(tf) == StepNumbers(chrome));
    CHECK(WallOps(tf) == WallOps(chrome));
    for (size_t index = 0; index < tf.steps.size(); ++index) {
      CHECK(tf.steps[index].begin_ns == chrome.steps[index].begin_ns + *chrome.wall_offset_ns);
      CHECK(tf.steps[index].end_ns == chrome.steps[index].end_ns + *chrome.wall_offset_ns);
    }
    CHECK(tf.losses.reported);
    CHECK(tf.tracks[tf.activities.front().track].name == "main");
  }
  CHECK(MustLoad(dir.File("session.pb")).format == Format::kRunMetadata);
  CHECK(MustLoad(dir.File("session.tfrecord")).format == Format::kTfRecord);
  CHECK(MustLoad(logs).format == Format::kTensorBoard);

  // Cut anywhere, every file loads or says where it is damaged; none crashes. With salvage, what
  // was read before the damage comes back.
  for (const std::string &name :
       {std::string("session.json"), std::string("session.json.gz"), std::string("session.pb"),
        std::string("session.tfrecord")}) {
    const std::string whole = tfprof_test::ReadFile(dir.File(name));
    const std::string cut_path = dir.File("cut-" + name);
    const size_t stride = whole.size() / 500 + 1;
    for (size_t size = 0; size < whole.size(); size += stride) {
      CAPTURE(name);
      CAPTURE(size);
      WriteText(cut_path, std::string_view(whole).substr(0, size));
      absl::StatusOr<Trace> cut = LoadTrace(cut_path, LoadOptions{});
      if (cut.ok()) continue;
      const bool tiny = size < 12;  // no first record header: may be no format at all
      CHECK((absl::IsDataLoss(cut.status()) || (tiny && absl::IsInvalidArgument(cut.status()))));
      CHECK(StartsWith(Message(cut.status()), cut_path + ": "));
      if (!absl::IsDataLoss(cut.status())) continue;
      CHECK(cut.status().message().find(": byte ") != absl::string_view::npos);
      LoadOptions salvage;
      salvage.salvage = true;
      const Trace salvaged = MustLoad(cut_path, salvage);
      CHECK(salvaged.damage == Message(cut.status()));
      CHECK(salvaged.activities.size() <= chrome.activities.size());
    }
  }
  const std::string whole = tfprof_test::ReadFile(json);
  const std::string cut_path = dir.File("half.json");
  WriteText(cut_path, std::string_view(whole).substr(0, whole.size() / 3));
  const Trace half = MustLoad(cut_path);
  // The header follows the events (chrome_json_writer.h), so a file cut by something other than
  // tfprof (its own files are complete after every step) keeps its events, not its header; it
  // reads as cut, not damaged.
  REQUIRE(half.cut.has_value());
  CHECK(half.cut->file == cut_path);
  CHECK(half.damage.empty());
  CHECK(!half.activities.empty());
  CHECK(half.activities.size() < chrome.activities.size());
}

TEST_CASE("trace loader: errors name the file and what is wrong") {
  TempDir dir;
  const auto expect = [&](const std::string &path, absl::StatusCode code, std::string_view text) {
    const absl::Status status = LoadError(path);
    CAPTURE(status.ToString());
    CHECK(status.code() == code);
    CHECK(StartsWith(Message(status), path + ": "));
    CHECK(status.message().find(std::string(text)) != absl::string_view::npos);
  };
  expect(dir.File("missing.json"), absl::StatusCode::kNotFound, "no such file");
  expect(dir.File("missing/trace.json"), absl::StatusCode::kNotFound, "no such file");
  expect(dir.path().string(), absl::StatusCode::kUnavailable, "no TensorBoard event file");
  if (geteuid() != 0) {
    WriteText(dir.File("locked.json"), kGenericTrace);
    chmod(dir.File("locked.json").c_str(), 0);
    expect(dir.File("locked.json"), absl::StatusCode::kUnavailable, "cannot open");
  }

  const auto write = [&](const std::string &name, std::string_view text) {
    WriteText(dir.File(name), text);
    return dir.File(name);
  };
  const std::string not_a_trace = "not a trace: ";
  constexpr char kPng[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10";
  expect(write("image.png", std::string_view(kPng, sizeof kPng - 1)),
         absl::StatusCode::kInvalidArgument, not_a_trace);
  expect(write("empty.json", ""), absl::StatusCode::kInvalidArgument, "not a trace: the file is empty");
  expect(write("blank.json", " \n\t "), absl::StatusCode::kInvalidArgument, not_a_trace);
  expect(write("config.json", R"({"name": "x", "values": [1, 2, {"a": null}]})"),
         absl::StatusCode::kInvalidArgument, "not a trace: a JSON object without \"traceEvents\"");
  expect(write("numbers.json", "[1, 2, 3]"), absl::StatusCode::kInvalidArgument, not_a_trace);
  expect(write("empty_array.json", "[]"), absl::StatusCode::kInvalidArgument, not_a_trace);
  expect(write("events_object.json", R"({"traceEvents": {}})"), absl::StatusCode::kInvalidArgument,
         not_a_trace);
  expect(write("text.txt", "hello, world\n"), absl::StatusCode::kInvalidArgument, not_a_trace);
  expect(write("scalars.tfevents", tfprof_test::FileVersionRecord()),
         absl::StatusCode::kInvalidArgument, "not a trace: no step statistics");
  WriteGzip(dir.File("image.gz"), "\x89PNG\r\n");
  expect(dir.File("image.gz"), absl::StatusCode::kInvalidArgument, not_a_trace);

  const std::string prefix = R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},)";
  // A file that ends early is no error: it reads to its cut (cut_recovery.h), and says where.
  for (const auto &[name, text] : {std::pair<std::string, std::string>{"truncated.json", prefix},
                                   {"cut_event.json", prefix + R"({"ph":"X","na)"}}) {
    CAPTURE(name);
    const Trace cut = MustLoad(write(name, text));
    REQUIRE(cut.cut.has_value());
    CHECK(cut.cut->file_bytes == text.size());
    CHECK(cut.cut->problem.find("inside") != std::string::npos);
    CHECK(cut.activities.size() == 1);
  }
  expect(write("bad_token.json", prefix + R"({"ph":"X","name":nope}]})"), absl::StatusCode::kDataLoss,
         ": byte 86: invalid JSON value");
  expect(write("ts_string.json", prefix + R"({"ph":"X","name":"b","ts":"12"}]})"),
         absl::StatusCode::kDataLoss, ": byte 95: \"ts\" is not a number");
  expect(write("ts_huge.json", prefix + R"({"ph":"X","name":"b","ts":1e300}]})"),
         absl::StatusCode::kDataLoss, "\"ts\" 1e300 is out of range");
  expect(write("missing_comma.json", prefix + R"({"ph":"X"} {"ph":"X"}]})"),
         absl::StatusCode::kDataLoss, "expected ',' or ']' after an event");
  expect(write("bad_escape.json", prefix + R"({"name":"a\q"}]})"), absl::StatusCode::kDataLoss,
         "invalid escape");
  expect(write("trailing.json", R"({"traceEvents":[]} x)"), absl::StatusCode::kDataLoss,
         "data after the end");
  expect(write("deep.json", prefix + "{\"args\":" + std::string(1000, '[') + std::string(1000, ']') + "}]}"),
         absl::StatusCode::kDataLoss, "nested too deeply");

  std::string compressed = "x";
  WriteGzip(dir.File("full.gz"), kTfprofTrace);
  compressed = tfprof_test::ReadFile(dir.File("full.gz"));
  // A cut gzip stream reads to its cut; a corrupt one is damage.
  const Trace cut_gzip = MustLoad(write("cut.json.gz", compressed.substr(0, compressed.size() / 2)));
  REQUIRE(cut_gzip.cut.has_value());
  CHECK(cut_gzip.cut->problem == "inside the gzip stream");
  std::string corrupt = compressed;
  for (size_t index = 20; index < 60; ++index) corrupt[index] = static_cast<char>(corrupt[index] ^ 0x5a);
  expect(write("corrupt.json.gz", corrupt), absl::StatusCode::kDataLoss, "corrupt gzip data");

  tensorflow::RunMetadata run = tfprof_test::SmallRun(100);
  const std::string bytes = run.SerializeAsString();
  expect(write("cut.pb", bytes.substr(0, bytes.size() - 5)), absl::StatusCode::kDataLoss, ": byte ");
  const std::string records = tfprof_test::Framed(bytes) + tfprof_test::Framed(bytes);
  // A TFRecord whose last record is cut reads to its last whole record (one step each).
  const Trace cut_records = MustLoad(write("cut.tfrecord", records.substr(0, records.size() - 5)));
  REQUIRE(cut_records.cut.has_value());
  CHECK(cut_records.cut->file_bytes == records.size() - 5);
  CHECK(cut_records.steps.size() == 1);
  CHECK(cut_records.activities.size() == 3);
  std::string bad_crc = records;
  bad_crc[records.size() / 2 + 20] = static_cast<char>(bad_crc[records.size() / 2 + 20] ^ 0x5a);
  expect(write("bad_crc.tfrecord", bad_crc), absl::StatusCode::kDataLoss,
         ": byte " + std::to_string(records.size() / 2) + ": record: ");

  // Salvage keeps what came before damage, and says what the damage was.
  LoadOptions salvage;
  salvage.salvage = true;
  const Trace partial = MustLoad(dir.File("bad_crc.tfrecord"), salvage);
  CHECK(partial.steps.size() == 1);
  CHECK(partial.activities.size() == 3);
  CHECK(StartsWith(partial.damage, dir.File("bad_crc.tfrecord") + ": byte "));
  const Trace first_event = MustLoad(dir.File("bad_token.json"), salvage);
  CHECK(first_event.activities.size() == 1);
  CHECK(StartsWith(first_event.damage, dir.File("bad_token.json") + ": byte 86: "));
  // Not-a-trace is no damage: salvage does not hide it.
  CHECK(absl::IsInvalidArgument(LoadTrace(dir.File("text.txt"), salvage).status()));
}

}  // namespace tfprof::cli
