// `tfprof summary FILE...`: what a trace says, as tables or --json, with a diagnosis.
#ifndef TFPROF_TOOLS_TFPROF_SUMMARY_COMMAND_H_
#define TFPROF_TOOLS_TFPROF_SUMMARY_COMMAND_H_

#include <span>
#include <string>

namespace tfprof::cli {

// `words` are the arguments after "summary". Returns a cli_status.h exit code.
int SummaryCommand(std::span<const std::string> words);

}  // namespace tfprof::cli

#endif  // TFPROF_TOOLS_TFPROF_SUMMARY_COMMAND_H_
