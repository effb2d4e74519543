#include "runtime/export/session_trace.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/collector/clock.h"
#include "runtime/common/insert_or_reset.h"

namespace tfprof {

namespace {

// GPU processes are pid N for device N, as Kineto writes them, unless the host's pid is a device's
// id (pid 1 in a container): then all are moved to 1000000 + N.
constexpr int64_t kGpuPidBaseWhenClashing = 1000000;
// Rows no OS thread (tids stay below 2^22) and no other row of the host process can have.
constexpr int64_t kGpuSortIndexBase = 5000000;
constexpr int64_t kSyncRowTidBase = 1000000;
constexpr int64_t kContextSyncRowTid = 999999;
constexpr uint32_t kContextWide = UINT32_MAX;
constexpr int64_t kCuptiOverheadRowTid = 1999999999;

std::string_view SyncName(GpuSyncKind kind) {
  switch (kind) {
    case GpuSyncKind::kEvent: return "Event Sync";
    case GpuSyncKind::kStreamWaitEvent: return "Stream Wait Event";
    case GpuSyncKind::kStream: return "Stream Sync";
    case GpuSyncKind::kContext: return "Context Sync";
    case GpuSyncKind::kUnknown: break;
  }
  return "Sync";
}

CopyKind CoarseCopyKind(GpuCopyKind kind) {
  switch (kind) {
    case GpuCopyKind::kHtoD:
    case GpuCopyKind::kHtoA: return CopyKind::kHostToDevice;
    case GpuCopyKind::kDtoH:
    case GpuCopyKind::kAtoH: return CopyKind::kDeviceToHost;
    case GpuCopyKind::kDtoD:
    case GpuCopyKind::kAtoA:
    case GpuCopyKind::kAtoD:
    case GpuCopyKind::kDtoA:
    case GpuCopyKind::kPtoP: return CopyKind::kDeviceToDevice;
    default: break;
  }
  return CopyKind::kOther;
}

// The process's rank in a distributed job, from the variables launchers set (the ones the preload
// library's %r reads): the first one set; none set means a single process, rank 0. Unset when
// that variable is not a whole number.
std::optional<int64_t> RankFromEnvironment() {
  for (const char *name : {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"}) {
    const char *value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    const std::string_view text(value);
    uint32_t rank = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return rank;
  }
  return 0;
}

}  // namespace

SessionTrace::SessionTrace(const ExportContext &context) {
  trace_.format = Format::kChromeJson;
  trace_.producer = Producer::kTfprof;
  trace_.pid = context.pid;
  trace_.process_name = context.process_name;
  trace_.clock = std::string(ClockSourceName(context.clock));
  trace_.command_line = context.command_line;
  trace_.start_ns = context.start_monotonic_ns;
  trace_.end_ns = context.end_ns;
  trace_.wall_offset_ns = context.start_wall_ns - context.start_monotonic_ns;
  trace_.rank = RankFromEnvironment();
  trace_.losses.reported = true;
  Process &host = trace_.processes[builder_.ProcessFor(context.pid)];  // process 0
  host.name = context.process_name;
  host.sort_index = 0;
  value_series_ = Intern("value");
  bytes_in_use_series_ = Intern("bytes in use");
  gpu_memory_name_ = Intern("GPU memory");
}

void SessionTrace::ClearPiece() {
  trace_.steps.clear();
  trace_.activities.clear();
  trace_.gpu_details.clear();
  trace_.work_shapes.Clear();
  trace_.counters.clear();
}

uint64_t SessionTrace::piece_records() const {
  uint64_t records = 2 * trace_.steps.size() + trace_.counters.size();
  for (const Activity &activity : trace_.activities) {
    const bool two_ends = activity.kind == ActivityKind::kHostOp ||
                          activity.kind == ActivityKind::kPythonFunction ||
                          activity.kind == ActivityKind::kRange;
    records += two_ends ? 2 : 1;
  }
  return records;
}

uint32_t SessionTrace::HostName(uint32_t session_id) {
  if (session_id >= host_names_.size()) host_names_.resize(session_id + 1, UINT32_MAX);
  uint32_t &name = host_names_[session_id];
  if (name == UINT32_MAX) name = Intern(log_->names.Get(session_id));
  return name;
}

uint32_t SessionTrace::GpuName(uint32_t gpu_id) {
  if (gpu_id >= gpu_names_.size()) gpu_names_.resize(gpu_id + 1, UINT32_MAX);
  uint32_t &name = gpu_names_[gpu_id];
  if (name == UINT32_MAX) name = Intern(log_->gpu.names.Get(gpu_id));
  return name;
}

void SessionTrace::SyncThreadRows() {
  for (size_t index = 0; index < log_->tracks.size(); ++index) {
    const ThreadLog &thread = log_->tracks[index];
    if (index == thread_rows_.size()) {
      // A row per thread log: an OS tid the system reused gets a row of its own.
      thread_rows_.push_back(builder_.NewRow(0, thread.os_tid));
      InsertOrReset(rows_by_os_tid_, [&] { rows_by_os_tid_[thread.os_tid] = thread_rows_.back(); });
    }
    // Threads are renamed while they run: a row takes its thread's latest name.
    trace_.tracks[thread_rows_[index]].name = TrackLabel(thread);
  }
}

uint32_t SessionTrace::GpuProcess(uint32_t device) {
  // Found by device, not pid: the pids move aside (gpu_pid_base_) once a device's id clashes.
  auto [found, added] = gpu_processes_.try_emplace(device, 0);
  if (added) {
    found->second = builder_.NamedProcess(absl::StrCat("GPU ", device));
    Process &process = trace_.processes[found->second];
    if (static_cast<int64_t>(device) == context_->pid) gpu_pid_base_ = kGpuPidBaseWhenClashing;
    process.pid = gpu_pid_base_ + static_cast<int64_t>(device);
    process.sort_index = kGpuSortIndexBase + static_cast<int64_t>(device);
  }
  return found->second;
}

uint32_t SessionTrace::StreamRow(uint32_t device, uint32_t stream) {
  bool added = false;
  const uint32_t index = builder_.ThreadRow(GpuProcess(device), stream, &added);
  if (added) {
    Track &row = trace_.tracks[index];
    row.name = absl::StrCat("stream ", stream);
    row.kind = TrackKind::kGpuStream;
    row.device = static_cast<int32_t>(device);
    row.stream = stream;
    row.sort_index = stream;
  }
  return index;
}

uint32_t SessionTrace::SyncRow(uint32_t device, uint32_t stream) {
  // Named rows: the name says which stream, as the tid (1000000 + S) might not.
  const bool context_wide = stream == kContextWide;
  const int64_t tid = context_wide ? kContextSyncRowTid : kSyncRowTidBase + stream;
  bool added = false;
  const uint32_t index = builder_.NamedRow(
      GpuProcess(device),
      context_wide ? std::string("context sync") : absl::StrCat("stream ", stream, " sync"),
      TrackKind::kGpuSync, tid, &added);
  if (added) {
    Track &row = trace_.tracks[index];
    row.device = static_cast<int32_t>(device);
    if (!context_wide) row.stream = stream;
    row.sort_index = tid;
  }
  return index;
}

uint32_t SessionTrace::ApiRow(int64_t os_tid) {
  auto found = rows_by_os_tid_.find(os_tid);
  if (found != rows_by_os_tid_.end()) return found->second;
  // A thread that recorded nothing but CUDA calls.
  const uint32_t index = builder_.NewRow(0, os_tid, absl::StrCat("thread ", os_tid));
  InsertOrReset(rows_by_os_tid_, [&] { return rows_by_os_tid_.emplace(os_tid, index); });
  return index;
}

uint32_t SessionTrace::OverheadRow() {
  return builder_.NamedRow(0, "CUPTI overhead", TrackKind::kHostThread, kCuptiOverheadRowTid);
}

uint32_t SessionTrace::MemoryRow(uint32_t device) {
  bool added = false;
  const uint32_t index = builder_.CounterRow(GpuProcess(device), &added);
  if (added) trace_.tracks[index].device = static_cast<int32_t>(device);
  return index;
}

// Synchronisation records name a context, not a device: the device of the context's work.
uint32_t SessionTrace::SyncDevice(const GpuSync &sync) const {
  auto device = context_devices_.find(sync.context);
  if (device != context_devices_.end()) return device->second;
  if (!gpu_processes_.empty()) return gpu_processes_.begin()->first;
  return log_->gpu.devices.empty() ? 0 : log_->gpu.devices.front().id;
}

int64_t SessionTrace::StepNumberAt(int64_t ns) const {
  const StepInterval *step = partitioner_.TakenStepAt(ns);
  return step != nullptr ? step->step : kNoStep;
}

void SessionTrace::Advance(const SessionLog &log, const ExportContext &context, int64_t until_ns) {
  log_ = &log;
  context_ = &context;
  partitioner_.Advance(log, context.converter, until_ns);
  SyncThreadRows();
  // Every device known so far gets its process, in id order, so a GPU without work still shows;
  // the devices CUPTI lists at the start decide whether GPU pids must move aside.
  for (const GpuDeviceInfo &device : log.gpu.devices) {
    if (static_cast<int64_t>(device.id) == context.pid) gpu_pid_base_ = kGpuPidBaseWhenClashing;
  }
  for (const GpuDeviceInfo &device : log.gpu.devices) {
    trace_.processes[GpuProcess(device.id)].labels = device.name;
  }
}

void SessionTrace::AddHostOp(const HostOp &op, int64_t step) {
  Activity activity;
  activity.begin_ns = op.begin_ns;
  activity.end_ns = op.end_ns;
  activity.step = step;
  activity.name = HostName(op.name);
  activity.track = thread_rows_[op.track];
  activity.kind = op.range ? ActivityKind::kRange : ActivityKind::kHostOp;
  if (op.range && op.end_track != op.track) activity.detail = thread_rows_[op.end_track];
  if (op.incomplete) activity.flags |= kActivityIncomplete;
  trace_.activities.push_back(activity);
}

void SessionTrace::AddGpuWork(const GpuWork &work, int64_t step) {
  const GpuActivity &record = log_->gpu.activities[work.activity];
  InsertOrReset(context_devices_,
                [&] { return context_devices_.try_emplace(record.context, record.device); });
  Activity activity;
  activity.begin_ns = Ns(record.start_ticks);
  activity.end_ns = std::max(Ns(record.end_ticks), activity.begin_ns);
  activity.bytes = record.bytes;
  activity.step = step;
  activity.track = StreamRow(record.device, record.stream);
  GpuDetail detail;
  GpuWorkShape shape;
  detail.external_id = work.external_id;
  shape.graph_id = record.graph_id;
  detail.launch_ns = work.launch_ns;
  detail.thread_id = work.thread_id;
  detail.correlation = record.correlation;
  detail.context = record.context;
  detail.fields = kGpuHasCorrelation | kGpuHasContext;
  if (work.has_op) detail.op = HostName(work.op.name);
  switch (record.kind) {
    case GpuActivityKind::kKernel: {
      if (!kernel_names_) kernel_names_.emplace(log_->gpu.names);
      activity.kind = ActivityKind::kKernel;
      activity.name = Intern(kernel_names_->Get(record.name));
      for (int axis = 0; axis < 3; ++axis) {
        shape.grid[axis] = record.grid[axis];
        shape.block[axis] = record.block[axis];
      }
      shape.registers = record.registers;
      shape.static_shared = record.static_shared;
      shape.dynamic_shared = record.dynamic_shared;
      detail.fields |= kGpuHasLaunchShape;
      break;
    }
    case GpuActivityKind::kMemcpy:
      activity.kind = ActivityKind::kMemcpy;
      activity.name = Intern(MemcpyDisplayName(record));
      activity.copy = CoarseCopyKind(record.copy_kind);
      detail.copy_direction = static_cast<uint8_t>(record.copy_kind);
      shape.peer_device = record.peer_device;
      break;
    case GpuActivityKind::kMemset:
      activity.kind = ActivityKind::kMemset;
      activity.name = Intern(MemsetDisplayName(record));
      shape.memset_value = record.memset_value;
      detail.fields |= kGpuHasMemsetValue;
      break;
  }
  detail.shape = trace_.work_shapes.Intern(shape);
  AddWithDetail(activity, detail);
}

void SessionTrace::AddWithDetail(Activity activity, const GpuDetail &detail) {
  activity.detail = trace_.gpu_details.Add(activity.kind, detail);
  trace_.activities.push_back(activity);
}

void SessionTrace::AddApiCall(size_t index, int64_t step) {
  const GpuApiCall &call = log_->gpu.api_calls[index];
  Activity activity;
  activity.begin_ns = Ns(call.start_ticks);
  activity.end_ns = std::max(Ns(call.end_ticks), activity.begin_ns);
  activity.step = step;
  activity.name = GpuName(call.name);
  activity.track = ApiRow(call.os_tid);
  activity.kind = ActivityKind::kRuntimeApi;
  if (call.driver) activity.flags |= kActivityDriverApi;
  GpuDetail detail;
  detail.correlation = call.correlation;
  detail.callback_id = call.callback_id;
  detail.external_id = partitioner_.ExternalIdOf(call.correlation);
  detail.fields = kGpuHasCorrelation | kGpuHasCallbackId;
  if (call.launches_work) detail.fields |= kGpuLaunchesWork;
  AddWithDetail(activity, detail);
}

void SessionTrace::AddSync(size_t index, int64_t step) {
  const GpuSync &sync = log_->gpu.syncs[index];
  Activity activity;
  activity.begin_ns = Ns(sync.start_ticks);
  activity.end_ns = std::max(Ns(sync.end_ticks), activity.begin_ns);
  activity.step = step;
  activity.name = Intern(SyncName(sync.kind));
  activity.track = SyncRow(SyncDevice(sync), sync.stream);
  activity.kind = ActivityKind::kSync;
  GpuDetail detail;
  detail.correlation = sync.correlation;
  detail.context = sync.context;
  detail.fields = kGpuHasCorrelation | kGpuHasContext;
  if (sync.stream == kContextWide) detail.fields |= kGpuContextWide;
  AddWithDetail(activity, detail);
}

void SessionTrace::AddRecord(const StepRecord &record) {
  const int64_t step = record.has_step ? record.step.step : kNoStep;
  if (record.has_step) {
    Step model_step;
    model_step.number = record.step.step;
    model_step.begin_ns = record.step.begin_ns;
    model_step.end_ns = record.step.end_ns;
    model_step.process = 0;
    model_step.track = thread_rows_[record.step.track];
    model_step.incomplete = record.step.incomplete;
    trace_.steps.push_back(model_step);
  }
  for (const HostOp &op : record.ops) AddHostOp(op, step);
  // Items outside every step still show the step they ran in when it was written earlier
  // (work that arrived late).
  const auto step_of = [&](int64_t ns) { return record.has_step ? step : StepNumberAt(ns); };
  // Per stream, the extent of the step's work: Kineto's gpu_user_annotation spans.
  std::map<uint32_t, std::pair<int64_t, int64_t>> extents;
  for (const GpuWork &work : record.gpu) {
    AddGpuWork(work, step_of(work.launch_ns));
    const Activity &added = trace_.activities.back();
    auto [extent, fresh] = extents.try_emplace(added.track, added.begin_ns, added.end_ns);
    if (!fresh) {
      extent->second.first = std::min(extent->second.first, added.begin_ns);
      extent->second.second = std::max(extent->second.second, added.end_ns);
    }
  }
  for (size_t index : record.api_calls) {
    AddApiCall(index, step_of(Ns(log_->gpu.api_calls[index].start_ticks)));
  }
  for (size_t index : record.syncs) AddSync(index, step_of(Ns(log_->gpu.syncs[index].start_ticks)));
  if (!record.has_step) return;
  const uint32_t name = Intern(absl::StrCat("step ", step));
  for (const auto &[track, extent] : extents) {
    Activity annotation;
    annotation.begin_ns = extent.first;
    annotation.end_ns = extent.second;
    annotation.step = step;
    annotation.name = name;
    annotation.track = track;
    annotation.kind = ActivityKind::kGpuAnnotation;
    trace_.activities.push_back(annotation);
  }
}

void SessionTrace::AddPoints() {
  const auto points = partitioner_.TakePoints();
  taken_records_ += points.size();
  for (const HostPoint &point : points) {
    if (point.counter) {
      trace_.counters.push_back(CounterSample{point.ns, point.value, HostName(point.name),
                                              thread_rows_[point.track], value_series_});
      continue;
    }
    Activity instant;
    instant.begin_ns = instant.end_ns = point.ns;
    instant.step = StepNumberAt(point.ns);
    instant.name = HostName(point.name);
    instant.track = thread_rows_[point.track];
    instant.kind = ActivityKind::kInstant;
    trace_.activities.push_back(instant);
  }
}

void SessionTrace::AddLooseGpuRecords(int64_t through_ns) {
  const GpuTrace &gpu = log_->gpu;
  next_overhead_ = gpu.overheads.VisitWhile(next_overhead_, [&](const GpuOverhead &overhead) {
    if (Ns(overhead.start_ticks) >= through_ns) return false;
    Activity activity;
    activity.begin_ns = Ns(overhead.start_ticks);
    activity.end_ns = std::max(Ns(overhead.end_ticks), activity.begin_ns);
    activity.name = GpuName(overhead.name);
    activity.track = OverheadRow();
    activity.kind = ActivityKind::kOverhead;
    GpuDetail detail;
    detail.thread_id = overhead.os_tid;
    AddWithDetail(activity, detail);
    return true;
  });
  // Bytes in use per device: the running sum of allocations and releases in time order.
  std::vector<GpuMemoryChange> changes;
  next_memory_change_ = gpu.memory_changes.VisitWhile(next_memory_change_, [&](const GpuMemoryChange &change) {
    if (Ns(change.ticks) >= through_ns) return false;
    changes.push_back(change);
    return true;
  });
  std::stable_sort(changes.begin(), changes.end(), [](const GpuMemoryChange &a, const GpuMemoryChange &b) {
    return std::tie(a.device, a.ticks) < std::tie(b.device, b.ticks);
  });
  for (const GpuMemoryChange &change : changes) {
    int64_t &in_use = memory_in_use_[change.device];
    in_use += change.bytes;
    trace_.counters.push_back(CounterSample{Ns(change.ticks), static_cast<double>(in_use),
                                            gpu_memory_name_, MemoryRow(change.device),
                                            bytes_in_use_series_});
  }
}

namespace {

// The session's records behind a step record: a step, span or range by its two ends.
uint64_t RecordsIn(const StepRecord &record) {
  return (record.has_step ? 2 : 0) + 2 * record.ops.size() + record.gpu.size() +
         record.api_calls.size() + record.syncs.size();
}

}  // namespace

LogPositions SessionTrace::TakenIn(bool gpu_tracing) const {
  LogPositions taken;
  partitioner_.TakenIn(gpu_tracing, &taken);
  taken.gpu_overheads = next_overhead_;
  taken.gpu_memory_changes = next_memory_change_;
  return taken;
}

bool SessionTrace::TakeSettled(int64_t settled_ns, int64_t gpu_complete_through_ns) {
  ClearPiece();
  taken_records_ = 0;
  const std::vector<StepRecord> records = partitioner_.TakeSettled(settled_ns, gpu_complete_through_ns);
  for (const StepRecord &record : records) taken_records_ += RecordsIn(record);
  for (const StepRecord &record : records) AddRecord(record);
  partitioner_.TakeOutside(&outside_);
  taken_records_ += RecordsIn(outside_);
  AddRecord(outside_);
  AddPoints();
  AddLooseGpuRecords(std::min(settled_ns, gpu_complete_through_ns));
  return !trace_.steps.empty() || !trace_.activities.empty() || !trace_.counters.empty();
}

void SessionTrace::TakeAll() {
  ClearPiece();
  taken_records_ = 0;
  const std::vector<StepRecord> records = partitioner_.TakeAll(context_->end_ns);
  for (const StepRecord &record : records) taken_records_ += RecordsIn(record);
  for (const StepRecord &record : records) AddRecord(record);
  AddPoints();
  AddLooseGpuRecords(std::numeric_limits<int64_t>::max());
}

void SessionTrace::UpdateInfo(const SessionLog &log, const ExportContext &context,
                              const GpuLossCounters &gpu_losses) {
  trace_.end_ns = context.end_ns;
  trace_.events_recorded = context.events_recorded;
  TraceLosses &losses = trace_.losses;
  losses.dropped_events = context.losses.dropped;
  losses.unmatched_span_ends = context.losses.unmatched_span_ends;
  losses.unmatched_step_ends = context.losses.unmatched_step_ends;
  losses.memory_dropped_events = context.losses.memory_dropped;
  losses.discarded_events = context.losses.discarded;
  losses.gpu_records_dropped = gpu_losses.records_dropped;
  losses.gpu_buffers_refused = gpu_losses.buffers_refused;
  losses.gpu_records_unparsed = gpu_losses.records_unparsed;
  losses.gpu_late_records = gpu_losses.late_records;
  trace_.gpu.reported = true;
  trace_.gpu.state = std::string(GpuStateName(log.gpu.state));
  trace_.gpu.reason = log.gpu.reason;
  trace_.gpu.library = log.gpu.library_path;
  trace_.devices.clear();
  std::vector<const GpuDeviceInfo *> devices;
  for (const GpuDeviceInfo &info : log.gpu.devices) devices.push_back(&info);
  std::sort(devices.begin(), devices.end(), [](const auto *a, const auto *b) { return a->id < b->id; });
  for (const GpuDeviceInfo *info : devices) {
    trace_.devices.push_back(DeviceProperties{info->id, info->name, info->global_memory_bytes,
                                              info->compute_major, info->compute_minor,
                                              info->multiprocessors});
  }
}

}  // namespace tfprof
