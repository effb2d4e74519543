// GPU tracing through CUPTI's activity API: enables the activity kinds, lends CUPTI buffers from
// a pool allocated up front, parses each completed buffer with libcupti's iterator, and keeps the
// records until the profiler moves them into the session's trace.
//
// Locks: `records_mutex_` is a leaf. The buffer callbacks call into CUPTI (parsing, dropped-record
// counts) with no lock of tfprof's held, and take the lock only to append parsed records, so
// CUPTI's own locks and ours are never taken in opposite orders (Kineto's deadlock, kineto.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "runtime/gpu/cupti/activity_buffer_pool.h"
#include "runtime/gpu/cupti/activity_parser.h"
#include "runtime/gpu/cupti/cupti_library.h"
#include "runtime/gpu/gpu_tracer.h"

namespace tfprof {

class CuptiGpuTracer : public GpuTracer {
 public:
  // `driver_to_list`: a driver the program has not initialised yet; the tracer lists its devices
  // into the trace once it is (null: the devices are known already).
  CuptiGpuTracer(const CuptiApi &api, const GpuOptions &options,
                 const CudaDriverApi *driver_to_list = nullptr);
  ~CuptiGpuTracer() override;

  // Subscribes, registers the callbacks and the timestamp clock and enables the activity kinds
  // (synchronisation with cuda_sync=on; state queries' API records only with cuda_queries=on).
  // Errors name the cause (another profiler subscribed, insufficient privileges, ...).
  absl::Status Enable();

  void Flush(bool forced) override;
  void MoveRecordsInto(GpuTrace &trace) override;
  void Stop() override;

  // What CUPTI's buffer callbacks do, callable directly so tests can feed buffers built from the
  // real CUpti_Activity* structs through the same path. `buffer` must come from TakeBuffer().
  uint8_t *TakeBuffer(size_t *size);
  void OnBufferCompleted(uint8_t *buffer, size_t valid_bytes, uint64_t dropped_records);

 private:
  void Disable();
  // Lists the devices into `trace` once the program has initialised the driver. Called only after
  // CUPTI delivered a record, never while the program may still be inside cuInit.
  void ListDevicesOnceInitialised(GpuTrace &trace);

  const CuptiApi &api_;
  const bool trace_sync_;
  const bool trace_queries_;
  const CudaDriverApi *driver_to_list_;  // null once the devices are listed (or never to be)
  // Heap-allocated so a pool CUPTI still holds buffers of can be left alive (see the destructor).
  std::unique_ptr<ActivityBufferPool> pool_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_;
  bool stopped_ = false;

  std::mutex records_mutex_;  // leaf: guards batch_
  GpuRecordBatch batch_;
};

}  // namespace tfprof
