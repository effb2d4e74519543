#include "tools/tfprof/commands.h"

#include <cstdio>
#include <vector>

#include "tools/tfprof/analysis_command.h"
#include "tools/tfprof/analysis/summary_json.h"
#include "tools/tfprof/analysis/summary_text.h"
#include "tools/tfprof/analysis/trace_summary.h"
#include "tools/tfprof/cli_status.h"

namespace tfprof::cli {
namespace {

constexpr const char *kUsageAbout =
    "usage: tfprof summary [--json] [--top N] [--steps N] [--input-ops GLOB,...] [--salvage]\n"
    "                      FILE...\n"
    "\n"
    "Reads traces and says where the time went: per-step time split into GPU compute, memcpy,\n"
    "waiting for input, host compute and idle; top ops by self and total time; top kernels; GPU\n"
    "utilisation per device and stream; the longest GPU idle gaps and the host op running in\n"
    "each; copy volume and bandwidth; dropped events. It ends with a diagnosis (input-bound,\n"
    "copy-bound, launch-bound, synchronisation stalls) and what to change, where the figures\n"
    "support one.\n"
    "\n";

// After the formats read (PrintAnalysisUsage).
constexpr const char *kUsageOptions =
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

}  // namespace

int SummaryCommand(std::span<const std::string> words) {
  AnalysisArguments arguments;
  bool json = false;
  TextOptions text;
  const std::string problem = ParseAnalysisWords(
      words, &arguments, [&](OptionWord &option, const std::function<bool()> &take_value) {
        if (option.name == "--json") return TakeFlag(option, &json);
        if (option.name == "--steps") return TakeCount(option, take_value, &text.step_rows);
        return UnknownOption(option);
      });
  if (arguments.help) {
    PrintAnalysisUsage(kUsageAbout, kUsageOptions);
    return kExitOk;
  }
  if (!problem.empty()) return UsageError("summary", problem);

  int exit_code = kExitOk;
  std::vector<TraceSummary> summaries;
  std::vector<UnreadTrace> unread;
  for (const std::string &file : arguments.files) {
    Progress progress;
    absl::StatusOr<Trace> trace = LoadAnalysedTrace("summary", file, arguments.salvage, progress);
    if (!trace.ok()) {
      unread.push_back(UnreadTrace{file, std::string(trace.status().message())});
      exit_code = kExitInputError;
      continue;
    }
    TraceSummary summary = Summarize(*trace, arguments.summary);
    if (json) {
      summaries.push_back(std::move(summary));
    } else {
      if (&file != &arguments.files.front()) std::fputs("\n", stdout);
      std::fputs(SummaryToText(summary, text).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  if (json) std::fputs(SummariesToJson(summaries, unread).c_str(), stdout);
  return exit_code;
}

}  // namespace tfprof::cli
