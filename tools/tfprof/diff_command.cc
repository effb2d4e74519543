#include <cstdio>
#include <memory>
#include <optional>

#include "tfprof/tfprof.h"
#include "runtime/common/output_sink.h"
#include "runtime/convert/output_target.h"
#include "tools/tfprof/analysis/diff_json.h"
#include "tools/tfprof/analysis/diff_text.h"
#include "tools/tfprof/analysis/trace_diff.h"
#include "tools/tfprof/analysis_command.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/commands.h"
#include "tools/tfprof/report/diff_html.h"

namespace tfprof::cli {
namespace {

constexpr const char *kUsageAbout =
    "usage: tfprof diff [--json] [--html OUT.html] [--top N] [--input-ops GLOB,...] [--salvage]\n"
    "                   A B\n"
    "\n"
    "Compares two traces (two runs, before and after a change; any two formats tfprof reads,\n"
    "such as a PyTorch trace and a tfprof trace of the same program) through what `tfprof\n"
    "summary` says of each: step time (mean, median, steps), where it went (compute,\n"
    "communication, copy, input, idle), ops by self and total time, kernels, GPU time by op\n"
    "and by layer, memory peaks. Each row shows A, B, the change B - A and the change\n"
    "relative to A; the most changed rows come first, with rows found in one trace only\n"
    "marked new or gone. Times are per step (whole-trace totals divided by each trace's step\n"
    "count), so runs of different lengths compare fairly; when a trace has no steps, both are\n"
    "compared over the whole trace. The first line names the step time's change and the op or\n"
    "kernel that moved most.\n"
    "\n";

// After the formats read (PrintAnalysisUsage).
constexpr const char *kUsageOptions =
    "\n"
    "Options:\n"
    "  --json             print the comparison as JSON (every row, times in ns) instead of tables\n"
    "  --html PATH        also write it as a self-contained HTML page to PATH\n"
    "  --top N            rows in the op, kernel and GPU time tables (default 10)\n"
    "  --input-ops GLOBS  comma-separated patterns naming the host ops that wait for input,\n"
    "                     replacing the defaults (IteratorGetNext*, *DataLoader*, *input*, ...);\n"
    "                     may be given more than once\n"
    "  --salvage          compare what a damaged or truncated file holds before the damage\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 success, 1 A or B is missing, unreadable, damaged or not a trace, 2 bad\n"
    "command line, 3 the page could not be written.\n"
    "\n"
    "Example:\n"
    "  tfprof diff before.json after.pt.trace.json --html diff.html\n";

}  // namespace

int DiffCommand(std::span<const std::string> words) {
  AnalysisArguments arguments;
  bool json = false;
  std::string html;  // "" unless --html
  std::string problem = ParseAnalysisWords(
      words, &arguments, [&](OptionWord &option, const std::function<bool()> &take_value) {
        if (option.name == "--json") return TakeFlag(option, &json);
        if (option.name == "--html") return TakePath(option, take_value, &html);
        return UnknownOption(option);
      });
  if (arguments.help) {
    PrintAnalysisUsage(kUsageAbout, kUsageOptions);
    return kExitOk;
  }
  if (problem.empty() && arguments.files.size() != 2) {
    problem = "two traces to compare, A and B, were expected; " +
              std::to_string(arguments.files.size()) + " given";
  }
  if (problem.empty() && html == "-") {
    problem = "--html needs a file (standard output carries the text or JSON)";
  }
  for (const std::string &file : arguments.files) {
    if (problem.empty() && !html.empty() && SameFile(file, html)) {
      problem = "the page '" + html + "' is one of the traces";
    }
  }
  if (!problem.empty()) return UsageError("diff", problem);

  std::unique_ptr<OutputSink> page;
  if (!html.empty()) {
    absl::StatusOr<std::unique_ptr<OutputSink>> opened = OpenHtmlPage(html);
    if (!opened.ok()) {
      PrintError("diff", std::string(opened.status().message()));
      return kExitOutputError;
    }
    page = std::move(*opened);
  }

  // Both are read, so that one run says what is wrong with each.
  const SummaryOptions summary_options = DiffSummaryOptions(arguments.summary);
  std::optional<TraceSummary> summaries[2];
  for (size_t side = 0; side < 2; ++side) {
    Progress progress;
    absl::StatusOr<Trace> trace =
        LoadAnalysedTrace("diff", arguments.files[side], arguments.salvage, progress);
    if (trace.ok()) summaries[side] = Summarize(*trace, summary_options);
  }
  if (!summaries[0] || !summaries[1]) return kExitInputError;

  const TraceDiff diff = DiffSummaries(*summaries[0], *summaries[1]);
  if (json) {
    std::fputs(DiffToJson(diff).c_str(), stdout);
  } else {
    DiffTextOptions text;
    text.rows = arguments.summary.top;
    std::fputs(DiffToText(diff, text).c_str(), stdout);
  }
  std::fflush(stdout);
  if (page) {
    DiffHtmlOptions options;
    options.rows = arguments.summary.top;
    options.generator = std::string("tfprof ") + prof_version_string();
    const std::string rendered = RenderDiffHtml(diff, options);
    page->Write(rendered);
    if (absl::Status written = page->Finish(); !written.ok()) {
      PrintError("diff", std::string(written.message()));
      return kExitOutputError;
    }
    std::fprintf(stderr, "tfprof diff: wrote %s (%zu KB)\n", html.c_str(),
                 (rendered.size() + 1023) / 1024);
  }
  return kExitOk;
}

}  // namespace tfprof::cli
