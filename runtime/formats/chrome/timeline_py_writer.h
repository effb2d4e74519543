// layout=timeline of the convert engine: TensorFlow step statistics drawn as TensorFlow's
// timeline.py draws them (per device a "<device> Compute" and a "<device> Tensors" process, op
// types as names, DataFlow arrows, tensor objects and allocator counters), streamed, for any
// number of runs and inputs on one wall-clock timeline.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/common/output_sink.h"
#include "runtime/common/progress_listener.h"

namespace tfprof {

struct TimelineOptions {
  // kThreads: one row per NodeExecStats.thread_id (named from DeviceStepStats.thread_names), an
  // extra row only where ops of one thread overlap without nesting; nanosecond fields used when
  // present. kLanes: timeline.py's rows exactly (greedy lanes in stored order, whole
  // microseconds), for comparing with it event for event.
  enum class Rows { kThreads, kLanes };

  bool show_dataflow = true;  // flow arrows from a tensor's producer to its consumers
  bool show_memory = false;   // tensor objects and per-allocator counters
  Rows rows = Rows::kThreads;
};

// One input: `path` as the user named it (labels, the "converted_from" summary, messages);
// `step_statistics`, for an input in another format, the TFRecord bytes the engine encoded from it
// in memory (empty: the step statistics are read from `path`); `format_name` what the input was
// ("": the format its step statistics are read in).
struct TimelineInput {
  std::string path;
  std::string step_statistics;
  std::string format_name;
};

// Writes every run of every input to `sink` as Chrome trace JSON, each input's processes named
// after its file when there are several. Errors: the reader's (Unavailable, DataLoss naming the
// file, the byte offset and the problem). With `salvage`, DataLoss is no error: the runs read
// before the damage are written and the message goes to `damage`. An input that ends early (its
// last record cut short by a writer killed mid-write) is no error either: its whole runs are
// written and a warning saying so goes to `cut_inputs` (when given).
absl::Status WriteTimelineLayout(const std::vector<TimelineInput> &inputs,
                                 const TimelineOptions &options, bool salvage, OutputSink &sink,
                                 ProgressListener *progress, std::vector<std::string> *damage,
                                 std::vector<std::string> *cut_inputs = nullptr);

}  // namespace tfprof
