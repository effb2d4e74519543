// What the commands that analyse one trace at a time (`tfprof summary`, `tfprof report`) share:
// the --help paragraph on the files they read, their common options, and reading a trace.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/common/output_sink.h"
#include "runtime/model/trace.h"
#include "tools/tfprof/analysis/trace_summary.h"
#include "tools/tfprof/option_word.h"
#include "tools/tfprof/progress.h"

namespace tfprof::cli {

// Prints --help on stdout: `about` (usage line and description), the paragraph on the formats
// read ("FILE is any trace tfprof reads, ..."), then `options`.
void PrintAnalysisUsage(const char *about, const char *options);

struct AnalysisArguments {
  bool help = false;
  bool salvage = false;
  SummaryOptions summary;  // --top, --input-ops
  std::vector<std::string> files;
};

// A command's own option: "" when taken, the usage problem, or UnknownOption(option).
using OwnOption =
    std::function<std::string(OptionWord &option, const std::function<bool()> &take_value)>;

// Reads the words after the command's name: FILEs, -h/--help, --salvage, --top N, --input-ops
// GLOBS, and the command's own options through `own_option`. "" or the usage problem ("no trace
// file given" when there is no FILE and no --help).
std::string ParseAnalysisWords(std::span<const std::string> words, AnalysisArguments *arguments,
                               const OwnOption &own_option);

// Reads `file` (LoadTrace, --salvage as `salvage` says) with `progress`. A failure is printed as
// `tfprof COMMAND: ...` and returned; what was salvaged or recovered from a cut end is warned of.
absl::StatusOr<Trace> LoadAnalysedTrace(std::string_view command, const std::string &file,
                                        bool salvage, Progress &progress);

// Opens an HTML page's destination (`tfprof report`, `tfprof diff --html`) before any trace is
// read, so that a typo in its directory costs no long read: an OutputSink, unnamed until the page
// is complete; a directory is refused. Where a file system has no unnamed files, the page's
// hidden name is removed if a signal ends the command.
absl::StatusOr<std::unique_ptr<OutputSink>> OpenHtmlPage(const std::string &path);

}  // namespace tfprof::cli
