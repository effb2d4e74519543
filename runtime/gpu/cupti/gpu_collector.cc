#include "runtime/gpu/cupti/gpu_collector.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "runtime/collector/clock.h"
#include "runtime/gpu/cupti/api_selection.h"
#include "runtime/gpu/cupti/cuda_devices.h"

namespace tfprof {

std::atomic<bool> g_gpu_correlation_enabled{false};

namespace {

// CUPTI's callbacks are process-wide; they reach the running session's tracer through this.
std::atomic<CuptiGpuTracer *> g_active_tracer{nullptr};
std::atomic<const CuptiApi *> g_correlation_api{nullptr};

void CUPTIAPI OnBufferRequested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *max_records = 0;
  CuptiGpuTracer *tracer = g_active_tracer.load(std::memory_order_acquire);
  *buffer = tracer == nullptr ? nullptr : tracer->TakeBuffer(size);
  if (*buffer == nullptr) *size = 0;
}

void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t *buffer,
                                size_t /*size*/, size_t valid_bytes) {
  CuptiGpuTracer *tracer = g_active_tracer.load(std::memory_order_acquire);
  if (tracer == nullptr) return;  // a buffer of no session's: its pool is gone or was never ours
  const CuptiApi *api = g_correlation_api.load(std::memory_order_acquire);
  size_t dropped = 0;
  if (api != nullptr) api->ActivityGetNumDroppedRecords(context, stream_id, &dropped);
  tracer->OnBufferCompleted(buffer, valid_bytes, dropped);
}

// CUPTI stamps GPU records through this, so they share the host events' clock.
uint64_t CUPTIAPI TimestampTicks() { return ReadTicks(); }

// Subscribing (with no domain enabled) is how another CUPTI client shows up: only one may
// subscribe before CUDA 13.3.
void CUPTIAPI IgnoreCallback(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

std::string SubscribeFailure(const CuptiApi &api, CUptiResult result) {
  switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
      return absl::StrCat(
          "another profiler is already using CUPTI in this process (", api.ErrorName(result),
          "): Nsight Systems, Nsight Compute, cuda-gdb or a second profiler such as "
          "torch.profiler; run without it, or with cuda=off for a host-only trace");
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return absl::StrCat(
          "CUPTI refused access (", api.ErrorName(result),
          "): run as root or with CAP_SYS_ADMIN, or load the driver with "
          "NVreg_RestrictProfilingToAdminUsers=0 (containers: --cap-add=SYS_ADMIN)");
    default:
      return absl::StrCat("CUPTI could not start (", api.ErrorName(result), ")");
  }
}

}  // namespace

void PushGpuCorrelation(uint64_t external_id) {
  if (const CuptiApi *api = g_correlation_api.load(std::memory_order_relaxed)) {
    api->ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, external_id);
  }
}

void PopGpuCorrelation() {
  if (const CuptiApi *api = g_correlation_api.load(std::memory_order_relaxed)) {
    uint64_t last = 0;
    api->ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }
}

CuptiGpuTracer::CuptiGpuTracer(const CuptiApi &api, const GpuOptions &options,
                               const CudaDriverApi *driver_to_list)
    : api_(api),
      trace_sync_(options.sync),
      trace_queries_(options.queries),
      driver_to_list_(driver_to_list),
      pool_(std::make_unique<ActivityBufferPool>(options.buffers, size_t{options.buffer_kb} * 1024)) {}

CuptiGpuTracer::~CuptiGpuTracer() {
  Stop();
  CuptiGpuTracer *self = this;
  g_active_tracer.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
  // A buffer CUPTI never handed back after the forced flush may still be written or returned
  // later: its memory must outlive this tracer, so such a pool is deliberately kept.
  if (pool_->outstanding() > 0) static_cast<void>(pool_.release());
}

