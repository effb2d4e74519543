// The trace model: a trace read from any file tfprof understands (its own Chrome JSON, the PyTorch
// profiler's, TensorFlow's RunMetadata/StepStats/TFRecord/event files), normalized into flat
// arrays that the writers, the convert engine and the `tfprof` commands' analysis work on. One
// 48-byte Activity per span, so a 5-million-event trace costs ~240 MB, not a JSON tree.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/common/mostly_in_order_sort.h"
#include "runtime/model/format.h"

namespace tfprof {

// What an Activity is (runtime/formats/chrome/chrome_categories.h maps them to Chrome categories and
// back; TensorFlow's host-device ops are kHostOp).
enum class ActivityKind : uint8_t {
  kHostOp,
  kPythonFunction,
  kRuntimeApi,  // CUDA runtime/driver API call on a host thread (cudaLaunchKernel, ...)
  kKernel,
  kMemcpy,
  kMemset,
  kGpuAnnotation,
  kRange,     // async range (tfprof prof_range_*, NVTX start/end): may overlap without nesting
  kInstant,   // a point in time on a host thread (begin_ns == end_ns)
  kSync,      // a synchronisation the host waited on (CUDA event, stream or context sync)
  kOverhead,  // time the GPU tracer itself spent (CUPTI buffer flushes, instrumentation)
};

const char *ActivityKindName(ActivityKind kind);  // "host_op", "kernel", ...

// Work that runs on a device stream: kernels, copies and memsets.
inline bool IsGpuWork(ActivityKind kind) {
  return kind == ActivityKind::kKernel || kind == ActivityKind::kMemcpy ||
         kind == ActivityKind::kMemset;
}

// Memcpy direction, from the name ("Memcpy HtoD (Pageable -> Device)", TF's "MEMCPYHtoD") or args.
enum class CopyKind : uint8_t { kNone, kHostToDevice, kDeviceToHost, kDeviceToDevice, kOther };

// Activity::step when the activity belongs to no step.
inline constexpr int64_t kNoStep = INT64_MIN;
// Activity::detail when there is none; GpuDetail::op when no host op is known.
inline constexpr uint32_t kNoDetail = UINT32_MAX;
inline constexpr uint32_t kNoName = UINT32_MAX;
// Step::track when the thread that marked the step is not known.
inline constexpr uint32_t kNoTrack = UINT32_MAX;

// Activity::category when the file's category is its kind's own (or the file has none).
inline constexpr uint8_t kDefaultCategory = 0;

// Kinds whose Activity::detail, when set, indexes Trace::file_args (their args as the file had
// them): host spans have no GPU detail.
inline bool DetailIsFileArgs(ActivityKind kind) {
  return kind == ActivityKind::kHostOp || kind == ActivityKind::kPythonFunction ||
         kind == ActivityKind::kInstant || kind == ActivityKind::kGpuAnnotation;
}

// Activity::flags.
inline constexpr uint8_t kActivityIncomplete = 1;  // still open when the recording ended
inline constexpr uint8_t kActivityDriverApi = 2;   // kRuntimeApi: a driver call (cu*), not cuda*

struct Activity {
  int64_t begin_ns = 0;  // on the trace's own clock; add Trace::wall_offset_ns for Unix time
  int64_t end_ns = 0;    // >= begin_ns
  uint64_t bytes = 0;    // kMemcpy/kMemset: bytes moved; else 0
  int64_t step = kNoStep;  // the number of the step it belongs to (StepIndex's rule)
  uint32_t name = 0;     // index into Trace::names
  uint32_t track = 0;    // index into Trace::tracks
  // GPU work, API calls, syncs and overheads: index into Trace::gpu_details (kNoDetail when the
  // file said nothing more). kRange: the track its end was recorded on (kNoDetail: its own).
  // DetailIsFileArgs() kinds: index into Trace::file_args (kNoDetail: no args kept).
  uint32_t detail = kNoDetail;
  ActivityKind kind = ActivityKind::kHostOp;
  CopyKind copy = CopyKind::kNone;
  uint8_t flags = 0;  // kActivity* bits
  // The category the file gave it where that is not its kind's own (PyTorch's "cpu_op"):
  // Trace::categories[category - 1]; kDefaultCategory otherwise. Fills the struct's padding.
  uint8_t category = kDefaultCategory;
};
static_assert(sizeof(Activity) == 48, "an Activity stays 48 bytes: traces hold millions");

// GpuDetail::fields: which of the optional facts the producer knew.
inline constexpr uint8_t kGpuHasCorrelation = 1;
inline constexpr uint8_t kGpuHasContext = 2;
inline constexpr uint8_t kGpuHasLaunchShape = 4;  // grid, block, registers, shared memory
inline constexpr uint8_t kGpuLaunchesWork = 8;    // an API call that launched GPU work
inline constexpr uint8_t kGpuHasMemsetValue = 16;
inline constexpr uint8_t kGpuHasCallbackId = 32;
inline constexpr uint8_t kGpuContextWide = 64;    // a sync of a whole context, not one stream

// What GPU work was launched as, beyond its time and name: the launch shape of a kernel, the
// graph it ran in, a peer copy's destination, a memset's value. These repeat from launch to
// launch (a training step launches the same kernels with the same shapes each time), so the
// model keeps each distinct one once (Trace::work_shapes) and a GpuDetail holds its index.
struct GpuWorkShape {
  uint64_t graph_id = 0;       // nonzero for work launched as part of a CUDA graph
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers = 0;       // per thread
  int32_t static_shared = 0;   // bytes per block
  int32_t dynamic_shared = 0;  // bytes per block
  uint32_t peer_device = 0;    // peer-to-peer copies: the destination device
  uint32_t memset_value = 0;
  uint32_t unused = 0;  // fills what would be padding: shapes compare and hash as their bytes

