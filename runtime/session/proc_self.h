// What /proc says about this process: its command line and its threads' names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tfprof {

// The first line of a small text file (no line end); empty when it cannot be read.
std::string ReadFirstLine(const std::string &path);

// The process's arguments as the kernel has them (argv[0] first); empty if /proc is missing.
std::vector<std::string> ReadCommandLine();

// The name the system gives thread `os_tid` of this process (/proc/self/task/TID/comm).
std::string ThreadOsName(int64_t os_tid);

}  // namespace tfprof
