#include "runtime/export/gpu_chrome_rows.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/gpu_names.h"
#include "runtime/export/json_text.h"
#include "runtime/gpu_join.h"
#include "runtime/string_view_bridge.h"

namespace tfprof {

namespace {

// Kineto's layout: a device's process is its id, sorted below the host; synchronisations sit on
// a row beside their stream's.
constexpr int64_t kGpuPidBaseWhenClashing = 1000000;  // when the host pid is a device id
constexpr int64_t kGpuSortIndexBase = 5000000;
constexpr int64_t kSyncRowTidBase = 1000000;
constexpr int64_t kContextSyncRowTid = 999999;
constexpr uint32_t kContextWide = UINT32_MAX;
// A host row no OS thread (tids stay below 2^22) and no other tfprof row (reused-tid rows at 1e9
// + track, step rows at 2e9 + track) can have.
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

int64_t SyncRowTid(uint32_t stream) {
  return stream == kContextWide ? kContextSyncRowTid : kSyncRowTidBase + stream;
}

// Where the first activity of a correlation id ran: the end of its launch's flow arrow.
struct FlowEnd {
  int64_t ns = 0;
  int64_t pid = 0;
  int64_t tid = 0;
};

// The extent of one step's activities on one stream.
struct StreamStepExtent {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

class GpuRowsWriter {
 public:
  GpuRowsWriter(const SessionLog &model, const ExportContext &context,
                const std::vector<StepInterval> &steps, const HostRowLayout &host,
                OutputSink &sink)
      : model_(model),
        gpu_(model.gpu),
        context_(context),
        steps_(steps),
        host_(host),
        sink_(sink),
        join_(model, context.converter, steps),
        kernel_names_(model.gpu.names) {}

  void Write() {
    CollectLayout();
    WriteMetadata();
    gpu_.activities.ForEach([&](const GpuActivity &activity) { WriteActivity(activity); });
    gpu_.api_calls.ForEach([&](const GpuApiCall &call) { WriteApiCall(call); });
    WriteStreamSteps();
    WriteMemoryCounters();
    gpu_.syncs.ForEach([&](const GpuSync &sync) { WriteSync(sync); });
    gpu_.overheads.ForEach([&](const GpuOverhead &overhead) { WriteOverhead(overhead); });
  }

 private:
  int64_t Ns(uint64_t ticks) const { return context_.converter.ToNs(ticks); }
  int64_t Pid(uint32_t device) const { return gpu_pid_base_ + device; }

  // The devices, their streams and synchronisation rows, and the host rows of API calls.
  void CollectLayout() {
    for (const GpuDeviceInfo &info : gpu_.devices) devices_[info.id] = &info;
    gpu_.activities.ForEach([&](const GpuActivity &activity) {
      devices_.try_emplace(activity.device, nullptr);
      streams_[activity.device].insert(activity.stream);
      context_devices_.try_emplace(activity.context, activity.device);
    });
    gpu_.memory_changes.ForEach(
        [&](const GpuMemoryChange &change) { devices_.try_emplace(change.device, nullptr); });
    gpu_.syncs.ForEach([&](const GpuSync &sync) {
      const uint32_t device = SyncDevice(sync);
      devices_.try_emplace(device, nullptr);
      sync_rows_[device].insert(sync.stream);
    });
    for (const auto &[device, info] : devices_) {
      if (device == context_.pid) gpu_pid_base_ = kGpuPidBaseWhenClashing;
    }

    // Each thread id's tracks by first event, so a reused OS tid finds the thread of its time.
    for (size_t track = 0; track < model_.tracks.size(); ++track) {
      const ThreadLog &row = model_.tracks[track];
      const int64_t first_ns = row.events.size() == 0 ? INT64_MIN : Ns(row.events[0].ticks);
      tracks_by_tid_[row.os_tid].emplace_back(first_ns, (*host_.track_tids)[track]);
    }
    for (auto &[tid, rows] : tracks_by_tid_) std::sort(rows.begin(), rows.end());
    gpu_.api_calls.ForEach([&](const GpuApiCall &call) {
      if (!tracks_by_tid_.contains(call.os_tid)) api_only_tids_.insert(call.os_tid);
    });
  }