  friend bool operator==(const GpuWorkShape &a, const GpuWorkShape &b) {
    return std::memcmp(&a, &b, sizeof(GpuWorkShape)) == 0;
  }
};
static_assert(sizeof(GpuWorkShape) == 56 && std::has_unique_object_representations_v<GpuWorkShape>,
              "a GpuWorkShape has no padding: its bytes are its value");

// The distinct GpuWorkShapes of a trace. Index 0 is always the all-zero shape (what API calls,
// syncs and work the file said nothing more of point to), so a default GpuDetail needs none; it
// is implied, not stored, so that an empty (cleared or moved-from) GpuWorkShapes costs nothing
// and Clear() allocates nothing. Each other shape is held once: the index looks them up in
// place, as NameInterner does its names.
class GpuWorkShapes {
 public:
  GpuWorkShapes() = default;
  GpuWorkShapes(const GpuWorkShapes &other) : shapes_(other.shapes_) { Reindex(); }
  GpuWorkShapes &operator=(const GpuWorkShapes &other);
  GpuWorkShapes(GpuWorkShapes &&) = default;  // a moved deque keeps its shapes where they are
  GpuWorkShapes &operator=(GpuWorkShapes &&) = default;

  uint32_t Intern(const GpuWorkShape &shape);
  // Index 0, and any out of range (a damaged index), read as the all-zero shape.
  const GpuWorkShape &Get(uint32_t index) const {
    static constexpr GpuWorkShape kNone;
    return index - 1 < shapes_.size() ? shapes_[index - 1] : kNone;
  }
  size_t size() const { return shapes_.size() + 1; }  // with the all-zero shape
  void Clear() {
    index_.clear();
    shapes_.clear();
    last_ = 0;
  }

 private:
  struct PointeeHash {
    size_t operator()(const GpuWorkShape *shape) const;
  };
  struct PointeeEqual {
    bool operator()(const GpuWorkShape *a, const GpuWorkShape *b) const { return *a == *b; }
  };
  void Reindex();

