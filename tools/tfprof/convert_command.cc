#include "tools/tfprof/convert_command.h"

#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/export/json_text.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/option_word.h"
#include "tools/tfprof/progress.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/convert/output_target.h"
#include "runtime/formats/trace_writer.h"

namespace tfprof::cli {

namespace {

constexpr std::string_view kCommand = "convert";

struct ConvertArguments {
  bool help = false;
  std::vector<std::string> inputs;
  std::optional<std::string> output;
  std::optional<std::string> format;
  bool salvage = false;
};

// Options may come before or after the input. Returns what is wrong, or "".
std::string Parse(std::span<const std::string> words, ConvertArguments &out) {
  const std::string problem = ScanCommandWords(
      words, &out.inputs, &out.help, [&](OptionWord &option, const auto &take_value) {
        const std::string_view name = option.name;
        if (name == "--salvage") return TakeFlag(option, &out.salvage);
        if (name == "-o" || name == "--output") return TakePath(option, take_value, &out.output);
        if (name != "--format") return UnknownOption(option);
        if (!take_value() || option.value->empty()) {
          return std::string("--format needs a format name");
        }
        out.format = *option.value;
        return std::string();
      });
  if (!problem.empty() || out.help) return problem;
  if (out.inputs.empty()) return "no input file given (tfprof convert IN -o OUT)";
  if (out.inputs.size() > 1) {
    return absl::StrCat("one input file is converted at a time (", out.inputs.size(),
                        " given; 'tfprof merge' puts several on one timeline)");
  }
  if (!out.output) return "no output given: -o OUT (its name chooses the format)";
  return "";
}

}  // namespace

const char *ConvertUsage() {
  return R"(usage: tfprof convert [OPTIONS] IN -o OUT

Converts a trace between the formats tfprof reads and writes. The input's format is detected
from its content; the output's comes from its name, as for the runtime's output= option:

  OUT                      written as
  *.json                   Chrome trace JSON (Perfetto UI, chrome://tracing), tfprof's layout
  *.json.gz                the same, gzip-compressed
  *.pb                     one TensorFlow RunMetadata holding every step
  *.tfrecord               TFRecord file of one RunMetadata per step
  DIR/ or an existing DIR  a TensorBoard event file events.out.tfevents.<secs>.<host> in DIR

IN may be tfprof's Chrome trace, the PyTorch profiler's (or any other) Chrome trace JSON,
plain or .json.gz; a TensorFlow RunMetadata or StepStats (.pb); a TFRecord file of
RunMetadata; a TensorBoard event file or log directory.

Options:
  -o, --output OUT   where the converted trace goes (required); written under a temporary
                     name and renamed into place, so a failed run leaves nothing behind
      --format NAME  json, json.gz, pb, tfrecord or tensorboard, whatever OUT's name says
      --salvage      a damaged or truncated IN: convert what was read before the damage
                     (a warning names it) instead of failing
  -h, --help         print this help

TensorFlow output: one RunMetadata per step with a node step_NNNNNN (TrainingStep), holding
the activities that start inside the step; activities outside every step go to one more
record, last, tagged outside_steps. Host threads go to /job:localhost/replica:0/task:0/
device:CPU:0, kernels and memsets to /device:GPU:N/stream:all and /device:GPU:N/stream:S,
copies to /device:GPU:N/memcpy and stream:S; times are wall-clock microseconds (and ns).
What a format cannot hold is named on stderr as a note. Chrome output keeps the input's
processes, threads, streams, steps and wall-clock origin (the "tfprof" header).

Progress is shown on stderr when it is a terminal (TFPROF_PROGRESS=0/1 forces it off/on).

Exit status: 0 converted; 1 IN is missing, unreadable, damaged or no trace; 2 usage error
(including an OUT name that names no format, or OUT being IN); 3 OUT cannot be written.

Examples:
  tfprof convert run.pb -o run.json            TensorFlow RunMetadata -> Perfetto
  tfprof convert trace.json -o logs/           tfprof trace -> TensorBoard
  tfprof convert pytorch_trace.json.gz -o steps.tfrecord
)";
}

int ConvertCommand(std::span<const std::string> words) {
  ConvertArguments arguments;
  if (const std::string error = Parse(words, arguments); !error.empty()) {
    return UsageError(kCommand, error);
  }
  if (arguments.help) {
    std::fputs(ConvertUsage(), stdout);
    return kExitOk;
  }
  const std::string &input = arguments.inputs.front();
  absl::StatusOr<OutputTarget> target =
      ResolveOutput(*arguments.output, arguments.format, arguments.inputs);
  if (!target.ok()) return UsageError(kCommand, std::string(target.status().message()));

  Progress progress;
  LoadOptions load_options;
  load_options.salvage = arguments.salvage;
  load_options.progress = &progress;
  absl::StatusOr<Trace> trace = LoadTrace(input, load_options);
  progress.Finish();
  if (!trace.ok()) {
    PrintError(kCommand, trace.status());
    return ExitCodeFor(trace.status(), /*writing=*/false);
  }
  if (!trace->damage.empty()) {
    PrintError(kCommand, absl::StrCat("warning: ", trace->damage,
                                      " (--salvage: converting what was read before it)"));
  }

  TraceWriteOptions write_options;
  write_options.progress = &progress;
  write_options.sources_json = absl::StrCat("[{\"path\":", QuotedJson(input), ",\"format\":",
                                            QuotedJson(InputFormatName(*trace)), "}]");
  absl::StatusOr<WrittenTrace> written = WriteTrace(*trace, target->path, target->format, write_options);
  progress.Finish();
  if (!written.ok()) {
    PrintError(kCommand, written.status());
    return ExitCodeFor(written.status(), /*writing=*/true);
  }
  for (const std::string &note : written->notes) {
    PrintError(kCommand, absl::StrCat("note: ", written->path, ": ", note));
  }
  return kExitOk;
}

}  // namespace tfprof::cli
