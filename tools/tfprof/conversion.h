// What `tfprof convert` and `tfprof merge` share: their command line (the convert engine's
// options as flags), and running the engine (runtime/convert/convert.h) with progress,
// warnings, notes and exit codes.
// The engine itself is the library's, the same one prof_convert()/prof_merge() run.
#pragma once

#include <span>
#include <string>

namespace tfprof::cli {

// Runs `tfprof convert` (one input) or, `merging`, `tfprof merge` with the words after the
// command's name: options anywhere, -o OUT, the engine's options as flags (--format NAME, --layout
// tfprof|timeline, --salvage, --rows threads|lanes, --show-memory, --no-dataflow; merging also
// --align wall|start and --fold), -h/--help printing `usage`. Reports as the command: progress on
// a terminal, a warning per salvaged damage, a note per lost detail. Returns kExitOk, kExitUsage
// (a bad command line, options that do not go together, an output that names no format or is
// an input), kExitInputError or kExitOutputError.
int ConversionCommand(std::span<const std::string> words, bool merging, const char *usage);

}  // namespace tfprof::cli
