// Device names, node names and timeline labels in the forms TensorFlow's own tracers write, so
// TensorFlow's timeline.py and TensorBoard read tfprof's StepStats the way they read TensorFlow's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/model/trace.h"

namespace tfprof {

// The device host ops run on, as TensorFlow's executor names it. TensorBoard's graph view only
// offers devices ending in `/device:<TYPE>:<N>`, which this does.
inline constexpr std::string_view kTfHostDevice = "/job:localhost/replica:0/task:0/device:CPU:0";

// GPU devices as TensorFlow's CUPTI tracer writes them: every kernel also on `stream:all`,
// copies also on `memcpy`.
std::string GpuAllStreamsDevice(int gpu);
std::string GpuStreamDevice(int gpu, int64_t stream);
std::string GpuMemcpyDevice(int gpu);

// A host op's name and type. A span named like TensorFlow's annotations, "name:Type" (Type an
// identifier), splits there; any other span name is both the node name and the type, so
// timeline.py shows it under the name it was recorded with.
struct OpName {
  std::string_view name;
  std::string_view type;
};
OpName SplitOpName(std::string_view span_name);

// "name = Type(in1, in2)": TensorFlow's executor's label, which timeline.py parses for host ops.
std::string HostOpLabel(std::string_view name, std::string_view type, std::string_view inputs = {});
// The same appended to `out` (the StepStats writer reuses one buffer for every span's).
void AppendHostOpLabel(std::string_view name, std::string_view type, std::string_view inputs,
                       std::string &out);

// "<kernel> regs:R shm:S grid:x,y,z block:x,y,z@@<op name>#": timeline.py reads the op between
// "@@" and '#' and splits it on ':' into name and type. Without an op, the label ends before "@@".
struct KernelShape {
  int32_t grid[3] = {1, 1, 1};
  int32_t block[3] = {1, 1, 1};
  int32_t registers = 0;
  int32_t shared_memory = 0;
};
std::string KernelLabel(std::string_view kernel, const KernelShape &shape, std::string_view op);
// The same appended to `out`.
void AppendKernelLabel(std::string_view kernel, const KernelShape &shape, std::string_view op,
                       std::string &out);

// "<kind> bytes:N@@<op name>#" (kind such as "MemcpyHtoD"); the op part is left out when empty.
std::string MemcpyLabel(std::string_view kind, uint64_t bytes, std::string_view op);

// "step_000042": the tag of a step's record in event files and the node name of its step node.
std::string StepTag(int64_t step);

// The op type of the node tfprof writes for each step, which its readers recognise.
inline constexpr std::string_view kStepOpType = "TrainingStep";

// The thread id and name of tfprof's losses node (tfprof/losses): no OS thread has id 0.
inline constexpr uint32_t kLossesThreadId = 0;
inline constexpr char kLossesThreadName[] = "tfprof";

// The node that carries a trace's losses and GPU tracing state in every TensorFlow-format
// output: on the host device, at the trace's end, zero long, thread kLossesThreadId, labelled
// "tfprof/losses = Losses(dropped_events=N, unmatched_span_ends=N, unmatched_step_ends=N,
// gpu_records_dropped=N, gpu_buffers_refused=N, gpu_records_unparsed=N, gpu_late_records=N,
// gpu_state=active, memory_dropped_events=N, discarded_events=N, unreported_inputs=N)"
// (gpu_state only when known, unreported_inputs only when a merge had some), which timeline.py
// shows as an op of type Losses. A trace whose source recorded no losses says so:
// "tfprof/losses = Losses(recorded=false)". Every outside_steps record carries one (so a reader
// never takes that record for a run of its own), and the file's last record has the final one.
inline constexpr char kLossesNodeName[] = "tfprof/losses";
std::string LossesLabel(const TraceLosses &losses, std::string_view gpu_state);

// Reads LossesLabel()'s counts (and gpu_state, when `gpu_state` is not null) back; counts it does
// not name stay as they were. Sets losses->reported (false for "recorded=false").
void ParseLossesLabel(std::string_view label, TraceLosses *losses, std::string *gpu_state);

// An instant (a point in time on a host thread: Chrome's "ph":"i") as a node: zero-length, named
// as the instant is (whole, "name:Type" not split), with timeline_label "NAME = tfprof/instant()".
// TensorFlow's formats have no instants; the readers take such a node back as one.
inline constexpr char kInstantOpType[] = "tfprof/instant";

// The tag of the record of what fits in no step, in event files.
inline constexpr char kOutsideStepsTag[] = "outside_steps";

// The version string TensorBoard expects first in every event file.
inline constexpr char kEventFileVersion[] = "brain.Event:2";

}  // namespace tfprof