  std::deque<GpuWorkShape> shapes_;  // index i is shapes_[i - 1]; a deque never moves its
                                     // elements: index_ points at them
  absl::flat_hash_map<const GpuWorkShape *, uint32_t, PointeeHash, PointeeEqual> index_;
  uint32_t last_ = 0;  // the shape interned last: consecutive kernels often share one
};

// What the GPU tracer recorded about one kernel, copy, memset, CUDA API call, sync or overhead
// beyond its time, row and name, as CUPTI (or the PyTorch profiler's args) state it. 48 bytes:
// traces hold one per kernel, millions; what repeats between launches is in Trace::work_shapes,
// and a launch call keeps only the ids it has (CallDetail, in GpuDetails).
struct GpuDetail {
  uint64_t external_id = 0;  // the host span CUPTI linked the launch to; 0 when none
  int64_t launch_ns = kNoStep;  // GPU work: its launch call's start (kNoStep: unknown)
  int64_t thread_id = 0;     // GPU work: the launching thread's OS id; overheads: their thread
  uint32_t correlation = 0;  // CUPTI's id shared by a launch call and the work it launched
  uint32_t context = 0;
  uint32_t op = kNoName;     // GPU work: the host op open at its launch (Trace::names index)
  uint32_t callback_id = 0;  // API calls: CUPTI's cbid
  uint32_t shape = 0;        // GPU work: its Trace::work_shapes index (0: all zero)
  uint8_t copy_direction = 0;  // copies: CUPTI's memcpy kind (runtime/gpu/gpu_trace.h GpuCopyKind)
  uint8_t fields = 0;          // kGpu* bits
};
static_assert(sizeof(GpuDetail) == 48, "a GpuDetail stays 48 bytes: traces hold millions");

// A GpuDetail that holds only CUPTI's ids and its fields: what a launch call or a sync has. 24
// bytes: a trace holds one per launch call, as many as it holds kernels.
struct CallDetail {
  uint64_t external_id = 0;
  uint32_t correlation = 0;
  uint32_t context = 0;
  uint32_t callback_id = 0;
  uint8_t fields = 0;
};
static_assert(sizeof(CallDetail) == 24, "a CallDetail stays 24 bytes: traces hold millions");

// Trace::gpu_details: every activity's GpuDetail, in two tables. GPU work's are kept whole; one
// that holds nothing but a CallDetail's members (a launch call's, a sync's) is kept as one, half
// the size. An Activity::detail names its table in its top bit. Details are read by value (Get,
// Find); GPU work's are changed in place (Work).
class GpuDetails {
 public:
  // For a merge: where another trace's details start once appended (Append, Rebased).
  struct Bases {
    uint32_t work = 0;
    uint32_t calls = 0;
  };

  // Adds the detail of an activity of `kind`; returns its Activity::detail (kNoDetail past 2^31
  // whole ones). GPU work's are kept whole, so that LinkLaunches() can fill in their launch.
  uint32_t Add(ActivityKind kind, const GpuDetail &detail);

  // Whether `index` names a detail held here (kNoDetail does not).
  bool Has(uint32_t index) const {
    return (index & kCallBit) != 0 ? (index & ~kCallBit) < calls_.size() : index < work_.size();
  }
  // The detail `index` names; a default GpuDetail where it names none. (Inline: the analysis
  // reads one per launch call and per kernel.)
  GpuDetail Get(uint32_t index) const {
    if ((index & kCallBit) == 0) return index < work_.size() ? work_[index] : GpuDetail();
    GpuDetail detail;
    if (const uint32_t at = index & ~kCallBit; at < calls_.size()) {
      const CallDetail &call = calls_[at];
      detail.external_id = call.external_id;
      detail.correlation = call.correlation;
      detail.context = call.context;
      detail.callback_id = call.callback_id;
      detail.fields = call.fields;
    }
    return detail;
  }
  // The same, or nullopt where it names none.
  std::optional<GpuDetail> Find(uint32_t index) const {
    if (!Has(index)) return std::nullopt;
    return Get(index);
  }
  // The whole detail `index` names, to change in place; null for a CallDetail or none.
  GpuDetail *Work(uint32_t index) { return index < work_.size() ? &work_[index] : nullptr; }
  const GpuDetail *Work(uint32_t index) const {
    return index < work_.size() ? &work_[index] : nullptr;
  }
  // Sets kGpu* bits in the fields of the detail `index` names (nothing where it names none).
  void AddFields(uint32_t index, uint8_t fields);

