#include "tools/tfprof/merge_command.h"

#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/option_word.h"
#include "tools/tfprof/progress.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/convert/output_target.h"
#include "runtime/convert/trace_merger.h"
#include "runtime/formats/trace_writer.h"

namespace tfprof::cli {

namespace {

constexpr std::string_view kCommand = "merge";

struct MergeArguments {
  bool help = false;
  std::vector<std::string> inputs;
  std::optional<std::string> output;
  MergeAlignment alignment = MergeAlignment::kWallClock;
  bool salvage = false;
};

// Options may come before or after the inputs. Returns what is wrong, or "".
std::string Parse(std::span<const std::string> words, MergeArguments &out) {
  const std::string problem = ScanCommandWords(
      words, &out.inputs, &out.help, [&](OptionWord &option, const auto &take_value) {
        const std::string_view name = option.name;
        if (name == "--salvage") return TakeFlag(option, &out.salvage);
        if (name == "-o" || name == "--output") return TakePath(option, take_value, &out.output);
        if (name != "--align") return UnknownOption(option);
        if (!take_value()) return std::string("--align needs 'wall' or 'start'");
        if (*option.value == "wall") {
          out.alignment = MergeAlignment::kWallClock;
        } else if (*option.value == "start") {
          out.alignment = MergeAlignment::kFirstEvent;
        } else {
          return absl::StrCat("--align '", *option.value, "' is not one of wall, start");
        }
        return std::string();
      });
  if (!problem.empty() || out.help) return problem;
  if (out.inputs.empty()) return "no input files given (tfprof merge -o OUT FILE...)";
  if (!out.output) return "no output given: -o OUT.json or OUT.json.gz";
  return "";
}

}  // namespace

const char *MergeUsage() {
  return R"(usage: tfprof merge [OPTIONS] -o OUT FILE...

Puts several traces on one timeline in one Chrome trace JSON file: the processes of a
distributed job (one file per rank or host), runs, or steps recorded separately. Each FILE may
be in any format tfprof reads (tfprof or PyTorch profiler Chrome traces, .json.gz, TensorFlow
RunMetadata/StepStats .pb, TFRecord, TensorBoard event files or log directories).

Each input becomes its own process group, named "rank R · HOST · pid P" with what the file
records (else its file name; the processes of a group beyond its own, such as GPUs, are
"LABEL · GPU 0"). Its pids are kept where they do not collide with an earlier input's, else
renumbered; its steps stay on its own "Steps" row.

Timestamps are moved to wall-clock time using each file's record of when it started
(start_time_unix_ns for tfprof, baseTimeNanoseconds for PyTorch; TensorFlow's are wall-clock
already), so files recorded by processes with different clocks line up. The output's time 0 is
the earliest input's first event; its "tfprof" header says which Unix time that is.

Options:
  -o, --output OUT   the merged trace: OUT.json or OUT.json.gz (required)
      --align MODE   wall (default): by wall-clock time. A FILE that recorded no wall-clock
                     time is said so on stderr and its first event is put at the first event
                     of the earliest input.
                     start: every FILE's first event at time 0, to compare runs recorded at
                     different times side by side.
      --salvage      a damaged or truncated FILE: merge what was read before the damage
                     (a warning names it) instead of failing
  -h, --help         print this help

Progress is shown on stderr when it is a terminal (TFPROF_PROGRESS=0/1 forces it off/on).

Exit status: 0 merged; 1 a FILE is missing, unreadable, damaged or no trace; 2 usage error
(including OUT being one of the FILEs); 3 OUT cannot be written.

Example:
  tfprof merge -o job.json rank0.json rank1.json rank2.json
)";
}

int MergeCommand(std::span<const std::string> words) {
  MergeArguments arguments;
  if (const std::string error = Parse(words, arguments); !error.empty()) {
    return UsageError(kCommand, error);
  }
  if (arguments.help) {
    std::fputs(MergeUsage(), stdout);
    return kExitOk;
  }
  absl::StatusOr<OutputTarget> target =
      ResolveOutput(*arguments.output, std::nullopt, arguments.inputs);
  if (!target.ok()) return UsageError(kCommand, std::string(target.status().message()));
  if (target->format != Format::kChromeJson &&
      target->format != Format::kChromeJsonGzip) {
    return UsageError(kCommand, absl::StrCat("'", target->path,
                                             "': a merged trace is Chrome trace JSON: name it "
                                             ".json or .json.gz (then 'tfprof convert' it)"));
  }

  Progress progress;
  LoadOptions load_options;
  load_options.salvage = arguments.salvage;
  load_options.progress = &progress;
  TraceMerger merger(arguments.alignment);
  std::vector<std::string> notes;
  for (const std::string &input : arguments.inputs) {
    absl::StatusOr<Trace> trace = LoadTrace(input, load_options);
    progress.Finish();
    if (!trace.ok()) {
      PrintError(kCommand, trace.status());
      return ExitCodeFor(trace.status(), /*writing=*/false);
    }
    if (!trace->damage.empty()) {
      PrintError(kCommand, absl::StrCat("warning: ", trace->damage,
                                        " (--salvage: merging what was read before it)"));
    }
    if (std::optional<std::string> note = merger.Add(std::move(*trace))) {
      PrintError(kCommand, absl::StrCat("note: ", *note));
    }
  }
  const Trace merged = merger.Finish();
  TraceWriteOptions write_options;
  write_options.progress = &progress;
  write_options.sources_json = merger.SourcesJson();
  absl::StatusOr<WrittenTrace> written = WriteTrace(merged, target->path, target->format, write_options);
  progress.Finish();
  if (!written.ok()) {
    PrintError(kCommand, written.status());
    return ExitCodeFor(written.status(), /*writing=*/true);
  }
  return kExitOk;
}

}  // namespace tfprof::cli
