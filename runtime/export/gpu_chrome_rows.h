// The GPU part of the Chrome trace: one process per device with a row per stream (kernels,
// copies, memsets, per-step spans, synchronisations), the CUDA API calls on their host threads'
// rows, flow arrows from each launch to its GPU work, the device memory counter, and the
// top-level GPU metadata. Categories and argument names follow the PyTorch profiler (Kineto).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/export/export_context.h"
#include "runtime/export/output_sink.h"
#include "runtime/steps.h"
#include "runtime/session_log.h"

namespace tfprof {

// What the GPU rows share with the host rows already written.
struct HostRowLayout {
  const std::vector<int64_t> *track_tids = nullptr;        // the row tid of each track
  const std::vector<std::string> *quoted_names = nullptr;  // JSON-quoted host names by id
  int64_t next_sort_index = 0;  // the first thread sort index the host rows left free
};

// `"deviceProperties":[...],\n` for the top level when any device is known, else "".
std::string GpuDevicePropertiesJson(const GpuTrace &gpu);

// The `{"state":...,"reason":...,...}` object written as "gpu" inside the "tfprof" metadata.
std::string GpuSummaryJson(const GpuTrace &gpu);

// Streams every GPU event into `sink`, each preceded by ",\n": the caller has already written at
// least one event of the traceEvents array. `steps` is CollectSteps() of the same model.
void WriteGpuChromeRows(const SessionLog &model, const ExportContext &context,
                        const std::vector<StepInterval> &steps, const HostRowLayout &host,
                        OutputSink &sink);

}  // namespace tfprof
