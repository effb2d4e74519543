#include "tools/tfprof/capture_targets.h"

#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#include "runtime/capture/capture_protocol.h"
#include "runtime/common/output_template.h"

namespace tfprof::cli {

namespace {

std::optional<int64_t> ParsePid(std::string_view text) {
  int64_t pid = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (error != std::errc() || end != text.data() + text.size() || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace

std::optional<ProcessInfo> FindProcess(int64_t pid) {
  const std::string folder = "/proc/" + std::to_string(pid);
  struct stat info {};
  if (stat(folder.c_str(), &info) != 0) return std::nullopt;
  ProcessInfo process;
  process.pid = pid;
  process.uid = info.st_uid;
  // The effective user from status ("Uid: real effective saved fs"): /proc/PID itself belongs to
  // root for a process that is not dumpable, whoever runs it.
  std::ifstream status(folder + "/status");
  for (std::string line; std::getline(status, line);) {
    if (!line.starts_with("Uid:")) continue;
    std::istringstream ids(line.substr(4));
    unsigned long real = 0, effective = 0;
    if (ids >> real >> effective) process.uid = static_cast<uid_t>(effective);
    break;
  }
  std::ifstream comm(folder + "/comm");
  std::getline(comm, process.name);
  return process;
}

std::vector<int64_t> ListeningPids() {
  // Lines: "Num RefCount Protocol Flags Type St Inode Path"; a listening socket has the
  // __SO_ACCEPTCON flag (0x10000) and an abstract name shows as "@name".
  std::ifstream table("/proc/net/unix");
  std::vector<int64_t> pids;
  std::string line;
  std::getline(table, line);  // the header
  const std::string prefix = "@" + std::string(kCaptureEndpointPrefix);
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, references, protocol, flags, type, state, inode, path;
    if (!(fields >> slot >> references >> protocol >> flags >> type >> state >> inode >> path)) {
      continue;
    }
    if (!path.starts_with(prefix)) continue;
    if ((std::strtoul(flags.c_str(), nullptr, 16) & 0x10000) == 0) continue;
    if (std::optional<int64_t> pid = ParsePid(std::string_view(path).substr(prefix.size()))) {
      pids.push_back(*pid);
    }
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

std::string RankOfProcess(int64_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string environment((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  return RankFromVariables([&](const char *name) -> std::optional<std::string> {
    const std::string key = std::string(name) + "=";
    size_t at = 0;
    while (at < environment.size()) {
      size_t end = environment.find('\0', at);
      if (end == std::string::npos) end = environment.size();
      if (environment.compare(at, key.size(), key) == 0) {
        return environment.substr(at + key.size(), end - at - key.size());
      }
      at = end + 1;
    }
    return std::nullopt;
  });
}

std::string UserDescription(uid_t uid) {
  passwd entry{};
  passwd *found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    return std::string(found->pw_name) + " (uid " + std::to_string(uid) + ")";
  }
  return "uid " + std::to_string(uid);
}

}  // namespace tfprof::cli
