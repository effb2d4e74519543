// `tfprof merge -o OUT FILE...`: several traces (runs, steps, processes, ranks; any format tfprof
// reads) on one wall-clock timeline in one Chrome trace, a process group per input.

#ifndef TFPROF_TOOLS_TFPROF_MERGE_COMMAND_H_
#define TFPROF_TOOLS_TFPROF_MERGE_COMMAND_H_

#include <span>
#include <string>

namespace tfprof::cli {

// Runs `tfprof merge` with the words after `merge`. Exit codes as ConvertCommand's.
int MergeCommand(std::span<const std::string> words);

}  // namespace tfprof::cli

#endif  // TFPROF_TOOLS_TFPROF_MERGE_COMMAND_H_