  size_t size() const { return work_.size() + calls_.size(); }
  bool empty() const { return work_.empty() && calls_.empty(); }
  void clear() {
    work_.clear();
    calls_.clear();
  }
  // Room for `count` details of each table: capacity never written is never mapped in.
  void reserve(size_t count) {
    work_.reserve(count);
    calls_.reserve(count);
  }

  // The whole details, in the order added (a merge shifts their times and renumbers their names).
  std::vector<GpuDetail> &work() { return work_; }
  const std::vector<GpuDetail> &work() const { return work_; }
  Bases bases() const {
    return {static_cast<uint32_t>(work_.size()), static_cast<uint32_t>(calls_.size())};
  }
  // Appends `other`'s details (the merger renumbers what its whole ones name afterwards).
  void Append(const GpuDetails &other);
  // `other`'s index `index` once Append()ed where `bases()` said; kNoDetail stays.
  static uint32_t Rebased(uint32_t index, Bases bases) {
    if (index == kNoDetail) return index;
    return (index & kCallBit) != 0 ? index + bases.calls : index + bases.work;
  }

 private:
  static constexpr uint32_t kCallBit = 0x80000000u;

  std::vector<GpuDetail> work_;
  std::vector<CallDetail> calls_;  // index i is kCallBit | i
};

// One sample of a counter: a host counter (prof_counter) or a device's memory in use.
struct CounterSample {
  int64_t ns = 0;
  double value = 0;
  uint32_t name = 0;    // the counter's name (Trace::names)
  uint32_t track = 0;   // where it is shown (Trace::tracks): its thread, or the device's row
  uint32_t series = 0;  // the value's name within the counter ("value", "bytes in use")
};

enum class TrackKind : uint8_t {
  kHostThread,
  kGpuStream,
  kGpuSync,   // a stream's (or a context's) synchronisations, beside the stream
  kCounters,  // counters only: shown by their own names, the row is never named
};

struct Track {
  uint32_t process = 0;  // index into Trace::processes
  int64_t tid = 0;       // as in the file
  std::string name;      // thread name or "stream 7"; may be empty
  TrackKind kind = TrackKind::kHostThread;
  int32_t device = -1;   // kGpuStream, kGpuSync: the GPU's index
  int64_t stream = -1;   // kGpuStream: the stream id
  std::optional<int64_t> sort_index;  // where viewers put the row; unset: after the others
};

struct Process {
  int64_t pid = 0;   // as in the file
  std::string name;  // process_name metadata, may be empty
  std::string labels;  // process_labels metadata (a GPU's model), may be empty
  std::optional<int64_t> sort_index;  // where viewers put it; unset: in process order
  // The recording it came from: a merged trace's processes carry their input's index (a rank's
  // host process and its GPUs share one), every other trace's are all 0. Steps, and what the
  // summary measures per step, never cross groups.
  uint32_t group = 0;
  std::optional<int64_t> rank;  // its recording's distributed rank, in merged traces
};

// A training step: tfprof's "step N" rows (cat "step"), the PyTorch profiler's ProfilerStep#N,
// or one TensorFlow run (RunMetadata) each.
struct Step {
  int64_t number = 0;
  int64_t begin_ns = 0;  // same clock as Activity
  int64_t end_ns = 0;
  uint32_t process = 0;
  uint32_t track = kNoTrack;  // the thread that marked it, when known
  // The span's own name and args when the file drew the step as an event of its own kind (the
  // PyTorch profiler's "ProfilerStep#4"): a Trace::names index and a Trace::file_args index, or
  // kNoName/kNoDetail for tfprof's "step N" rows. `category` as Activity::category.
  uint32_t name = kNoName;
  uint32_t args = kNoDetail;
  uint8_t category = kDefaultCategory;
  bool incomplete = false;    // still open when the recording ended
};

// A flow event (Chrome's "s"/"t"/"f") as the file had it: the PyTorch profiler's forward-backward
// links ("fwdbwd") and launch-to-kernel arrows ("ac2g"). Kept so that a conversion writes them
// back; tfprof's own "ac2g" arrows are not kept (its writer draws them from the correlation ids).
inline constexpr uint8_t kFlowBindsEnclosing = 1;  // "bp":"e": binds to the enclosing slice
inline constexpr uint8_t kFlowIdIsText = 2;        // the id was a string: `id` is a names index
struct Flow {
  int64_t ns = 0;     // same clock as Activity
  uint64_t id = 0;
  uint32_t track = 0;
  uint32_t name = 0;  // Trace::names
  uint8_t category = kDefaultCategory;  // Trace::categories[category - 1]; default: "ac2g"
  char phase = 's';   // 's' start, 't' step, 'f' finish
  uint8_t flags = 0;  // kFlow* bits
};

// The args events had in their files, for the events that keep them: each entry the members of
// one JSON object without its braces (`"Sequence number": 12, "Input Dims": [[3, 4]]`), in one
// buffer, so an entry costs its text and 8 bytes.
class FileArgs {
 public:
  uint32_t Add(std::string_view members) {
    text_.append(members);
    ends_.push_back(text_.size());
    return static_cast<uint32_t>(ends_.size() - 1);
  }
  std::string_view Get(uint32_t index) const {
    const size_t begin = index == 0 ? 0 : ends_[index - 1];
    return std::string_view(text_).substr(begin, ends_[index] - begin);
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }

 private:
  std::string text_;
  std::vector<size_t> ends_;
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
  uint64_t gpu_buffers_refused = 0;    // CUPTI asked for a buffer while the pool was empty
  uint64_t gpu_records_unparsed = 0;   // CUPTI records of kinds tfprof does not read
  uint64_t gpu_late_records = 0;       // GPU work that arrived after its step was written
  // A merged trace's inputs whose files state no losses: the counts above are the other inputs'.
  uint32_t unreported_inputs = 0;
  // What a Perfetto trace's tracing service reported: its last TraceStats packet (the counts of
  // all its buffers summed).
  struct PerfettoStats {
    bool reported = false;  // the trace holds a TraceStats, or a service event flagging sources
    uint64_t chunks_overwritten = 0;      // buffers: overwritten before read (ring buffer full)
    uint64_t chunks_discarded = 0;        // buffers: refused (fill policy DISCARD, buffer full)
    uint64_t abi_violations = 0;          // buffers: producers breaking the shared-memory ABI
    uint64_t trace_writer_packet_loss = 0;  // buffers: writers that ran out of chunks
    uint64_t patches_failed = 0;          // buffers: packets whose size patch came too late
    uint64_t service_chunks_discarded = 0;   // the service's, before any buffer (all sessions)
    uint64_t service_patches_discarded = 0;  // the same, for patches
    uint64_t invalid_packets = 0;
    uint64_t flushes_failed = 0;
    bool final_flush_failed = false;  // the flush at the end failed: the last data may be missing
    // The service's flags (TracingServiceEvent.last_flush_slow_data_sources): "producer/source"
    // of the data sources that did not answer the last flush in time, whose last data may be lost.
    std::vector<std::string> slow_flush_sources;
  };
  PerfettoStats perfetto;
};

// Whether GPU tracing ran in the recording, as tfprof's header states it.
struct GpuTracingStatus {
  bool reported = false;
  std::string state;    // "active", "off", "unavailable", "not built"
  std::string reason;   // why not active
  std::string library;  // the libcupti that was loaded
};

// A GPU the recording ran on (Kineto's "deviceProperties").
struct DeviceProperties {
  int64_t id = 0;
  std::string name;
  uint64_t global_memory_bytes = 0;
  int64_t compute_major = 0;
  int64_t compute_minor = 0;
  int64_t multiprocessors = 0;
};

// Who wrote a trace that was read from a file, as far as its content tells.
enum class Producer : uint8_t {
  kOther,       // a Chrome trace JSON of some other tool
  kTfprof,      // tfprof (its Chrome trace has the "tfprof" header object)
  kPytorch,     // the PyTorch profiler / Kineto
  kTensorFlow,  // TensorFlow's step statistics (or tfprof's, written the same way), and the
                // Chrome traces TensorFlow's timeline.py draws from them
};

// Interns names: the same string always gets the same index. Each name's bytes are held once:
// the index looks them up in place (a deque never moves its strings), so a trace of long names
// costs their size, not twice it.
class NameInterner {
 public:
  NameInterner() = default;
  NameInterner(const NameInterner &other) : names_(other.names_) { Reindex(); }
  NameInterner &operator=(const NameInterner &other);
  NameInterner(NameInterner &&) = default;  // a moved deque keeps its strings where they are
  NameInterner &operator=(NameInterner &&) = default;