  // Synchronisation records name a context, not a device: the device of the context's work.
  uint32_t SyncDevice(const GpuSync &sync) const {
    auto device = context_devices_.find(sync.context);
    if (device != context_devices_.end()) return device->second;
    return devices_.empty() ? 0 : devices_.begin()->first;
  }

  int64_t ApiRowTid(const GpuApiCall &call) const {
    auto rows = tracks_by_tid_.find(call.os_tid);
    if (rows == tracks_by_tid_.end()) return call.os_tid;
    const int64_t start_ns = Ns(call.start_ticks);
    // The latest thread with this id that had started by the call; else its first.
    auto after = std::upper_bound(rows->second.begin(), rows->second.end(),
                                  std::make_pair(start_ns, INT64_MAX));
    return after == rows->second.begin() ? after->second : std::prev(after)->second;
  }

  void Begin() { sink_.Write(",\n"); }

  void Metadata(int64_t pid, std::string_view kind, int64_t tid, std::string_view arg_key,
                std::string_view json_value) {
    Begin();
    sink_.Write(absl::StrCat("{\"ph\":\"M\",\"pid\":", pid, ",\"tid\":", tid, ",\"name\":\"",
                             ToAbsl(kind), "\",\"args\":{\"", ToAbsl(arg_key),
                             "\":", ToAbsl(json_value), "}}"));
  }

  void WriteMetadata() {
    for (const auto &[device, info] : devices_) {
      const int64_t pid = Pid(device);
      Metadata(pid, "process_name", 0, "name", QuotedJson(absl::StrCat("GPU ", device)));
      if (info != nullptr && !info->name.empty()) {
        Metadata(pid, "process_labels", 0, "labels", QuotedJson(info->name));
      }
      Metadata(pid, "process_sort_index", 0, "sort_index",
               absl::StrCat(kGpuSortIndexBase + device));
      for (uint32_t stream : streams_[device]) {
        Metadata(pid, "thread_name", stream, "name", QuotedJson(absl::StrCat("stream ", stream)));
        Metadata(pid, "thread_sort_index", stream, "sort_index", absl::StrCat(stream));
      }
      for (uint32_t stream : sync_rows_[device]) {
        const int64_t tid = SyncRowTid(stream);
        Metadata(pid, "thread_name", tid, "name",
                 QuotedJson(stream == kContextWide ? std::string("context sync")
                                               : absl::StrCat("stream ", stream, " sync")));
        Metadata(pid, "thread_sort_index", tid, "sort_index", absl::StrCat(tid));
      }
    }
    int64_t sort_index = host_.next_sort_index;
    for (int64_t tid : api_only_tids_) {
      Metadata(context_.pid, "thread_name", tid, "name", QuotedJson(absl::StrCat("thread ", tid)));
      Metadata(context_.pid, "thread_sort_index", tid, "sort_index", absl::StrCat(sort_index++));
    }
    if (gpu_.overheads.size() != 0) {
      Metadata(context_.pid, "thread_name", kCuptiOverheadRowTid, "name", "\"CUPTI overhead\"");
      Metadata(context_.pid, "thread_sort_index", kCuptiOverheadRowTid, "sort_index",
               absl::StrCat(sort_index++));
    }
  }

  // {"ph":"X","cat":C,"name":N,"pid":P,"tid":T,"ts":..,"dur":..,"args":{   (args left open)
  void CompleteHead(std::string_view category, std::string_view quoted_name, int64_t pid,
                    int64_t tid, int64_t begin_ns, int64_t end_ns) {
    event_.clear();
    absl::StrAppend(&event_, "{\"ph\":\"X\",\"cat\":\"", ToAbsl(category),
                    "\",\"name\":", ToAbsl(quoted_name), ",\"pid\":", pid, ",\"tid\":", tid,
                    ",\"ts\":");
    AppendMicros(begin_ns);
    event_ += ",\"dur\":";
    AppendMicros(std::max<int64_t>(end_ns - begin_ns, 0));
    event_ += ",\"args\":{";
  }

  void AppendMicros(int64_t ns) {
    char text[32];
    event_.append(text, FormatMicros(ns, text));
  }

  // Closes the args and the event and writes it.
  void Finish() {
    event_ += "}}";
    Begin();
    sink_.Write(event_);
  }

