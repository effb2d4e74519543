// A Trace in TensorFlow's formats, laid out as tfprof's runtime writes them
// (docs/tensorflow.md): one RunMetadata (.pb), a TFRecord file of one RunMetadata per step
// (.tfrecord), or a TensorBoard event file (file_version, a GraphDef of the host ops, one
// tagged_run_metadata per step tagged step_NNNNNN).
//
// Each step's record holds the activities whose start lies in the step (a step of the activity's
// own process first, else of any process: GPU work and the host's steps sit in different
// processes), with a node step_NNNNNN of type TrainingStep. Activities outside every step go to
// one more record, last, tagged outside_steps, which also carries the trace's losses (the node
// tfprof/losses) when the input reported them. Devices: host threads on
// /job:localhost/replica:0/task:K/device:CPU:0 (K = the process's place among the trace's host
// processes, 0 for a single-process trace), kernels and memsets on /device:GPU:N/stream:all and
// /device:GPU:N/stream:S, copies on /device:GPU:N/memcpy and /device:GPU:N/stream:S. Times are
// wall-clock (the trace's clock plus Trace::wall_offset_ns).
#pragma once

#include <cstddef>
#include <string>

#include "runtime/formats/format.h"
#include "runtime/model/trace.h"
#include "runtime/formats/counting_sink.h"

namespace tfprof {

// What the writer did that the caller should tell the user.
struct StepStatsReport {
  size_t gpu_annotations_skipped = 0;  // gpu_user_annotation spans: TensorFlow has no such node
};

StepStatsReport WriteStepStats(const Trace &trace, Format container,
                               CountingSink &out);

}  // namespace tfprof