  uint32_t Intern(std::string_view name);
  const std::string &Get(uint32_t index) const { return names_[index]; }
  size_t size() const { return names_.size(); }

 private:
  void Reindex();  // index_ for a copy's own strings
  // A slot of recent_ for `name`, from its length and its first and last 8 bytes.
  static size_t RecentSlot(std::string_view name);

  std::deque<std::string> names_;
  absl::flat_hash_map<absl::string_view, uint32_t> index_;  // views of names_
  // The names interned lately, by RecentSlot (kNoName: none): a reader interns every event's
  // name, most of them among a few hundred, and hashing each whole name for index_ was 5% of
  // reading a Chrome trace. A hit is confirmed by comparing the name; a miss goes to index_.
  static constexpr size_t kRecentSlots = 512;
  std::array<uint32_t, kRecentSlots> recent_ = MakeNoRecent();
  static constexpr std::array<uint32_t, kRecentSlots> MakeNoRecent() {
    std::array<uint32_t, kRecentSlots> slots{};
    slots.fill(kNoName);
    return slots;
  }
};

// A file that ends early, as a writer killed mid-write leaves it: LoadTrace() keeps what was read
// before the cut, less the steps the cut may have left partial (runtime/model/cut_recovery.h).
struct CutRecovery {
  std::string file;          // the file that is cut (in a log directory, its event file)
  uint64_t file_bytes = 0;   // where it ends
  std::string problem;       // the reader's words for where the cut fell
  uint64_t events_kept = 0;  // activities kept
  std::optional<int64_t> last_whole_step;  // the last step kept; unset when none is
  bool file_has_steps = false;             // the file holds steps (kept or dropped)
  uint64_t steps_dropped = 0;
  std::optional<int64_t> first_dropped_step, last_dropped_step;
  uint64_t events_dropped = 0;  // the dropped steps' activities
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
  uint64_t events_in_file = 0;  // every event read, including kinds not kept (flows)
  std::string damage;  // with LoadOptions::salvage: why reading stopped early ("" when it did not)
  std::optional<CutRecovery> cut;  // set when the file ends early and was recovered
  // Chrome trace categories no tool tfprof knows writes, with their event counts: those events
  // were read as host ops (or, on a GPU's rows, not kept). Sorted by category.
  std::vector<std::pair<std::string, uint64_t>> unknown_categories;

