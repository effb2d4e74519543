// The trace model: a trace read from any file tfprof understands (its own Chrome JSON, the PyTorch
// profiler's, TensorFlow's RunMetadata/StepStats/TFRecord/event files), normalized into flat
// arrays that the writers, the convert engine and the `tfprof` commands' analysis work on. One
// 40-byte Activity per span, so a 5-million-event trace costs ~200 MB, not a JSON tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/formats/format.h"

namespace tfprof {

// What an Activity is. Chrome categories map as: "user_annotation"/"cpu_op"/"python_function"/
// TF host-device ops -> kHostOp (python_function -> kPythonFunction); "cuda_runtime"/
// "cuda_driver" -> kRuntimeApi; "kernel" -> kKernel; "gpu_memcpy" -> kMemcpy; "gpu_memset" ->
// kMemset; "gpu_user_annotation" -> kGpuAnnotation; "b"/"e" async ranges -> kRange.
enum class ActivityKind : uint8_t {
  kHostOp,
  kPythonFunction,
  kRuntimeApi,  // CUDA runtime/driver API call on a host thread (cudaLaunchKernel, ...)
  kKernel,
  kMemcpy,
  kMemset,
  kGpuAnnotation,
  kRange,  // async range (tfprof prof_range_*, NVTX start/end): may overlap without nesting
};

const char *ActivityKindName(ActivityKind kind);  // "host_op", "kernel", ...

// Memcpy direction, from the name ("Memcpy HtoD (Pageable -> Device)", TF's "MEMCPYHtoD") or args.
enum class CopyKind : uint8_t { kNone, kHostToDevice, kDeviceToHost, kDeviceToDevice, kOther };

struct Activity {
  int64_t begin_ns = 0;  // on the trace's own clock; add Trace::wall_offset_ns for Unix time
  int64_t end_ns = 0;    // >= begin_ns
  uint64_t bytes = 0;    // kMemcpy/kMemset: bytes moved; else 0
  uint32_t name = 0;     // index into Trace::names
  uint32_t track = 0;    // index into Trace::tracks
  ActivityKind kind = ActivityKind::kHostOp;
  CopyKind copy = CopyKind::kNone;
};

enum class TrackKind : uint8_t { kHostThread, kGpuStream };

struct Track {
  uint32_t process = 0;  // index into Trace::processes
  int64_t tid = 0;       // as in the file
  std::string name;      // thread name or "stream 7"; may be empty
  TrackKind kind = TrackKind::kHostThread;
  int32_t device = -1;   // kGpuStream: the GPU's index
  int64_t stream = -1;   // kGpuStream: the stream id
};

struct Process {
  int64_t pid = 0;   // as in the file
  std::string name;  // process_name metadata, may be empty
};

// A training step: tfprof's "step N" rows (cat "step"), the PyTorch profiler's ProfilerStep#N,
// or one TensorFlow run (RunMetadata) each.
struct Step {
  int64_t number = 0;
  int64_t begin_ns = 0;  // same clock as Activity
  int64_t end_ns = 0;
  uint32_t process = 0;
};

// What the recorder lost, as the file reports it (tfprof's header; zero when the format has none).
struct TraceLosses {
  bool reported = false;              // the file states its losses (tfprof traces do)
  uint64_t dropped_events = 0;        // host events dropped on full rings
  uint64_t gpu_records_dropped = 0;   // CUPTI records lost
  uint64_t unmatched_span_ends = 0;
  uint64_t unmatched_step_ends = 0;
  uint64_t memory_dropped_events = 0;  // recorded, then lost for memory (or a failed spill file)
  uint64_t discarded_events = 0;       // evicted on purpose by keep= (the flight recorder)
};

// Who wrote a trace that was read from a file, as far as its content tells.
enum class Producer : uint8_t {
  kOther,       // a Chrome trace JSON of some other tool
  kTfprof,      // tfprof (its Chrome trace has the "tfprof" header object)
  kPytorch,     // the PyTorch profiler / Kineto
  kTensorFlow,  // TensorFlow's step statistics (or tfprof's, which are written the same way)
};

// Interns names: the same string always gets the same index.
class NameInterner {
 public:
  uint32_t Intern(std::string_view name);
  const std::string &Get(uint32_t index) const { return names_[index]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, uint32_t> index_;
};

struct Trace {
  std::string path;  // the file it was read from, as given
  Format format = Format::kChromeJson;
  Producer producer = Producer::kOther;
  NameInterner names;
  std::vector<Process> processes;
  std::vector<Track> tracks;
  std::vector<Activity> activities;  // in file order (not sorted)
  std::vector<Step> steps;           // sorted by begin_ns
  // Add to a timestamp for nanoseconds since the Unix epoch; unset when the file does not say
  // (then the timestamps are only relative).
  std::optional<int64_t> wall_offset_ns;
  std::optional<int64_t> pid;  // the recording process (tfprof header)
  std::string hostname;        // when the file says
  std::optional<int64_t> rank;  // distributed rank, when the file says
  TraceLosses losses;
  uint64_t events_in_file = 0;  // every event read, including kinds not kept (instants, flows)
  std::string damage;  // with LoadOptions::salvage: why reading stopped early ("" when it did not)
};

// What the trace was read from, for people: "tfprof Chrome trace", "PyTorch profiler Chrome
// trace", "Chrome trace", "TensorFlow RunMetadata", "TensorFlow StepStats", "TFRecord of
// RunMetadata", "TensorBoard event file".
const char *InputFormatName(const Trace &trace);

}  // namespace tfprof
