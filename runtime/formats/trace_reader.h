// Reads any trace file tfprof understands into a Trace, detecting the format from the
// content (not the name): Chrome trace JSON (plain or gzip; tfprof's own, the PyTorch profiler's,
// any other), a Perfetto protobuf trace (.pftrace; tfprof's, the Perfetto SDK's, any TrackEvent
// trace), a TensorFlow RunMetadata or StepStats (.pb), a TFRecord file of RunMetadata, a
// TensorBoard event file or a log directory of them. The file is read in a single streaming
// pass; no JSON tree is built.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "runtime/common/progress_listener.h"
#include "runtime/model/trace.h"

namespace tfprof {

// Errors (the message always starts with the path):
//   NotFound        the path does not exist
//   Unavailable     it cannot be opened or read (permissions, I/O error, a directory with no
//                   event file)
//   InvalidArgument it is in no format tfprof reads ("PATH: not a trace: ...")
//   DataLoss        it is damaged: "PATH: byte OFFSET: PROBLEM"
// A file that simply ends early (a writer killed mid-write: the JSON not closed, a gzip stream, a
// TFRecord record or a Perfetto packet cut short) is no error: the trace holds what was read
// before the cut, less the steps the cut may have left partial, and Trace::cut says so
// (runtime/model/cut_recovery.h; CutWarning() words it).
// `progress` may be null; it is updated with the bytes read so far.
struct LoadOptions {
  // On damage (DataLoss), return what was read before it instead of the error, with
  // Trace::damage set to the error's message: a trace cut short by a killed process still
  // has its first steps.
  bool salvage = false;
  ProgressListener *progress = nullptr;
};

absl::StatusOr<Trace> LoadTrace(const std::string &path, const LoadOptions &options);

// Whether LoadTrace() would read `path` as TensorFlow step statistics (RunMetadata, StepStats,
// TFRecord, a TensorBoard log directory): true unless its first bytes say Chrome JSON, gzip,
// Perfetto or XPlane. True for unreadable paths too, so the step statistics reader names the
// problem.
bool HoldsStepStatistics(const std::string &path);

}  // namespace tfprof
