// What `tfprof convert` and `tfprof merge` share: the convert engine's options as flags, and
// running the engine (runtime/convert/convert.h) with progress, warnings, notes and exit codes.
// The engine itself is the library's, the same one prof_convert()/prof_merge() run.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/convert/convert.h"
#include "tools/tfprof/option_word.h"

namespace tfprof::cli {

// The engine's options as flags: --format NAME, --layout tfprof|timeline, --salvage, --rows
// threads|lanes, --show-memory, --no-dataflow, and with `merging` --align wall|start. Returns
// nullopt when `option` is none of them, else "" or the usage problem ("--rows 'x' is not one of
// threads, lanes").
std::optional<std::string> TakeConversionOption(const OptionWord &option,
                                                const std::function<bool()> &take_value,
                                                bool merging, ConvertOptions *options);

// Runs the engine on `inputs` (merging: MergeTraces, else ConvertTrace) and reports as `tfprof
// command` does: progress on a terminal, a warning per salvaged damage, a note per lost detail.
// Returns kExitOk, kExitUsage (options that do not go together, an output that names no format
// or is an input), kExitInputError or kExitOutputError.
int RunConversion(std::string_view command, const std::vector<std::string> &inputs,
                  const std::string &output, const ConvertOptions &options, bool merging);

}  // namespace tfprof::cli