  // "op" and "step" of work launched by a host op inside a step.
  void AppendLaunchArgs(const GpuLaunch &launch) {
    if (launch.op != nullptr) {
      absl::StrAppend(&event_, ",\"op\":", (*host_.quoted_names)[launch.op->name]);
    }
    if (launch.step != nullptr) absl::StrAppend(&event_, ",\"step\":", launch.step->step);
  }

  void WriteActivity(const GpuActivity &activity) {
    const GpuLaunch launch = join_.LaunchOf(activity);
    const int64_t begin_ns = Ns(activity.start_ticks);
    const int64_t end_ns = Ns(activity.end_ticks);
    const int64_t pid = Pid(activity.device);
    const int64_t tid = activity.stream;
    std::string_view category;
    std::string name;
    switch (activity.kind) {
      case GpuActivityKind::kKernel:
        category = "kernel";
        name = QuotedJson(kernel_names_.Get(activity.name));
        break;
      case GpuActivityKind::kMemcpy:
        category = "gpu_memcpy";
        name = QuotedJson(MemcpyDisplayName(activity));
        break;
      case GpuActivityKind::kMemset:
        category = "gpu_memset";
        name = QuotedJson(MemsetDisplayName(activity));
        break;
    }
    CompleteHead(category, name, pid, tid, begin_ns, end_ns);
    absl::StrAppend(&event_, "\"device\":", activity.device, ",\"context\":", activity.context,
                    ",\"stream\":", activity.stream, ",\"correlation\":", activity.correlation);
    if (launch.external_id != 0) absl::StrAppend(&event_, ",\"External id\":", launch.external_id);
    switch (activity.kind) {
      case GpuActivityKind::kKernel:
        absl::StrAppend(
            &event_, ",\"registers per thread\":", activity.registers,
            ",\"shared memory\":", int64_t{activity.static_shared} + activity.dynamic_shared,
            ",\"static shared memory\":", activity.static_shared,
            ",\"dynamic shared memory\":", activity.dynamic_shared, ",\"grid\":[",
            activity.grid[0], ",", activity.grid[1], ",", activity.grid[2], "],\"block\":[",
            activity.block[0], ",", activity.block[1], ",", activity.block[2], "]");
        if (activity.graph_id != 0) absl::StrAppend(&event_, ",\"graph id\":", activity.graph_id);
        break;
      case GpuActivityKind::kMemcpy: {
        // Bytes per nanosecond is GB/s.
        const int64_t duration_ns = end_ns - begin_ns;
        const double bandwidth =
            duration_ns > 0 ? static_cast<double>(activity.bytes) / static_cast<double>(duration_ns) : 0.0;
        char text[32];
        absl::StrAppend(&event_, ",\"bytes\":", activity.bytes, ",\"memory bandwidth (GB/s)\":",
                        absl::string_view(text, FormatDouble(bandwidth, text)), ",\"kind\":\"",
                        ToAbsl(CopyKindName(activity.copy_kind)), "\"");
        if (activity.copy_kind == GpuCopyKind::kPtoP) {
          absl::StrAppend(&event_, ",\"src device\":", activity.device,
                          ",\"dst device\":", activity.peer_device);
        }
        break;
      }
      case GpuActivityKind::kMemset:
        absl::StrAppend(&event_, ",\"bytes\":", activity.bytes, ",\"value\":", activity.memset_value);
        break;
    }
    AppendLaunchArgs(launch);
    Finish();

    // The earliest activity of a correlation id ends its flow (one arrow per graph launch).
    auto [flow, added] = flow_ends_.try_emplace(activity.correlation, FlowEnd{begin_ns, pid, tid});
    if (!added && begin_ns < flow->second.ns) flow->second = FlowEnd{begin_ns, pid, tid};
    if (launch.step != nullptr) {
      const size_t step = static_cast<size_t>(launch.step - steps_.data());
      auto [extent, fresh] = stream_steps_.try_emplace(std::make_tuple(activity.device, activity.stream, step),
                                                       StreamStepExtent{begin_ns, end_ns});
      if (!fresh) {
        extent->second.begin_ns = std::min(extent->second.begin_ns, begin_ns);
        extent->second.end_ns = std::max(extent->second.end_ns, end_ns);
      }
    }
  }

