#include "tools/tfprof/run_arguments.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "tools/tfprof/option_word.h"

namespace tfprof::cli {

namespace {

constexpr std::array<std::string_view, 5> kLogLevels = {"off", "error", "warning", "info", "debug"};

// An option that takes a value: the member it sets, and what an empty value lacks ("" when it is
// valid or checked otherwise).
struct ValuedOption {
  std::string_view name;
  std::optional<std::string> RunArguments::*member;
  std::string_view empty_problem;
};

// --signal-deadline and --frameworks are checked where they are used: by the preload library,
// which names the variable and what it accepts, and by the Python side, which knows the names.
constexpr std::array<ValuedOption, 7> kValuedOptions = {{
    {"--output", &RunArguments::output, " needs a path"},
    {"--options", &RunArguments::options, ""},  // "" is valid: the runtime's defaults
    {"--step-marker", &RunArguments::step_marker, " needs glob patterns or 'none'"},
    {"--log-level", &RunArguments::log_level, ""},  // one of kLogLevels
    {"--signal-deadline", &RunArguments::signal_deadline, " needs a number of seconds"},
    {"--preload", &RunArguments::preload, " needs a path"},
    {"--frameworks", &RunArguments::frameworks, " needs 'auto', 'off' or framework names"},
}};

// Stores `option`, the word at words[*index], taking its value from the next word where it needs
// one (advancing *index). Returns what is wrong with it, or "" when it is fine.
std::string TakeRunOption(std::span<const std::string> words, size_t *index, OptionWord &option,
                          RunArguments &out) {
  const std::string name(option.name);
  if (name == "-h" || name == "--help" || name == "--no-follow-children" || name == "--on-demand") {
    if (option.value) return name + " takes no value";
    (name == "--no-follow-children" ? out.no_follow_children
     : name == "--on-demand"        ? out.on_demand
                                    : out.help) = true;
    return "";
  }
  const std::string_view long_name = name == "-o" ? "--output" : option.name;
  const auto valued = std::find_if(
      kValuedOptions.begin(), kValuedOptions.end(),
      [&](const ValuedOption &known) { return known.name == long_name; });
  if (valued == kValuedOptions.end()) return UnknownOption(option);
  // A value after '=' (or glued to -o), else the next word, unless that ends the options.
  if (!option.value && *index + 1 < words.size() && words[*index + 1] == "--") {
    return name + " needs a value";
  }
  if (!TakeOptionValue(words, index, &option)) return name + " needs a value";
  const std::string &value = *option.value;
  if (valued->member == &RunArguments::log_level &&
      std::find(kLogLevels.begin(), kLogLevels.end(), value) == kLogLevels.end()) {
    return name + " '" + value + "' is not one of off, error, warning, info, debug";
  }
  if (value.empty() && !valued->empty_problem.empty()) {
    return name + std::string(valued->empty_problem);
  }
  out.*(valued->member) = value;
  return "";
}

}  // namespace

ParsedRunArguments ParseRunArguments(std::span<const std::string> words) {
  ParsedRunArguments parsed;
  RunArguments &out = parsed.arguments;
  size_t index = 0;
  for (; index < words.size(); ++index) {
    const std::string_view word = words[index];
    if (word == "--") {
      ++index;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;  // the command starts here ("-" included)
    OptionWord option = SplitOptionWord(word);
    parsed.error = TakeRunOption(words, &index, option, out);
    if (!parsed.error.empty() || out.help) return parsed;
  }
  out.command.assign(words.begin() + static_cast<std::ptrdiff_t>(index), words.end());
  if (out.on_demand && out.output) {
    // Said, not ignored: a user who expects a trace at exit would otherwise find none.
    parsed.error = "--output does not go with --on-demand: the program writes no trace of its "
                   "own; each `tfprof capture PID -o PATH` names where its capture goes";
  } else if (out.command.empty()) {
    parsed.error = "no command given (tfprof run [OPTIONS] -- COMMAND [ARGS...])";
  }
  return parsed;
}

const char *RunUsage() {
  return R"(usage: tfprof run [OPTIONS] [--] COMMAND [ARGS...]

Runs COMMAND with libtfprof_preload.so preloaded: its CUDA activity, NVTX ranges, threads and
steps are traced without changing the program, and written when it exits. The exit status (or
the signal that ended it) is COMMAND's own.

Options (each sets the environment variable the preload library reads):
  -o, --output PATH        where the trace goes: .json, .json.gz, .pb, .tfrecord, .pftrace, or a
                           directory ending in '/' for TensorBoard; %p is the process id, %r
                           the rank; relative to the current directory (TFPROF_OUTPUT;
                           default tfprof-%p.json)
      --options STR        runtime options, key=value,... as prof_start() takes them
                           (TFPROF_OPTIONS)
      --step-marker PATTERNS
                           comma-separated glob patterns of NVTX range names that mark
                           steps, or 'none' (TFPROF_STEP_MARKER)
      --log-level LEVEL    off, error, warning, info or debug (TFPROF_LOG_LEVEL; default info)
      --no-follow-children do not trace the processes COMMAND starts
                           (TFPROF_FOLLOW_CHILDREN=0)
      --on-demand          record nothing until asked: COMMAND (and each process it starts)
                           waits for `tfprof capture PID`, which records whole steps and
                           writes them where its own -o says; no trace at exit, so -o is an
                           error here (TFPROF_ON_DEMAND=1; docs/capture.md)
      --signal-deadline SECONDS
                           when SIGINT, SIGTERM, SIGHUP or abort() ends COMMAND, how long
                           writing the trace may delay its end (TFPROF_SIGNAL_DEADLINE;
                           default 10; 0: end at once without the trace)
      --frameworks LIST    Python programs: record the steps, input waits and layers of
                           PyTorch, Keras and JAX without code changes: 'auto' (default),
                           'off', or names ('torch', 'keras', 'jax') (TFPROF_FRAMEWORKS;
                           docs/pytorch.md, docs/keras.md)
      --preload PATH       the preload library to use (default: $TFPROF_PRELOAD, else the one
                           installed with this tfprof)
  -h, --help               print this help

'--' may be left out when COMMAND does not start with '-'. Unset options keep the values
already in the environment.

Exit status: COMMAND's; 2 for a usage error, a missing preload library or an output directory
that does not exist; 126 when COMMAND cannot be executed; 127 when it is not found.

Examples:
  tfprof run -o trace.json -- python train.py --epochs 1
  tfprof run --on-demand -- python train.py &      # then, at any time:
  tfprof capture $! --steps 10 -o slow-steps.json
)";
}

}  // namespace tfprof::cli
