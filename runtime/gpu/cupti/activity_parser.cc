#include "runtime/gpu/cupti/activity_parser.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace tfprof {

namespace {

GpuCopyKind CopyKind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return GpuCopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return GpuCopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return GpuCopyKind::kHtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return GpuCopyKind::kAtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return GpuCopyKind::kAtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return GpuCopyKind::kAtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return GpuCopyKind::kDtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return GpuCopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return GpuCopyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return GpuCopyKind::kPtoP;
    default: return GpuCopyKind::kUnknown;
  }
}

GpuMemoryKind MemoryKind(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return GpuMemoryKind::kPageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return GpuMemoryKind::kPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return GpuMemoryKind::kDevice;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return GpuMemoryKind::kArray;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return GpuMemoryKind::kManaged;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return GpuMemoryKind::kDeviceStatic;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return GpuMemoryKind::kManagedStatic;
    default: return GpuMemoryKind::kUnknown;
  }
}

GpuSyncKind SyncKind(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return GpuSyncKind::kEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return GpuSyncKind::kStreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return GpuSyncKind::kStream;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return GpuSyncKind::kContext;
    default: return GpuSyncKind::kUnknown;
  }
}

std::string_view OverheadName(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "CUPTI overhead: driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI overhead: resource";
    default: return "CUPTI overhead";
  }
}

// The fields kernels, copies and memsets share (same names in every CUpti_Activity* struct).
template <typename Record>
GpuActivity StreamActivity(GpuActivityKind kind, const Record &record) {
  GpuActivity activity;
  activity.kind = kind;
  activity.start_ticks = record.start;
  activity.end_ticks = record.end;
  activity.correlation = record.correlationId;
  activity.device = record.deviceId;
  activity.context = record.contextId;
  activity.stream = record.streamId;
  activity.graph_id = record.graphId;
  return activity;
}

void ParseKernel(const CUpti_ActivityKernel10 &record, GpuRecordBatch &batch) {
  GpuActivity activity = StreamActivity(GpuActivityKind::kKernel, record);
  activity.name = batch.names.Intern(record.name == nullptr ? "(unnamed kernel)" : record.name);
  activity.grid[0] = record.gridX;
  activity.grid[1] = record.gridY;
  activity.grid[2] = record.gridZ;
  activity.block[0] = record.blockX;
  activity.block[1] = record.blockY;
  activity.block[2] = record.blockZ;
  activity.registers = record.registersPerThread;
  activity.static_shared = record.staticSharedMemory;
  activity.dynamic_shared = record.dynamicSharedMemory;
  batch.activities.push_back(activity);
}

template <typename Copy>
GpuActivity CopyActivity(const Copy &record) {
  GpuActivity activity = StreamActivity(GpuActivityKind::kMemcpy, record);
  activity.bytes = record.bytes;
  activity.copy_kind = CopyKind(record.copyKind);
  activity.src_memory = MemoryKind(record.srcKind);
  activity.dst_memory = MemoryKind(record.dstKind);
  return activity;
}

void ParseMemset(const CUpti_ActivityMemset4 &record, GpuRecordBatch &batch) {
  GpuActivity activity = StreamActivity(GpuActivityKind::kMemset, record);
  activity.bytes = record.bytes;
  activity.memset_value = record.value;
  activity.src_memory = MemoryKind(record.memoryKind);  // gpu_trace.h: a memset's memory
  batch.activities.push_back(activity);
}

void ParseApi(const CuptiApi &api, const CUpti_ActivityAPI &record, bool driver,
              GpuRecordBatch &batch) {
  GpuApiCall call;
  call.start_ticks = record.start;
  call.end_ticks = record.end;
  call.os_tid = record.threadId;
  call.correlation = record.correlationId;
  call.callback_id = record.cbid;
  call.driver = driver;
  const char *cupti_name = nullptr;
  const CUpti_CallbackDomain domain =
      driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  std::string fallback;
  if (api.GetCallbackName == nullptr ||
      api.GetCallbackName(domain, record.cbid, &cupti_name) != CUPTI_SUCCESS ||
      cupti_name == nullptr) {
    fallback = absl::StrCat(driver ? "driver" : "runtime", " API call ", record.cbid);
    cupti_name = fallback.c_str();
  }
  const std::string_view function = ApiFunctionName(cupti_name);
  call.name = batch.names.Intern(function);
  call.launches_work = LaunchesGpuWork(function);
  batch.api_calls.push_back(call);
}

void ParseMemory(const CUpti_ActivityMemory4 &record, GpuRecordBatch &batch) {
  // Only device memory makes the device's memory counter.
  if (record.memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) return;
  GpuMemoryChange change;
  change.ticks = record.timestamp;
  change.address = record.address;
  change.device = record.deviceId;
  const int64_t bytes = static_cast<int64_t>(record.bytes & 0x7fffffffffffffff);
  if (record.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
    change.bytes = bytes;
  } else if (record.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
    change.bytes = -bytes;
  } else {
    return;
  }
  batch.memory_changes.push_back(change);
}

