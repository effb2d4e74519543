// A folder the PyTorch profiler's torch.profiler.tensorboard_trace_handler(DIR) wrote: one
// "<worker>.<ms>.pt.trace.json" (or .json.gz) per worker and per profiling window, and no
// TensorBoard event file. tfprof reads such a folder when it holds one trace; with several it
// names them, since each is a trace of its own (a rank, or another window).
#pragma once

#include <string>
#include <vector>

namespace tfprof {

// The PyTorch profiler traces directly in `dir` (names holding ".pt.trace" and ending ".json" or
// ".json.gz"), sorted by name; empty when there is none or the folder cannot be listed.
std::vector<std::string> PytorchTracesIn(const std::string &dir);

// What to say of a folder holding several: "DIR: holds N PyTorch profiler traces (a, b, ...): ..."
// naming them (at most five) and how to read one or merge them.
std::string SeveralPytorchTracesMessage(const std::string &dir,
                                        const std::vector<std::string> &traces);

}  // namespace tfprof
