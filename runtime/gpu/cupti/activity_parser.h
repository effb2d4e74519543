// Reads one completed CUPTI activity buffer with libcupti's own iterator
// (cuptiActivityGetNextRecord) and turns each record into tfprof's GPU records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/gpu/cupti/cupti_library.h"
#include "runtime/gpu/gpu_trace.h"
#include "runtime/storage/name_table.h"

namespace tfprof {

// The records of one or more buffers, before they join the session's GpuTrace. Names are ids in
// this batch's own table; AppendBatch() re-interns them.
struct GpuRecordBatch {
  NameTable names;
  std::vector<GpuActivity> activities;
  std::vector<GpuApiCall> api_calls;
  std::vector<GpuExternalCorrelation> external_correlations;
  std::vector<GpuSync> syncs;
  std::vector<GpuOverhead> overheads;
  std::vector<GpuMemoryChange> memory_changes;
  uint64_t records_unparsed = 0;  // kinds tfprof does not read
  uint64_t records_dropped = 0;   // what CUPTI reported dropped when it handed the buffers over

  size_t RecordCount() const {
    return activities.size() + api_calls.size() + external_correlations.size() + syncs.size() +
           overheads.size() + memory_changes.size();
  }
};

// Appends every record of `buffer[0, valid_bytes)` to `batch`. Reads only; the caller still owns
// the buffer. Holds no lock of tfprof's (it calls into libcupti).
void ParseActivityBuffer(const CuptiApi &api, uint8_t *buffer, size_t valid_bytes,
                         GpuRecordBatch &batch);

// Copies a batch's records (and its loss counts) into the session's trace or into another
// batch, re-interning names into the target's table.
void AppendBatch(const GpuRecordBatch &batch, GpuTrace &trace);
void AppendBatch(const GpuRecordBatch &batch, GpuRecordBatch &into);

// "cudaLaunchKernel" from CUPTI's "cudaLaunchKernel_v7000": the version suffix is dropped.
std::string_view ApiFunctionName(std::string_view cupti_name);

// Whether an API function queues work on a device (a launch, copy, memset or graph launch), so
// its GPU activity should link back to it.
bool LaunchesGpuWork(std::string_view function);

}  // namespace tfprof