  GpuDetails gpu_details;                 // Activity::detail points here
  GpuWorkShapes work_shapes;              // GpuDetail::shape points here
  // What the file said that tfprof's own writing would not say again: categories other than a
  // kind's own (Activity::category - 1 indexes them; at most 255), the args of host spans and
  // steps (Activity::detail, Step::args) and of GPU details (gpu_file_args: a gpu_details index
  // -> its args' keys no table of tfprof's knows), and flows. Empty for tfprof's own traces.
  std::vector<std::string> categories;
  FileArgs file_args;
  absl::flat_hash_map<uint32_t, uint32_t> gpu_file_args;
  std::vector<Flow> flows;
  // The flows are all the file had (another producer's): the writers draw no launch arrows of
  // their own beside them.
  bool flows_as_read = false;
  // Events of a Chrome trace that no table holds and no analysis reads (Kineto's whole-trace
  // span, cat "Trace"; its global instants): their JSON text, which a conversion to Chrome JSON
  // writes again. Times in them are the file's own: a merge, which moves times, drops them.
  std::vector<std::string> verbatim_events;
  std::vector<CounterSample> counters;    // in time order per counter
  // What the recording said about itself (tfprof's header), kept for the writers.
  std::string process_name;               // the recording process's name
  std::string clock;                      // the host clock ("tsc", "monotonic"; "" unknown)
  std::vector<std::string> command_line;  // argv of the recording process
  std::optional<int64_t> start_ns;        // the recording's start and end on the trace's clock
  std::optional<int64_t> end_ns;
  std::optional<uint64_t> events_recorded;
  GpuTracingStatus gpu;
  std::vector<DeviceProperties> devices;
  std::string sources_json;  // a JSON array: what a converted or merged trace was made from
};

// What the trace was read from, for people: "tfprof Chrome trace", "PyTorch profiler Chrome
// trace", "TensorFlow timeline Chrome trace", "Chrome trace", "TensorFlow RunMetadata",
// "TensorFlow StepStats", "TFRecord of RunMetadata", "TensorBoard event file", "tfprof Perfetto
// trace", "PyTorch profiler Perfetto trace", "Perfetto trace".
const char *InputFormatName(const Trace &trace);

// The category the file gave an activity, step or flow (Activity::category); empty for the kind's
// own.
inline std::string_view FileCategory(const Trace &trace, uint8_t category) {
  return category == kDefaultCategory || category > trace.categories.size()
             ? std::string_view()
             : std::string_view(trace.categories[category - 1]);
}

// A merge's renumbering of one input's file categories and args (AppendFileFacts()).
struct FileFactsMap {
  std::vector<uint8_t> category_at;  // the input's Activity::category -> the merged trace's
  uint32_t args_base = 0;            // added to the input's Trace::file_args indices
  uint8_t Category(uint8_t category) const {
    return category < category_at.size() ? category_at[category] : kDefaultCategory;
  }
};

// For a merge (runtime/convert/trace_merger.h): appends `input`'s file categories, args, GPU
// details' args (its details start at `detail_bases` in `merged`) and flows (times + `shift_ns`,
// names and rows through `names` and `track_at`) to `merged`; the map renumbers the rest.
FileFactsMap AppendFileFacts(const Trace &input, const std::vector<uint32_t> &names,
                             const std::vector<uint32_t> &track_at, GpuDetails::Bases detail_bases,
                             int64_t shift_ns, Trace *merged);

// The args the file gave an activity: JSON object members without braces; empty when none.
inline std::string_view FileArgsOf(const Trace &trace, const Activity &activity) {
  return DetailIsFileArgs(activity.kind) && activity.detail < trace.file_args.size()
             ? trace.file_args.Get(activity.detail)
             : std::string_view();
}

// The GPU detail of an activity (GPU work, an API call, a sync, an overhead); nullopt for ranges
// and host spans, whose Activity::detail indexes other tables, and where it has none.
inline std::optional<GpuDetail> ActivityGpuDetail(const Trace &trace, const Activity &activity) {
  if (activity.kind == ActivityKind::kRange || DetailIsFileArgs(activity.kind)) return std::nullopt;
  return trace.gpu_details.Find(activity.detail);
}

// When a trace's events happen: the first begin and the last end among its activities and steps.
struct TimeExtent {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// The extent of `trace`'s activities and steps; nullopt when it holds neither. (The recording's
// own start and end, where the file states them, are Trace::start_ns and end_ns.)
std::optional<TimeExtent> EventExtent(const Trace &trace);

// The order spans nest in, which writers keep: by begin, and at one begin the longer (enclosing)
// span first. For anything with begin_ns and end_ns.
template <typename Span>
bool EnclosingFirst(const Span &a, const Span &b) {
  return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
}

// `order`, indices into `spans`, sorted EnclosingFirst (stable: ties keep their order). Fast for
// the nearly sorted lists files give (StableSortMostlyInOrder).
template <typename Span>
void SortEnclosingFirst(const std::vector<Span> &spans, std::span<uint32_t> order) {
  StableSortMostlyInOrder(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return EnclosingFirst(spans[a], spans[b]);
  });
}

}  // namespace tfprof
