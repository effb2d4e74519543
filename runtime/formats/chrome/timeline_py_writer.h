// layout=timeline of the convert engine: TensorFlow step statistics drawn as TensorFlow's
// timeline.py draws them (per device a "<device> Compute" and a "<device> Tensors" process, op
// types as names, DataFlow arrows, tensor objects and allocator counters), streamed, for any
// number of runs and inputs on one wall-clock timeline.
#pragma once

#include <functional>
#include <string>
#include <string_view>
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

// One input: `path` as the user named it (labels, the "converted_from" summary, messages). An
// input that is no step statistics comes with `encode`, called when its turn comes (so one input's
// trace model is in memory at a time): it loads the input, sets `*format_name` (what the input
// was), and hands its step statistics, encoded as a .tfrecord's records, to `records`, a chunk of
// whole records at a time. Its errors fail the layout (they are the loader's: salvaging is its).
// Without `encode`, the step statistics are read from `path`.
struct TimelineInput {
  using Records = std::function<void(std::string_view records)>;
  std::string path;
  std::function<absl::Status(std::string *format_name, const Records &records)> encode;
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
