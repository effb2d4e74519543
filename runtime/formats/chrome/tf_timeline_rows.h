// TensorFlow's timeline.py Chrome traces (`Timeline(step_stats).generate_chrome_trace_format()`,
// TF 1.x and 2.x, and tfprof's layout=timeline) turned into the trace model's rows. timeline.py
// draws every device of a StepStats as a process "<device> Compute" (plus "<device> Tensors" for
// tensor objects and one "Allocators" for memory counters), each node as an "Op" event named by
// its op type, with args {"name": node, "op": type}. TensorFlow's GPU tracer files every kernel
// twice, on "/gpu:N/stream:all" and on "/gpu:N/stream:S", and every copy twice, on "/gpu:N/memcpy"
// and on "/gpu:N/stream:S" (TF >= 1.4 spells the GPU "/device:GPU:N").
//
// What the rows become:
// - An executor device ("/job:localhost/replica:0/task:0/cpu:0", ".../gpu:0", ".../device:GPU:0"):
//   host ops on its rows, as the file has them; a GPU's executor device holds the launch side.
// - The stream devices of one GPU: one process "GPU N" with one row per stream ("stream S"). Their
//   events are copies when "memcpy" repeats them (or the device holds copies only, or the op is
//   named Memcpy*), memsets when named Memset*, kernels otherwise; named as timeline.py shows them
//   (the op type: TensorFlow 1 recorded no kernel names), with the node as their op.
// - "stream:all" and "memcpy" repeats are dropped. One with no twin on a stream (a file edited by
//   hand) is kept, on a "stream all" or "memcpy" row of its GPU.
// - Other GPU tracer devices (".../sync"), and events of a GPU's devices that are no "Op" (the
//   step rows tfprof's layout=timeline draws on every device): GPU annotations, never GPU work.
// - Ops are named as the StepStats reader names nodes: "node:Type" (the type left out when it is
//   the node's name or "unknown"), so a run reads the same from its .pb and from its timeline.
//   tfprof's own nodes, which a timeline of tfprof's step statistics shows as ops, are read as
//   the StepStats reader reads them: "step_NNNNNN" of type TrainingStep is step NNNNNN,
//   "tfprof/losses" no op (its counts are not read back). A step drawn on several devices is
//   kept once, on the host.
// Tensor objects and Allocators counters need nothing here: the Chrome reader counts objects and
// keeps counters for every trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof {

// An "Op" event the Chrome reader kept as an activity, with its node name ("node:Type", above).
struct TimelineOp {
  uint32_t activity = 0;  // Trace::activities, in the order the reader appended them
  uint32_t node = 0;      // Trace::names
};

// "node:Type" from an "Op" event's args.
std::string TimelineNodeName(std::string_view node, std::string_view type);

// When some of `ops` lie on timeline.py's device processes, rewrites `trace`'s processes, rows
// and activities as described above and returns true (then processes, tracks and activities are
// renumbered); false, touching nothing, for any other trace. Processes merged by a tfprof merge
// ("LABEL: /gpu:0/stream:7 Compute") keep their inputs apart: "LABEL: GPU 0".
bool ApplyTimelineRows(const std::vector<TimelineOp> &ops, Trace *trace);

}  // namespace tfprof
