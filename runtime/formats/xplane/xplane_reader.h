// Reads the profile data TensorFlow's and JAX's profilers save: an XSpace
// (logdir/plugins/profile/<run>/<host>.xplane.pb, the wire format of
// runtime/formats/proto/tfprof/tensorflow/xplane.proto) into the trace model.
//   - "/host:CPU" (and any other "/host:" plane with timelines): one host process, a thread per
//     line (TraceMe events, tf.data's Iterator:: events, Python tracer lines as Python
//     functions); events with a correlation_id stat are the CUDA/HIP launch calls.
//   - "/device:GPU:N": one GPU process, a stream per "Stream #S" line; kernels, copies and
//     memsets with their correlation id, launch shape (kernel_details), bytes and context.
//     The lines TensorFlow derives from those ("Steps", "TensorFlow Ops", "XLA Ops", ...) repeat
//     the same work and are not kept; counter lines are not kept either.
//   - other device planes (TPU, custom): their lines as annotation rows of their own process.
//   - steps: the program's step markers (a `_r` stat, as Keras' "train" trace and JAX's
//     StepTraceAnnotation set, or TensorFlow 2.2's "TraceContext"), else its returned
//     tf.function calls, else TensorFlow's own roots, else group_id (xplane_steps.h), numbered
//     by step_num (else iter_num) where those increase (Keras restarts step_num each epoch),
//     else by their order.
//   - time: each line's timestamp_ns plus the event's offset_ps; the "Task Environment" plane's
//     profile_start_time gives wall-clock time.
// Several files (the hosts of one profile run) load as one trace, each host its own recording
// (Process::group), aligned on their wall-clock starts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "runtime/common/progress_listener.h"
#include "runtime/model/trace.h"

namespace tfprof {

// Whether the first bytes of a file are those of an XSpace: its first plane's id and name, where
// the name is one TensorFlow's, JAX's or XLA's profilers give planes.
bool LooksLikeXSpace(std::string_view head);

// The XPlane files of a profile directory: the *.xplane.pb in `directory` itself, else those of
// the newest run (the run folders are named by their time) under `directory`/plugins/profile/,
// sorted by name. Empty when there are none.
std::vector<std::string> XPlaneFilesIn(const std::string &directory);

// Reads `files` (each an XSpace, one host) into `*trace`. Errors as LoadTrace's: Unavailable for a
// file that cannot be read, InvalidArgument "PATH: not a trace: ..." for content that is no
// XSpace, DataLoss "PATH: byte N: ..." for damage, with `*trace` then holding what was read
// before it. `progress` may be null.
absl::Status ReadXPlaneFiles(const std::vector<std::string> &files, ProgressListener *progress,
                             Trace *trace);

}  // namespace tfprof