  // API calls go on their thread's row: they nest inside its spans, which the same thread
  // recorded around the call with the same clock.
  void WriteApiCall(const GpuApiCall &call) {
    const int64_t begin_ns = Ns(call.start_ticks);
    const int64_t tid = ApiRowTid(call);
    CompleteHead(call.driver ? "cuda_driver" : "cuda_runtime", QuotedJson(gpu_.names.Get(call.name)),
                 context_.pid, tid, begin_ns, Ns(call.end_ticks));
    absl::StrAppend(&event_, "\"cbid\":", call.callback_id, ",\"correlation\":", call.correlation);
    if (const uint64_t external = join_.ExternalIdOf(call.correlation); external != 0) {
      absl::StrAppend(&event_, ",\"External id\":", external);
    }
    if (const StepInterval *step = join_.StepOf(call); step != nullptr) {
      absl::StrAppend(&event_, ",\"step\":", step->step);
    }
    Finish();
    if (!call.launches_work) return;
    auto flow = flow_ends_.find(call.correlation);
    if (flow == flow_ends_.end()) return;
    event_.clear();
    absl::StrAppend(&event_, "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":",
                    call.correlation, ",\"pid\":", context_.pid, ",\"tid\":", tid, ",\"ts\":");
    AppendMicros(begin_ns);
    event_ += "}";
    Begin();
    sink_.Write(event_);
    event_.clear();
    absl::StrAppend(&event_, "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":",
                    call.correlation, ",\"pid\":", flow->second.pid, ",\"tid\":", flow->second.tid,
                    ",\"ts\":");
    AppendMicros(flow->second.ns);
    event_ += ",\"bp\":\"e\"}";
    Begin();
    sink_.Write(event_);
  }

