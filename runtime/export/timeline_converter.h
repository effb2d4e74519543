// TensorFlow step statistics -> Chrome trace JSON: what TensorFlow's timeline.py shows, streamed,
// and for any number of runs and input files merged onto one wall-clock timeline.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

struct ConvertOptions {
  // kThreads: one row per NodeExecStats.thread_id (named from DeviceStepStats.thread_names), an
  // extra row only where ops of one thread overlap without nesting; nanosecond fields used when
  // present. kLanes: timeline.py's rows exactly (greedy lanes in stored order, whole
  // microseconds), for comparing with it event for event.
  enum class Rows { kThreads, kLanes };

  bool show_dataflow = true;  // flow arrows from a tensor's producer to its consumers
  bool show_memory = false;   // tensor objects and per-allocator counters
  Rows rows = Rows::kThreads;
  bool salvage = false;  // on damaged input, still write every run read before the damage
};

// Parses "key=value,..." (prof_convert()'s option string; NULL and "" give the defaults). Errors
// name the key, its offset and the accepted keys or values.
absl::StatusOr<ConvertOptions> ParseConvertOptions(const char *text);

// Reads every input (a .pb RunMetadata or StepStats, a TFRecord file of RunMetadata, an event file
// or a log directory) run by run and writes one Chrome trace to `output` (.json or .json.gz),
// under a temporary name renamed into place at the end. Errors: InvalidArgument (no inputs, an
// output extension that is no Chrome trace), Unavailable (a file cannot be read or written),
// DataLoss (an input is damaged or holds no step statistics; the message names the file, the
// byte offset and the problem). With `salvage` the output is still written on DataLoss, holding
// every run read before the damage, and the DataLoss status says so.
absl::Status ConvertStepStatsToChromeTrace(const std::vector<std::string> &inputs,
                                           const std::string &output,
                                           const ConvertOptions &options);

}  // namespace tfprof
