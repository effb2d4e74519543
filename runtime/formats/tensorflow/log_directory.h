// A TensorBoard log directory as TensorBoard sees it: runs, each a folder holding event files
// (Keras writes logs/train and logs/validation; a restarted job adds a second event file to the
// same folder). tfprof reads one run as one trace: a directory that holds several runs is refused
// with their names, since their step numbers repeat and their times overlap.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tfprof {

// The event files (names containing "tfevents") of the one run below `dir`, in the order they
// were written: by the Unix time in their name ("events.out.tfevents.<secs>.<host>..."), then by
// name; empty when there is none. Errors:
//   InvalidArgument  the event files lie in several folders, several runs: "DIR: holds N
//                    TensorBoard runs ...", naming them (relative to DIR) and what to do instead
//   Unavailable      the directory cannot be listed ("cannot list the directory 'DIR': ...")
absl::StatusOr<std::vector<std::string>> EventFilesOfOneRun(const std::string &dir);

// The Unix seconds in an event file's name ("events.out.tfevents.1700000000.host" gives
// 1700000000); -1 when the name holds none.
long long EventFileSeconds(const std::string &file_name);

}  // namespace tfprof
