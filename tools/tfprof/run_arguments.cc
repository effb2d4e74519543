#include "tools/tfprof/run_arguments.h"

#include <array>
#include <string_view>

namespace tfprof::cli {

namespace {

constexpr std::array<std::string_view, 5> kLogLevels = {"off", "error", "warning", "info", "debug"};

enum class Option {
  kHelp, kOutput, kOptions, kStepMarker, kLogLevel, kNoFollowChildren, kSignalDeadline, kPreload,
  kFrameworks
};

struct OptionSpelling {
  std::string_view long_name;  // without the leading "--"
  char short_name;             // '\0' when there is none
  Option option;
  bool takes_value;
};

constexpr std::array<OptionSpelling, 9> kOptionSpellings = {{
    {"help", 'h', Option::kHelp, false},
    {"output", 'o', Option::kOutput, true},
    {"options", '\0', Option::kOptions, true},
    {"step-marker", '\0', Option::kStepMarker, true},
    {"log-level", '\0', Option::kLogLevel, true},
    {"no-follow-children", '\0', Option::kNoFollowChildren, false},
    {"signal-deadline", '\0', Option::kSignalDeadline, true},
    {"preload", '\0', Option::kPreload, true},
    {"frameworks", '\0', Option::kFrameworks, true},
}};

const OptionSpelling *FindLong(std::string_view name) {
  for (const OptionSpelling &spelling : kOptionSpellings) {
    if (spelling.long_name == name) return &spelling;
  }
  return nullptr;
}

const OptionSpelling *FindShort(char name) {
  for (const OptionSpelling &spelling : kOptionSpellings) {
    if (spelling.short_name != '\0' && spelling.short_name == name) return &spelling;
  }
  return nullptr;
}

bool IsLogLevel(std::string_view value) {
  for (std::string_view level : kLogLevels) {
    if (level == value) return true;
  }
  return false;
}

// Stores one option's value; returns what is wrong with it, or "" when it is fine.
std::string Apply(Option option, std::string_view spelled, std::string value, RunArguments &out) {
  const std::string name(spelled);
  switch (option) {
    case Option::kHelp:
      out.help = true;
      return "";
    case Option::kNoFollowChildren:
      out.no_follow_children = true;
      return "";
    case Option::kOptions:
      out.options = std::move(value);  // "" is valid: the runtime's defaults
      return "";
    case Option::kOutput:
      if (value.empty()) return name + " needs a path";
      out.output = std::move(value);
      return "";
    case Option::kFrameworks:
      if (value.empty()) return name + " needs 'auto', 'off' or framework names";
      out.frameworks = std::move(value);  // checked by the Python side, which knows the names
      return "";
    case Option::kStepMarker:
      if (value.empty()) return name + " needs glob patterns or 'none'";
      out.step_marker = std::move(value);
      return "";
    case Option::kLogLevel:
      if (!IsLogLevel(value)) {
        return name + " '" + value + "' is not one of off, error, warning, info, debug";
      }
      out.log_level = std::move(value);
      return "";
    case Option::kSignalDeadline:
      // Checked by the preload library, which names the variable and what it accepts.
      if (value.empty()) return name + " needs a number of seconds";
      out.signal_deadline = std::move(value);
      return "";
    case Option::kPreload:
      if (value.empty()) return name + " needs a path";
      out.preload = std::move(value);
      return "";
  }
  return "";
}

}  // namespace

ParsedRunArguments ParseRunArguments(std::span<const std::string> words) {
  ParsedRunArguments parsed;
  RunArguments &out = parsed.arguments;
  size_t index = 0;
  // The value of an option that takes one: after '=' (or glued to a short option), else the next
  // word. Sets `error` and returns nullopt when there is none.
  auto take_value = [&](std::string_view spelled,
                        std::optional<std::string> inline_value) -> std::optional<std::string> {
    if (inline_value) return inline_value;
    if (index + 1 >= words.size() || words[index + 1] == "--") {
      parsed.error = std::string(spelled) + " needs a value";
      return std::nullopt;
    }
    return words[++index];
  };
  for (; index < words.size(); ++index) {
    const std::string_view word = words[index];
    if (word == "--") {
      ++index;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;  // the command starts here ("-" included)

    const OptionSpelling *spelling = nullptr;
    std::string_view spelled;
    std::optional<std::string> inline_value;
    if (word.starts_with("--")) {
      const size_t equals = word.find('=');
      spelled = word.substr(0, equals);
      spelling = FindLong(spelled.substr(2));
      if (equals != std::string_view::npos) inline_value = std::string(word.substr(equals + 1));
    } else {
      spelled = word.substr(0, 2);
      spelling = FindShort(word[1]);
      if (word.size() > 2) inline_value = std::string(word.substr(2));
    }
    if (spelling == nullptr) {
      parsed.error = "unknown option '" + std::string(spelled) + "'";
      return parsed;
    }
    std::string value;
    if (spelling->takes_value) {
      std::optional<std::string> taken = take_value(spelled, std::move(inline_value));
      if (!taken) return parsed;
      value = std::move(*taken);
    } else if (inline_value) {
      parsed.error = std::string(spelled) + " takes no value";
      return parsed;
    }
    parsed.error = Apply(spelling->option, spelled, std::move(value), out);
    if (!parsed.error.empty() || out.help) return parsed;
  }
  out.command.assign(words.begin() + static_cast<std::ptrdiff_t>(index), words.end());
  if (out.command.empty()) {
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

Example:
  tfprof run -o trace.json -- python train.py --epochs 1
)";
}

}  // namespace tfprof::cli
