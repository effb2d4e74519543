// Reads TensorFlow step statistics (a binary RunMetadata or StepStats, a TFRecord file of
// RunMetadata, TensorBoard event files) into a Trace, run by run through the runtime's
// StepStatsReader. Devices become rows the way TensorFlow names them: host devices
// (".../device:CPU:0") give one row per thread, the GPU tracer's ".../device:GPU:N/stream:S" one
// row per stream, ".../memcpy" the copies; "stream:all" and "memcpy" are skipped where per-stream
// devices repeat their work. TensorFlow's times are Unix-epoch times (wall_offset_ns = 0).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "runtime/common/progress_listener.h"
#include "runtime/model/trace.h"

namespace tfprof {

// Reads `trace->path` (a file or a log directory) into `*trace`. Errors as LoadTrace's
// (trace_loader.h): NotFound/Unavailable for files that cannot be read, InvalidArgument
// "PATH: not a trace: ..." for content in no TensorFlow format, DataLoss "PATH: byte N: ..." for
// damage, with `*trace` then holding every run read before it. `progress` may be null.
absl::Status ReadStepStatsTrace(ProgressListener *progress, Trace *trace);

// Where a TensorFlow device's work goes. Exposed for tests.
struct TfDevice {
  enum Kind : uint8_t {
    kHost,        // an executor device (CPU, or a GPU's host side): threads
    kGpuStream,   // ".../stream:S" (also "stream#S"): one CUDA stream
    kGpuAll,      // ".../stream:all": every stream's kernels again
    kGpuMemcpy,   // ".../memcpy": every copy again
    kGpuOther,    // ".../sync" and other tracer rows: not kept
  };
  Kind kind = kHost;
  int32_t gpu = -1;       // the N of "GPU:N" / "gpu:N" for the GPU tracer's devices
  int64_t stream = -1;    // kGpuStream
  bool copies = false;    // a per-stream device of copies only (TF2's "stream:7<MemcpyH2D>")
};
TfDevice ClassifyTfDevice(std::string_view device);

}  // namespace tfprof
