#include "tools/tfprof/summary_command.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "tools/tfprof/analysis/summary_json.h"
#include "tools/tfprof/analysis/summary_text.h"
#include "tools/tfprof/analysis/trace_summary.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/option_word.h"
#include "tools/tfprof/progress.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/model/cut_recovery.h"

namespace tfprof::cli {
namespace {

constexpr const char *kUsage =
    "usage: tfprof summary [--json] [--top N] [--steps N] [--input-ops GLOB,...] [--salvage]\n"
    "                      FILE...\n"
    "\n"
    "Reads traces and says where the time went: per-step time split into GPU compute, memcpy,\n"
    "waiting for input, host compute and idle; top ops by self and total time; top kernels; GPU\n"
    "utilisation per device and stream; the longest GPU idle gaps and the host op running in\n"
    "each; copy volume and bandwidth; dropped events. It ends with a diagnosis (input-bound,\n"
    "copy-bound, launch-bound, synchronisation stalls) and what to change, where the figures\n"
    "support one.\n"
    "\n"
    "FILE is any trace tfprof reads, the format taken from the content: Chrome trace JSON\n"
    "(.json or .json.gz, from tfprof, the PyTorch profiler or TensorFlow's timeline.py), a\n"
    "TensorFlow RunMetadata or StepStats (.pb), a TFRecord file of RunMetadata, a TensorBoard\n"
    "event file or log directory, a Perfetto trace (.pftrace: tfprof's, or another producer's\n"
    "TrackEvents), TensorFlow's or JAX's profile (<host>.xplane.pb, or the profile directory:\n"
    "a log directory's newest plugins/profile/<run>/, one process per host).\n"
    "\n"
    "Options:\n"
    "  --json             print the summary as JSON (all steps, times in ns) instead of tables\n"
    "  --top N            rows in the top ops, top kernels and idle gap tables (default 10)\n"
    "  --steps N          steps listed one per row in the tables (default 20)\n"
    "  --input-ops GLOBS  comma-separated patterns naming the host ops that wait for input,\n"
    "                     replacing the defaults (IteratorGetNext*, *DataLoader*, *input*, ...);\n"
    "                     may be given more than once\n"
    "  --salvage          summarize what a damaged or truncated file holds before the damage\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 success, 1 a FILE is missing, unreadable, damaged or not a trace (the other\n"
    "files are still summarized), 2 bad command line.\n";

struct SummaryArguments {
  bool json = false;
  bool salvage = false;
  SummaryOptions summary;
  TextOptions text;
  std::vector<std::string> files;
};

// Returns "" on success, else the usage problem.
std::string ParseArguments(std::span<const std::string> words, SummaryArguments *arguments,
                           bool *help) {
  const std::string problem = ScanCommandWords(
      words, &arguments->files, help, [&](OptionWord &option, const auto &take_value) {
        const std::string_view name = option.name;
        if (name == "--json") return TakeFlag(option, &arguments->json);
        if (name == "--salvage") return TakeFlag(option, &arguments->salvage);
        if (name == "--top") return TakeCount(option, take_value, &arguments->summary.top);
        if (name == "--steps") return TakeCount(option, take_value, &arguments->text.step_rows);
        if (name == "--input-ops") {
          return TakeInputOps(option, take_value, &arguments->summary.input_ops);
        }
        return UnknownOption(option);
      });
  if (!problem.empty() || *help) return problem;
  if (arguments->files.empty()) return "no trace file given";
  return "";
}

}  // namespace

int SummaryCommand(std::span<const std::string> words) {
  SummaryArguments arguments;
  bool help = false;
  const std::string problem = ParseArguments(words, &arguments, &help);
  if (help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!problem.empty()) return UsageError("summary", problem);

  int exit_code = kExitOk;
  std::vector<TraceSummary> summaries;
  std::vector<UnreadTrace> unread;
  for (const std::string &file : arguments.files) {
    Progress progress;
    LoadOptions load;
    load.salvage = arguments.salvage;
    load.progress = &progress;
    absl::StatusOr<Trace> trace = LoadTrace(file, load);
    progress.Finish();
    if (!trace.ok()) {
      PrintLoadError("summary", trace.status());
      unread.push_back(UnreadTrace{file, std::string(trace.status().message())});
      exit_code = kExitInputError;
      continue;
    }
    if (!trace->damage.empty()) {
      PrintError("summary", "salvaged what precedes the damage: " + trace->damage);
    }
    if (trace->cut) PrintError("summary", "warning: " + CutWarning(*trace->cut));
    TraceSummary summary = Summarize(*trace, arguments.summary);
    if (arguments.json) {
      summaries.push_back(std::move(summary));
    } else {
      if (&file != &arguments.files.front()) std::fputs("\n", stdout);
      std::fputs(SummaryToText(summary, arguments.text).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  if (arguments.json) std::fputs(SummariesToJson(summaries, unread).c_str(), stdout);
  return exit_code;
}

}  // namespace tfprof::cli
