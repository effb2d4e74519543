// The one convert/merge engine. prof_convert()/prof_merge() (C), tfprof.convert()/merge()
// (Python) and `tfprof convert`/`tfprof merge` (the command) all call it, so for the same inputs
// and options they write the same bytes. Every input format tfprof reads works, and every output
// format it writes (docs/cli.md, docs/api.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/formats/chrome/timeline_py_writer.h"
#include "runtime/convert/trace_merger.h"
#include "runtime/formats/format.h"
#include "runtime/common/progress_listener.h"

namespace tfprof {

struct ConvertOptions {
  // kTfprof: the layout tfprof's runtime writes (processes, threads, streams, steps, PyTorch
  // profiler categories, the "tfprof" header), in any output format. kTimeline: TensorFlow's
  // timeline.py layout (timeline_py_writer.h), Chrome trace JSON only; inputs that are not step
  // statistics are first written as step statistics (as .tfrecord output would be).
  enum class Layout { kTfprof, kTimeline };

  Layout layout = Layout::kTfprof;
  std::optional<Format> format;  // the output's; unset: from its path
  MergeAlignment align = MergeAlignment::kWallClock;  // merges, layout=tfprof
  // Merges, layout=tfprof, wall-clock alignment: the later inputs are more of the first input's
  // recording (TraceMerger's fold), as tfprof.trace(tensorflow=True) writes TensorFlow's profile
  // into the session's trace.
  bool fold = false;
  bool salvage = false;  // on damaged input, use what was read before the damage
  // A TensorBoard log directory output also gets the XPlane profile of TensorBoard's Profile tab.
  bool tensorboard_profile = true;
  TimelineOptions timeline;  // layout=timeline only
  bool timeline_options_given = false;  // show_dataflow, show_memory or rows was set
};

// Parses "key=value,..." (the C ABI's option string; "" gives the defaults): layout=tfprof|
// timeline, format=json|json.gz|pb|tfrecord|tensorboard|perfetto|xplane, align=wall|start,
// fold=on|off, salvage=on|off, tensorboard_profile=on|off, and
// for layout=timeline show_dataflow=on|off, show_memory=on|off, rows=threads|lanes. Errors
// (InvalidArgument) name the key, its offset and what it accepts.
absl::StatusOr<ConvertOptions> ParseConvertOptions(std::string_view text);

// Sets one option `key` to `value` (the keys and values ParseConvertOptions() takes). Errors:
// InvalidArgument saying what the value should be, without naming the key (the caller knows
// whether it was an option string's key or a command-line flag).
absl::Status ApplyConvertOption(std::string_view key, std::string_view value,
                                ConvertOptions *options);

// Where a conversion stopped.
enum class ConvertStage {
  kOptions,  // the options do not go together (InvalidArgument)
  kOutput,   // the output names no format (InvalidArgument) or is one of the inputs
             // (FailedPrecondition)
  kReading,  // an input: NotFound, Unavailable, InvalidArgument (not a trace), DataLoss (damage)
  kWriting,  // the output: Unavailable (I/O, naming the path), InvalidArgument
  kDone,
};

struct ConvertResult {
  absl::Status status;  // OK, or why it stopped at `stage` (ResourceExhausted: out of memory)
  ConvertStage stage = ConvertStage::kOptions;
  std::string output_path;         // the file written (the event file, for a log directory)
  std::string profile_path;        // a log directory's XPlane profile, when one was written
  // What the user should know, each a sentence naming its file: detail the output format cannot
  // hold, inputs aligned by their first event.
  std::vector<std::string> notes;
  // With salvage: for each damaged input, what was wrong; the output holds what was read before.
  std::vector<std::string> damage;
  // For each input that ends early (a writer killed mid-write), recovered to its last whole step
  // without salvage: CutWarning()'s line, saying what was kept and dropped.
  std::vector<std::string> cut_inputs;
};

// One input to `output`. `progress` may be null. The output is written under a temporary name
// and renamed into place, so a failure leaves nothing at `output`.
ConvertResult ConvertTrace(const std::string &input, const std::string &output,
                           const ConvertOptions &options, ProgressListener *progress);

// Several inputs on one timeline (trace_merger.h: each input a group of processes, aligned by
// wall-clock time or by first event) to `output`.
ConvertResult MergeTraces(const std::vector<std::string> &inputs, const std::string &output,
                          const ConvertOptions &options, ProgressListener *progress);

}  // namespace tfprof
