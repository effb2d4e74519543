// `tfprof run`: sets up the preload library's environment and replaces this process with the
// command, so its exit status and signals reach the caller unchanged.

#ifndef TFPROF_TOOLS_TFPROF_RUN_COMMAND_H_
#define TFPROF_TOOLS_TFPROF_RUN_COMMAND_H_

#include <span>
#include <string>

namespace tfprof::cli {

// Runs `tfprof run` with the words after `run`. Returns only when nothing was run: 0 after
// --help; 2 for a usage error, a missing preload library or a missing output directory; 126 or
// 127 when the command could not be executed (each with a message on stderr).
int RunCommand(std::span<const std::string> words);

}  // namespace tfprof::cli

#endif  // TFPROF_TOOLS_TFPROF_RUN_COMMAND_H_
