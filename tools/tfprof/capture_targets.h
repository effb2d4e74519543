// The processes `tfprof capture` may talk to, found through /proc: who owns a process, what it is
// called, its rank, and which processes listen for captures (prof_listen()).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfprof::cli {

struct ProcessInfo {
  int64_t pid = 0;
  uid_t uid = 0;     // the process's effective user (/proc/PID/status), whom it serves
  std::string name;  // /proc/PID/comm
};

// nullopt when no such process exists (or /proc cannot show it).
std::optional<ProcessInfo> FindProcess(int64_t pid);

// The pids whose capture endpoint ("@tfprof-capture/<pid>", capture_protocol.h) is listening in
// this network namespace (/proc/net/unix), ascending.
std::vector<int64_t> ListeningPids();

// The process's rank as its launcher set it (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK in
// its environment at start, /proc/PID/environ), "0" when none is set or it cannot be read.
std::string RankOfProcess(int64_t pid);

// A user's name for messages ("alice (uid 1000)"), the number alone when it has no name.
std::string UserDescription(uid_t uid);

}  // namespace tfprof::cli
