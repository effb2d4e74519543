#include "tools/tfprof/commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "tfprof/tfprof.h"
#include "runtime/common/output_sink.h"
#include "runtime/convert/output_target.h"
#include "tools/tfprof/analysis_command.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/report/html_report.h"

namespace tfprof::cli {
namespace {

constexpr const char *kUsageAbout =
    "usage: tfprof report [-o OUT.html] [--top N] [--input-ops GLOB,...] [--salvage] FILE\n"
    "\n"
    "Writes what `tfprof summary` says about a trace as one self-contained HTML page: the\n"
    "diagnosis first (input-bound, copy-bound, launch-bound, synchronisation stalls, with the\n"
    "figures behind it and what to change), then step time stacked by category for every step,\n"
    "GPU utilisation over time per device, top ops by self and total time, top kernels, streams,\n"
    "the longest GPU idle gaps, copies and what the recorder lost. The page loads nothing from\n"
    "anywhere (CSS and SVG charts are inline): open it offline, attach it to a ticket.\n"
    "\n";

// After the formats read (PrintAnalysisUsage).
constexpr const char *kUsageOptions =
    "\n"
    "Options:\n"
    "  -o, --output PATH  where the page goes ('-': standard output); default: FILE's name with\n"
    "                     .html for its extension, in the current directory. Written under a\n"
    "                     temporary name and renamed, so PATH is never left half-written\n"
    "  --top N            rows in the top ops, top kernels and idle gap tables (default 10)\n"
    "  --input-ops GLOBS  comma-separated patterns naming the host ops that wait for input,\n"
    "                     replacing the defaults (IteratorGetNext*, *DataLoader*, *input*, ...);\n"
    "                     may be given more than once\n"
    "  --salvage          report what a damaged or truncated file holds before the damage\n"
    "  -h, --help         show this help\n"
    "\n"
    "Progress is shown on standard error when it is a terminal.\n"
    "\n"
    "Exit status: 0 success, 1 FILE is missing, unreadable, damaged or not a trace, 2 bad\n"
    "command line, 3 the page could not be written.\n"
    "\n"
    "Example:\n"
    "  tfprof report trace.json -o report.html\n";

std::string WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return std::strerror(errno);
    }
    text.remove_prefix(static_cast<size_t>(written));
  }
  return "";
}

// Where the page goes when -o is not given: FILE's last name without its trace extension, plus
// ".html", in the current directory ("runs/trace.json.gz" -> "trace.html").
std::string DefaultReportPath(const std::string &trace_path) {
  std::string_view name = trace_path;
  while (name.size() > 1 && name.ends_with('/')) name.remove_suffix(1);
  name = name.substr(name.find_last_of('/') + 1);  // npos + 1 == 0
  for (std::string_view extension :
       {".gz", ".json", ".pb", ".pbtxt", ".tfrecord", ".pftrace", ".perfetto-trace", ".trace"}) {
    if (name.size() > extension.size() && name.ends_with(extension)) {
      name.remove_suffix(extension.size());
    }
  }
  if (name.empty() || name == "." || name == ".." || name == "/") return "report.html";
  return std::string(name) + ".html";
}

}  // namespace

int ReportCommand(std::span<const std::string> words) {
  AnalysisArguments arguments;
  std::string output;  // "" until given
  std::string problem = ParseAnalysisWords(
      words, &arguments, [&](OptionWord &option, const std::function<bool()> &take_value) {
        if (option.name == "-o" || option.name == "--output") {
          return TakePath(option, take_value, &output);
        }
        return UnknownOption(option);
      });
  if (problem.empty() && arguments.files.size() > 1) {
    problem = "one trace at a time ('" + arguments.files[1] +
              "' is a second); combine traces first with 'tfprof merge'";
  }
  if (arguments.help) {
    PrintAnalysisUsage(kUsageAbout, kUsageOptions);
    return kExitOk;
  }
  if (!problem.empty()) return UsageError("report", problem);
  const std::string &file = arguments.files.front();
  if (output.empty()) output = DefaultReportPath(file);
  const bool to_stdout = output == "-";
  if (!to_stdout && SameFile(file, output)) {
    return UsageError("report", "the output '" + output + "' is the trace itself");
  }

  // The destination first: a typo in its directory should not cost a long read.
  std::unique_ptr<OutputSink> destination;
  if (!to_stdout) {
    absl::StatusOr<std::unique_ptr<OutputSink>> page = OpenHtmlPage(output);
    if (!page.ok()) {
      PrintError("report", std::string(page.status().message()));
      return kExitOutputError;
    }
    destination = std::move(*page);
  }

  Progress progress;
  const absl::StatusOr<Trace> trace =
      LoadAnalysedTrace("report", file, arguments.salvage, progress);
  if (!trace.ok()) return kExitInputError;
  const TraceSummary summary = Summarize(*trace, arguments.summary);
  HtmlReportOptions options;
  options.generator = std::string("tfprof ") + prof_version_string();
  options.trace = &*trace;
  const std::string html = RenderHtmlReport(summary, options);

  if (to_stdout) {
    const std::string write_problem = WriteAll(STDOUT_FILENO, html);
    if (!write_problem.empty()) {
      PrintError("report", "cannot write to standard output: " + write_problem);
      return kExitOutputError;
    }
    return kExitOk;
  }
  destination->Write(html);
  if (absl::Status written = destination->Finish(); !written.ok()) {
    PrintError("report", std::string(written.message()));
    return kExitOutputError;
  }
  if (progress.shown()) {
    std::fprintf(stderr, "tfprof report: wrote %s (%zu KB)\n", output.c_str(),
                 (html.size() + 1023) / 1024);
  }
  return kExitOk;
}

}  // namespace tfprof::cli
