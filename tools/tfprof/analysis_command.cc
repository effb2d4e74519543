#include "tools/tfprof/analysis_command.h"

#include <sys/stat.h>

#include <cstdio>

#include "runtime/formats/trace_reader.h"
#include "runtime/model/cut_recovery.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/signal_cleanup.h"

namespace tfprof::cli {

void PrintAnalysisUsage(const char *about, const char *options) {
  std::fputs(about, stdout);
  std::fputs(
    "FILE is any trace tfprof reads, the format taken from the content: Chrome trace JSON\n"
    "(.json or .json.gz, from tfprof, the PyTorch profiler or TensorFlow's timeline.py), a\n"
    "TensorFlow RunMetadata or StepStats (.pb), a TFRecord file of RunMetadata, a TensorBoard\n"
    "event file or log directory, a Perfetto trace (.pftrace: tfprof's, or another producer's\n"
    "TrackEvents), TensorFlow's or JAX's profile (<host>.xplane.pb, or the profile directory:\n"
    "a log directory's newest plugins/profile/<run>/, one process per host).\n",
      stdout);
  std::fputs(options, stdout);
}

std::string ParseAnalysisWords(std::span<const std::string> words, AnalysisArguments *arguments,
                               const OwnOption &own_option) {
  const std::string problem = ScanCommandWords(
      words, &arguments->files, &arguments->help,
      [&](OptionWord &option, const std::function<bool()> &take_value) {
        const std::string_view name = option.name;
        if (name == "--salvage") return TakeFlag(option, &arguments->salvage);
        if (name == "--top") return TakeCount(option, take_value, &arguments->summary.top);
        if (name == "--input-ops") {
          return TakeInputOps(option, take_value, &arguments->summary.input_ops);
        }
        return own_option(option, take_value);
      });
  if (!problem.empty() || arguments->help) return problem;
  return arguments->files.empty() ? "no trace file given" : "";
}

absl::StatusOr<Trace> LoadAnalysedTrace(std::string_view command, const std::string &file,
                                        bool salvage, Progress &progress) {
  LoadOptions load;
  load.salvage = salvage;
  load.progress = &progress;
  absl::StatusOr<Trace> trace = LoadTrace(file, load);
  progress.Finish();
  if (!trace.ok()) {
    PrintLoadError(command, trace.status());
    return trace;
  }
  if (!trace->damage.empty()) {
    PrintError(command, "salvaged what precedes the damage: " + trace->damage);
  }
  if (trace->cut) PrintError(command, "warning: " + CutWarning(*trace->cut));
  return trace;
}

absl::StatusOr<std::unique_ptr<OutputSink>> OpenHtmlPage(const std::string &path) {
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError("cannot write '" + path + "': it is a directory");
  }
  absl::StatusOr<std::unique_ptr<OutputSink>> page = OutputSink::Open(path, false);
  if (page.ok()) RemoveOutputsOnSignals();
  return page;
}

}  // namespace tfprof::cli
