// `tfprof convert IN -o OUT`: reads a trace in any format tfprof reads and writes it in the format
// the output's name (or --format) names.

#ifndef TFPROF_TOOLS_TFPROF_CONVERT_COMMAND_H_
#define TFPROF_TOOLS_TFPROF_CONVERT_COMMAND_H_

#include <span>
#include <string>

namespace tfprof::cli {

// Runs `tfprof convert` with the words after `convert`. Returns kExitOk, kExitInputError (the
// input is missing, unreadable, damaged or no trace), kExitUsage or kExitOutputError (the output
// cannot be written), each failure with a message on stderr naming the file and the problem.
int ConvertCommand(std::span<const std::string> words);

}  // namespace tfprof::cli

#endif  // TFPROF_TOOLS_TFPROF_CONVERT_COMMAND_H_
