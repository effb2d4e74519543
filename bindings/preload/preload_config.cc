#include "bindings/preload/preload_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

namespace tfprof::preload {

namespace {

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::vector<std::string> SplitCommas(const std::string &text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (;;) {
    const size_t comma = text.find(',', begin);
    parts.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return parts;
    begin = comma + 1;
  }
}

// A glob is usable when every '[' has its ']' (fnmatch would otherwise match it literally,
// silently); returns the problem or "".
std::string GlobProblem(const std::string &pattern) {
  if (pattern.empty()) return "an empty pattern";
  for (size_t at = 0; at < pattern.size(); ++at) {
    if (pattern[at] == '\\') {
      ++at;
    } else if (pattern[at] == '[') {
      size_t close = at + 1;
      if (close < pattern.size() && (pattern[close] == '!' || pattern[close] == '^')) ++close;
      if (close < pattern.size() && pattern[close] == ']') ++close;
      close = pattern.find(']', close);
      if (close == std::string::npos) return "'[' at offset " + std::to_string(at) + " is never closed";
      at = close;
    }
  }
  return "";
}

bool ParseStepMarkers(const std::string &value, std::vector<std::string> *patterns,
                      std::string *error) {
  patterns->clear();
  if (Lowercase(value) == "none") return true;
  for (const std::string &pattern : SplitCommas(value)) {
    if (const std::string problem = GlobProblem(pattern); !problem.empty()) {
      *error = "TFPROF_STEP_MARKER='" + value + "': " + problem +
               "; accepts comma-separated glob patterns of NVTX range names (for example "
               "'step [0-9]*,ProfilerStep#*'), or 'none'";
      return false;
    }
    patterns->push_back(pattern);
  }
  return true;
}

bool ParseLogLevel(const std::string &value, LogLevel *level, std::string *error) {
  static constexpr std::pair<std::string_view, LogLevel> kLevels[] = {
      {"off", LogLevel::kOff},         {"error", LogLevel::kError}, {"warning", LogLevel::kWarning},
      {"info", LogLevel::kInfo},       {"debug", LogLevel::kDebug}};
  const std::string lowered = Lowercase(value);
  for (const auto &[name, candidate] : kLevels) {
    if (lowered == name) {
      *level = candidate;
      return true;
    }
  }
  *error = "TFPROF_LOG_LEVEL='" + value + "': accepts off, error, warning, info or debug";
  return false;
}

bool ParseSwitch(const char *variable, const std::string &value, bool *out, std::string *error) {
  const std::string lowered = Lowercase(value);
  if (lowered == "1" || lowered == "yes" || lowered == "true" || lowered == "on") {
    *out = true;
    return true;
  }
  if (lowered == "0" || lowered == "no" || lowered == "false" || lowered == "off") {
    *out = false;
    return true;
  }
  *error = std::string(variable) + "='" + value + "': accepts 1 or 0 (also yes/no, true/false, on/off)";
  return false;
}

// Seconds, with a fraction if wanted ("2.5"), from 0 to an hour.
bool ParseSignalDeadline(const std::string &value, int *milliseconds, std::string *error) {
  char *end = nullptr;
  const double seconds = value.empty() ? -1 : std::strtod(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0' || !(seconds >= 0 && seconds <= 3600)) {
    *error = "TFPROF_SIGNAL_DEADLINE='" + value +
             "': accepts seconds from 0 to 3600 (for example 10 or 2.5; 0 writes no trace when "
             "a signal ends the program)";
    return false;
  }
  *milliseconds = static_cast<int>(seconds * 1000 + 0.5);
  return true;
}

}  // namespace

bool ParsePreloadConfig(const EnvironmentReader &environment, PreloadConfig *config,
                        std::string *error) {
  *config = PreloadConfig{};
  if (std::optional<std::string> level = environment("TFPROF_LOG_LEVEL")) {
    if (!ParseLogLevel(*level, &config->log_level, error)) return false;
  }
  if (std::optional<std::string> on_demand = environment("TFPROF_ON_DEMAND")) {
    if (!ParseSwitch("TFPROF_ON_DEMAND", *on_demand, &config->on_demand, error)) return false;
  }
  config->output_template = kDefaultOutput;
  // On demand, each capture names its output: a TFPROF_OUTPUT left in the environment (a
  // `tfprof run` around this one) is not used, so it cannot stop the process from listening.
  std::optional<std::string> output =
      config->on_demand ? std::nullopt : environment("TFPROF_OUTPUT");
  if (output) {
    if (output->empty()) {
      *error = "TFPROF_OUTPUT is empty: it accepts a path ending in .json, .json.gz, .pb, "
               ".tfrecord or .pftrace, or a directory for TensorBoard (%p: pid, %r: rank)";
      return false;
    }
    config->output_template = *output;
  }
  std::string expanded;
  if (!ExpandOutputTemplate(config->output_template, 1, "0", &expanded, error)) return false;
  if (std::optional<std::string> options = environment("TFPROF_OPTIONS")) {
    const std::string text = "," + *options;
    if (text.find(",output=") != std::string::npos || text.find(", output=") != std::string::npos) {
      *error = "TFPROF_OPTIONS='" + *options + "' sets output: the output path comes from " +
               (config->on_demand ? "each `tfprof capture -o PATH`" : "TFPROF_OUTPUT only");
      return false;
    }
    config->options = *options;
  }
  const std::string markers = environment("TFPROF_STEP_MARKER").value_or(kDefaultStepMarkers);
  if (!ParseStepMarkers(markers, &config->step_markers, error)) return false;
  if (std::optional<std::string> follow = environment("TFPROF_FOLLOW_CHILDREN")) {
    if (!ParseSwitch("TFPROF_FOLLOW_CHILDREN", *follow, &config->follow_children, error)) return false;
  }
  if (std::optional<std::string> deadline = environment("TFPROF_SIGNAL_DEADLINE")) {
    if (!ParseSignalDeadline(*deadline, &config->signal_deadline_ms, error)) return false;
  }
  return true;
}

std::string PathForDescendant(const std::string &path, int64_t pid) {
  const std::string tag = std::to_string(pid);
  if (!path.empty() && path.back() == '/') return path + "pid" + tag + "/";
  const size_t slash = path.rfind('/');
  const size_t name_begin = slash == std::string::npos ? 0 : slash + 1;
  size_t extension = std::string::npos;
  for (std::string_view suffix : {".json.gz", ".json", ".pb", ".tfrecord", ".pftrace", ".perfetto-trace"}) {
    if (path.size() - name_begin > suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      extension = path.size() - suffix.size();
      break;
    }
  }
  if (extension == std::string::npos) {
    const size_t dot = path.rfind('.');
    extension = dot != std::string::npos && dot > name_begin ? dot : path.size();
  }
  return path.substr(0, extension) + "." + tag + path.substr(extension);
}

}  // namespace tfprof::preload