absl::Status CuptiGpuTracer::Enable() {
  CUptiResult result = api_.Subscribe(&subscriber_, IgnoreCallback, nullptr);
  if (result != CUPTI_SUCCESS) {
    subscriber_ = nullptr;
    return absl::FailedPreconditionError(SubscribeFailure(api_, result));
  }
  // System thread ids (gettid), the ids host tracks carry, rather than pthread_self values.
  api_.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  result = api_.ActivityRegisterTimestampCallback(TimestampTicks);
  if (result != CUPTI_SUCCESS) {
    Disable();
    return absl::FailedPreconditionError(absl::StrCat(
        "CUPTI would not take tfprof's clock (", api_.ErrorName(result),
        "); GPU and host times could not be compared"));
  }
  g_active_tracer.store(this, std::memory_order_release);
  g_correlation_api.store(&api_, std::memory_order_release);
  // Registered at every start: another CUPTI client in between may have replaced them.
  result = api_.ActivityRegisterCallbacks(OnBufferRequested, ::tfprof::OnBufferCompleted);
  if (result != CUPTI_SUCCESS) {
    Disable();
    return absl::FailedPreconditionError(SubscribeFailure(api_, result));
  }
  struct Kind {
    CUpti_ActivityKind kind;
    bool required;
  };
  std::vector<Kind> kinds = {
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, true}, {CUPTI_ACTIVITY_KIND_MEMCPY, true},
      {CUPTI_ACTIVITY_KIND_MEMSET, true},            {CUPTI_ACTIVITY_KIND_RUNTIME, true},
      {CUPTI_ACTIVITY_KIND_DRIVER, true},            {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, true},
      {CUPTI_ACTIVITY_KIND_MEMCPY2, false},          {CUPTI_ACTIVITY_KIND_OVERHEAD, false},
      {CUPTI_ACTIVITY_KIND_MEMORY2, false}};
  if (trace_sync_) kinds.push_back({CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, true});
  for (const Kind &kind : kinds) {
    result = api_.ActivityEnable(kind.kind);
    if (result == CUPTI_SUCCESS) {
      enabled_.push_back(kind.kind);
    } else if (kind.required) {
      Disable();
      return absl::FailedPreconditionError(
          absl::StrCat("CUPTI could not enable activity kind ", static_cast<int>(kind.kind), ": ",
                       SubscribeFailure(api_, result)));
    }
  }
  if (!trace_queries_) SkipStateQueries(api_);  // after the kinds: enabling one resets this
  return absl::OkStatus();
}

void CuptiGpuTracer::Disable() {
  for (CUpti_ActivityKind kind : enabled_) api_.ActivityDisable(kind);
  enabled_.clear();
  if (subscriber_ != nullptr) api_.Unsubscribe(subscriber_);
  subscriber_ = nullptr;
  g_correlation_api.store(nullptr, std::memory_order_release);
}

void CuptiGpuTracer::Flush(bool forced) {
  if (stopped_) return;
  api_.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void CuptiGpuTracer::Stop() {
  if (stopped_) return;
  Disable();
  // Everything CUPTI still holds comes back now, partly filled buffers included.
  api_.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  stopped_ = true;
}

uint8_t *CuptiGpuTracer::TakeBuffer(size_t *size) {
  uint8_t *buffer = pool_->Take();
  *size = buffer == nullptr ? 0 : pool_->buffer_bytes();
  return buffer;
}

void CuptiGpuTracer::OnBufferCompleted(uint8_t *buffer, size_t valid_bytes,
                                       uint64_t dropped_records) {
  GpuRecordBatch parsed;
  ParseActivityBuffer(api_, buffer, valid_bytes, parsed);  // calls CUPTI: no lock held
  parsed.records_dropped = dropped_records;
  {
    std::lock_guard<std::mutex> lock(records_mutex_);
    // Copied into the pending batch: its names outlive the buffer CUPTI reuses.
    AppendBatch(parsed, batch_);
  }
  if (buffer != nullptr && pool_->Owns(buffer)) pool_->Give(buffer);
}

void CuptiGpuTracer::MoveRecordsInto(GpuTrace &trace) {
  GpuRecordBatch taken;
  {
    std::lock_guard<std::mutex> lock(records_mutex_);
    std::swap(taken, batch_);
  }
  // A record proves the program's cuInit has returned: the driver is never asked while it may
  // still be initialising (under CUDA_INJECTION64_PATH the session starts inside cuInit).
  const bool driver_used = taken.RecordCount() > 0;
  AppendBatch(taken, trace);
  trace.losses.buffers_refused += pool_->TakeRefusals();
  if (driver_used) ListDevicesOnceInitialised(trace);
}

void CuptiGpuTracer::ListDevicesOnceInitialised(GpuTrace &trace) {
  if (driver_to_list_ == nullptr) return;
  absl::StatusOr<DeviceListing> listing = ListInitialisedDevices(*driver_to_list_);
  if (listing.ok() && !listing->driver_initialised) return;  // asked again at the next move
  driver_to_list_ = nullptr;
  // A driver that fails now failed the program's own cuInit too: its GPU work is whatever CUPTI
  // reports, on devices named by number only.
  if (listing.ok()) trace.devices = std::move(listing->devices);
}

}  // namespace tfprof
