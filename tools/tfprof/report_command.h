// `tfprof report FILE -o report.html`: the summary of a trace as one self-contained HTML page.
#ifndef TFPROF_TOOLS_TFPROF_REPORT_COMMAND_H_
#define TFPROF_TOOLS_TFPROF_REPORT_COMMAND_H_

#include <span>
#include <string>

namespace tfprof::cli {

// `words` are the arguments after "report". Returns a cli_status.h exit code: 0, 1 when the
// trace cannot be read, 2 for a bad command line, 3 when the page cannot be written.
int ReportCommand(std::span<const std::string> words);

// Where the page goes when -o is not given: FILE's last name without its trace extension, plus
// ".html", in the current directory ("runs/trace.json.gz" -> "trace.html").
std::string DefaultReportPath(const std::string &trace_path);

}  // namespace tfprof::cli

#endif  // TFPROF_TOOLS_TFPROF_REPORT_COMMAND_H_