  // A "step N" span on every stream that ran work the step launched, like Kineto's
  // gpu_user_annotation spans.
  void WriteStreamSteps() {
    std::vector<std::pair<std::tuple<uint32_t, uint32_t, size_t>, StreamStepExtent>> extents(
        stream_steps_.begin(), stream_steps_.end());
    std::sort(extents.begin(), extents.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    for (const auto &[key, extent] : extents) {
      const auto &[device, stream, step_index] = key;
      const int64_t step = steps_[step_index].step;
      CompleteHead("gpu_user_annotation", QuotedJson(absl::StrCat("step ", step)), Pid(device), stream,
                   extent.begin_ns, extent.end_ns);
      absl::StrAppend(&event_, "\"step\":", step);
      Finish();
    }
  }

  // Bytes in use per device: the running sum of allocations and releases in time order.
  void WriteMemoryCounters() {
    std::vector<const GpuMemoryChange *> changes;
    changes.reserve(gpu_.memory_changes.size());
    gpu_.memory_changes.ForEach([&](const GpuMemoryChange &change) { changes.push_back(&change); });
    std::stable_sort(changes.begin(), changes.end(), [](const auto *a, const auto *b) {
      return std::tie(a->device, a->ticks) < std::tie(b->device, b->ticks);
    });
    int64_t in_use = 0;
    for (size_t index = 0; index < changes.size(); ++index) {
      const GpuMemoryChange &change = *changes[index];
      if (index == 0 || changes[index - 1]->device != change.device) in_use = 0;
      in_use += change.bytes;
      event_.clear();
      absl::StrAppend(&event_, "{\"ph\":\"C\",\"name\":\"GPU memory\",\"pid\":", Pid(change.device),
                      ",\"tid\":0,\"ts\":");
      AppendMicros(Ns(change.ticks));
      absl::StrAppend(&event_, ",\"args\":{\"bytes in use\":", in_use, "}}");
      Begin();
      sink_.Write(event_);
    }
  }

  void WriteSync(const GpuSync &sync) {
    const int64_t begin_ns = Ns(sync.start_ticks);
    CompleteHead("cuda_sync", QuotedJson(SyncName(sync.kind)), Pid(SyncDevice(sync)),
                 SyncRowTid(sync.stream), begin_ns, Ns(sync.end_ticks));
    absl::StrAppend(&event_, "\"context\":", sync.context);
    if (sync.stream != kContextWide) absl::StrAppend(&event_, ",\"stream\":", sync.stream);
    absl::StrAppend(&event_, ",\"correlation\":", sync.correlation);
    if (const StepInterval *step = join_.StepAt(begin_ns); step != nullptr) {
      absl::StrAppend(&event_, ",\"step\":", step->step);
    }
    Finish();
  }

  void WriteOverhead(const GpuOverhead &overhead) {
    CompleteHead("overhead", QuotedJson(gpu_.names.Get(overhead.name)), context_.pid,
                 kCuptiOverheadRowTid, Ns(overhead.start_ticks), Ns(overhead.end_ticks));
    if (overhead.os_tid != 0) absl::StrAppend(&event_, "\"thread\":", overhead.os_tid);
    Finish();
  }

  const SessionLog &model_;
  const GpuTrace &gpu_;
  const ExportContext &context_;
  const std::vector<StepInterval> &steps_;
  const HostRowLayout &host_;
  OutputSink &sink_;
  GpuJoin join_;
  KernelNames kernel_names_;
  std::string event_;  // the event being formatted, reused
  int64_t gpu_pid_base_ = 0;
  std::map<uint32_t, const GpuDeviceInfo *> devices_;  // null: known only from its work
  std::map<uint32_t, std::set<uint32_t>> streams_;
  std::map<uint32_t, std::set<uint32_t>> sync_rows_;
  absl::flat_hash_map<uint32_t, uint32_t> context_devices_;
  absl::flat_hash_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> tracks_by_tid_;
  std::set<int64_t> api_only_tids_;
  absl::flat_hash_map<uint32_t, FlowEnd> flow_ends_;
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, size_t>, StreamStepExtent> stream_steps_;
};

}  // namespace

std::string GpuDevicePropertiesJson(const GpuTrace &gpu) {
  if (gpu.devices.empty()) return {};
  std::vector<const GpuDeviceInfo *> devices;
  for (const GpuDeviceInfo &info : gpu.devices) devices.push_back(&info);
  std::sort(devices.begin(), devices.end(), [](const auto *a, const auto *b) { return a->id < b->id; });
  std::string json = "\"deviceProperties\":[";
  for (size_t index = 0; index < devices.size(); ++index) {
    const GpuDeviceInfo &info = *devices[index];
    absl::StrAppend(&json, index == 0 ? "" : ",", "{\"id\":", info.id, ",\"name\":", QuotedJson(info.name),
                    ",\"totalGlobalMem\":", info.global_memory_bytes,
                    ",\"computeMajor\":", info.compute_major, ",\"computeMinor\":", info.compute_minor,
                    ",\"numSms\":", info.multiprocessors, "}");
  }
  json += "],\n";
  return json;
}

std::string GpuSummaryJson(const GpuTrace &gpu) {
  uint64_t counts[3] = {0, 0, 0};  // by GpuActivityKind
  gpu.activities.ForEach(
      [&](const GpuActivity &activity) { ++counts[static_cast<size_t>(activity.kind)]; });
  const GpuLossCounters &losses = gpu.losses;
  return absl::StrCat(
      "{\"state\":\"", ToAbsl(GpuStateName(gpu.state)), "\",\"reason\":", QuotedJson(gpu.reason),
      ",\"cupti\":", QuotedJson(gpu.library_path), ",\"records_dropped\":", losses.records_dropped,
      ",\"buffers_refused\":", losses.buffers_refused,
      ",\"records_unparsed\":", losses.records_unparsed, ",\"late_records\":", losses.late_records,
      ",\"kernels\":", counts[static_cast<size_t>(GpuActivityKind::kKernel)],
      ",\"memcpys\":", counts[static_cast<size_t>(GpuActivityKind::kMemcpy)],
      ",\"memsets\":", counts[static_cast<size_t>(GpuActivityKind::kMemset)],
      ",\"api_calls\":", gpu.api_calls.size(), "}");
}

void WriteGpuChromeRows(const SessionLog &model, const ExportContext &context,
                        const std::vector<StepInterval> &steps, const HostRowLayout &host,
                        OutputSink &sink) {
  const GpuTrace &gpu = model.gpu;
  if (gpu.devices.empty() && gpu.activities.size() == 0 && gpu.api_calls.size() == 0 &&
      gpu.syncs.size() == 0 && gpu.overheads.size() == 0 && gpu.memory_changes.size() == 0) {
    return;
  }
  GpuRowsWriter(model, context, steps, host, sink).Write();
}

}  // namespace tfprof
