// What the preload library is told through the environment, parsed and checked before anything
// starts. Pure functions of their inputs, so every rule is unit-tested without a process.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/common/output_template.h"

namespace tfprof::preload {

enum class LogLevel { kOff = 0, kError = 1, kWarning = 2, kInfo = 3, kDebug = 4 };

// The default NVTX ranges that mark steps: `step`, `step N`, `ProfilerStep#N`, `train_step`.
inline constexpr char kDefaultStepMarkers[] = "step,step [0-9]*,ProfilerStep#[0-9]*,train_step";
inline constexpr char kDefaultOutput[] = "tfprof-%p.json";

struct PreloadConfig {
  std::string output_template;  // TFPROF_OUTPUT as given (or the default)
  std::string options;          // TFPROF_OPTIONS
  std::vector<std::string> step_markers;  // glob patterns; empty: no NVTX range marks steps
  LogLevel log_level = LogLevel::kInfo;
  bool follow_children = true;
  // TFPROF_SIGNAL_DEADLINE: how long a fatal signal waits for the trace before the program ends
  // without it; 0 ends at once (no trace on signals).
  int signal_deadline_ms = 10000;
  // TFPROF_ON_DEMAND: no session at start; the process listens for `tfprof capture PID`
  // (prof_listen()) instead, and TFPROF_OUTPUT is not read (each capture names its output).
  bool on_demand = false;
};

// Reads a variable; nullopt when it is not set.
using EnvironmentReader = std::function<std::optional<std::string>(const char *name)>;

// Parses TFPROF_OUTPUT, TFPROF_OPTIONS, TFPROF_STEP_MARKER, TFPROF_LOG_LEVEL,
// TFPROF_FOLLOW_CHILDREN, TFPROF_SIGNAL_DEADLINE and TFPROF_ON_DEMAND. On a bad value returns
// false and sets `*error` to one line naming the variable, the value and what it accepts.
bool ParsePreloadConfig(const EnvironmentReader &environment, PreloadConfig *config,
                        std::string *error);

// The first of RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK that is set, else "0".
inline std::string RankFrom(const EnvironmentReader &environment) {
  return RankFromVariables(environment);
}

// TFPROF_OUTPUT's placeholders %p, %r and %% (runtime/common/output_template.h).
using tfprof::ExpandOutputTemplate;
using tfprof::TemplateNamesPid;

// For a process started (through exec) below the profiled one when the output does not name the
// pid: `trace.json` becomes `trace.<pid>.json` (`.json.gz` kept whole), a TensorBoard directory
// gets a `pid<pid>/` subdirectory, so no two processes write one file.
std::string PathForDescendant(const std::string &path, int64_t pid);

// `value` with `,` and `\` escaped, for one `key=value` of a prof_start() option string.
using tfprof::EscapeOptionValue;

}  // namespace tfprof::preload