void ParseOverhead(const CUpti_ActivityOverhead3 &record, GpuRecordBatch &batch) {
  GpuOverhead overhead;
  overhead.start_ticks = record.start;
  overhead.end_ticks = record.end;
  overhead.name = batch.names.Intern(OverheadName(record.overheadKind));
  if (record.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
    overhead.os_tid = record.objectId.pt.threadId;
  }
  batch.overheads.push_back(overhead);
}

}  // namespace

std::string_view ApiFunctionName(std::string_view cupti_name) {
  const size_t suffix = cupti_name.rfind("_v");
  if (suffix == std::string_view::npos || suffix + 2 == cupti_name.size()) return cupti_name;
  for (size_t i = suffix + 2; i < cupti_name.size(); ++i) {
    if (cupti_name[i] < '0' || cupti_name[i] > '9') return cupti_name;
  }
  return cupti_name.substr(0, suffix);
}

bool LaunchesGpuWork(std::string_view function) {
  for (std::string_view prefix : {"cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
                                  "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset"}) {
    if (function.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

void ParseActivityBuffer(const CuptiApi &api, uint8_t *buffer, size_t valid_bytes,
                         GpuRecordBatch &batch) {
  if (buffer == nullptr || valid_bytes == 0) return;
  CUpti_Activity *record = nullptr;
  while (api.ActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        ParseKernel(*reinterpret_cast<const CUpti_ActivityKernel10 *>(record), batch);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        batch.activities.push_back(
            CopyActivity(*reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const auto &peer = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4 *>(record);
        GpuActivity activity = CopyActivity(peer);
        activity.copy_kind = GpuCopyKind::kPtoP;
        // Shown on the source device's row (gpu_trace.h), with the destination beside it.
        activity.device = peer.srcDeviceId;
        activity.peer_device = peer.dstDeviceId;
        batch.activities.push_back(activity);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET:
        ParseMemset(*reinterpret_cast<const CUpti_ActivityMemset4 *>(record), batch);
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        ParseApi(api, *reinterpret_cast<const CUpti_ActivityAPI *>(record),
                 record->kind == CUPTI_ACTIVITY_KIND_DRIVER, batch);
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto &link = *reinterpret_cast<const CUpti_ActivityExternalCorrelation *>(record);
        // Only tfprof's own kind: another tool's ids would name spans that are not ours.
        if (link.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
          batch.external_correlations.push_back(
              GpuExternalCorrelation{link.correlationId, link.externalId});
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const auto &sync = *reinterpret_cast<const CUpti_ActivitySynchronization2 *>(record);
        batch.syncs.push_back(GpuSync{sync.start, sync.end, sync.correlationId, sync.contextId,
                                      sync.streamId, SyncKind(sync.type)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        ParseOverhead(*reinterpret_cast<const CUpti_ActivityOverhead3 *>(record), batch);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        ParseMemory(*reinterpret_cast<const CUpti_ActivityMemory4 *>(record), batch);
        break;
      default:
        ++batch.records_unparsed;
        break;
    }
  }
}

namespace {

template <typename T>
void Add(std::vector<T> &records, const T &record) {
  records.push_back(record);
}
template <typename T, size_t kChunk>
void Add(ChunkedLog<T, kChunk> &records, const T &record) {
  records.Append(record);
}

// Copies every record of `batch` into `target` (a GpuTrace or another batch), re-interning names.
template <typename Target>
void AppendRecords(const GpuRecordBatch &batch, Target &target) {
  std::vector<uint32_t> ids(batch.names.size());
  for (uint32_t id = 0; id < batch.names.size(); ++id) ids[id] = target.names.Intern(batch.names.Get(id));
  for (GpuActivity activity : batch.activities) {
    if (activity.kind == GpuActivityKind::kKernel) activity.name = ids[activity.name];
    Add(target.activities, activity);
  }
  for (GpuApiCall call : batch.api_calls) {
    call.name = ids[call.name];
    Add(target.api_calls, call);
  }
  for (GpuOverhead overhead : batch.overheads) {
    overhead.name = ids[overhead.name];
    Add(target.overheads, overhead);
  }
  for (const GpuExternalCorrelation &link : batch.external_correlations) {
    Add(target.external_correlations, link);
  }
  for (const GpuSync &sync : batch.syncs) Add(target.syncs, sync);
  for (const GpuMemoryChange &change : batch.memory_changes) Add(target.memory_changes, change);
}

}  // namespace

void AppendBatch(const GpuRecordBatch &batch, GpuTrace &trace) {
  AppendRecords(batch, trace);
  trace.losses.records_unparsed += batch.records_unparsed;
  trace.losses.records_dropped += batch.records_dropped;
}

void AppendBatch(const GpuRecordBatch &batch, GpuRecordBatch &into) {
  AppendRecords(batch, into);
  into.records_unparsed += batch.records_unparsed;
  into.records_dropped += batch.records_dropped;
}

}  // namespace tfprof
