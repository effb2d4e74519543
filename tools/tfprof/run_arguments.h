// `tfprof run`'s command line: options that become TFPROF_* environment variables, then the
// command to run.

#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tfprof::cli {

struct RunArguments {
  bool help = false;                        // -h/--help: print RunUsage() and run nothing
  std::optional<std::string> output;        // -o/--output      -> TFPROF_OUTPUT
  std::optional<std::string> options;       // --options        -> TFPROF_OPTIONS
  std::optional<std::string> step_marker;   // --step-marker    -> TFPROF_STEP_MARKER
  std::optional<std::string> log_level;     // --log-level      -> TFPROF_LOG_LEVEL
  bool no_follow_children = false;          // --no-follow-children -> TFPROF_FOLLOW_CHILDREN=0
  bool on_demand = false;                   // --on-demand      -> TFPROF_ON_DEMAND=1
  std::optional<std::string> signal_deadline;  // --signal-deadline -> TFPROF_SIGNAL_DEADLINE
  std::optional<std::string> preload;       // --preload: the library to preload
  std::optional<std::string> frameworks;    // --frameworks     -> TFPROF_FRAMEWORKS
  std::vector<std::string> command;         // the program and its arguments
};

struct ParsedRunArguments {
  RunArguments arguments;
  std::string error;  // empty on success, else what is wrong with the command line
};

// Parses the words after `run`. Options come first; `--` or the first word that is not an option
// starts the command, and every word from there on belongs to it.
ParsedRunArguments ParseRunArguments(std::span<const std::string> words);

// The text `tfprof run --help` prints.
const char *RunUsage();

}  // namespace tfprof::cli
