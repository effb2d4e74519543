#include "runtime/session/proc_self.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tfprof {

std::string ReadFirstLine(const std::string &path) {
  std::string line;
  if (FILE *file = std::fopen(path.c_str(), "r")) {
    char buffer[256];
    if (std::fgets(buffer, sizeof buffer, file) != nullptr) line = buffer;
    std::fclose(file);
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::vector<std::string> ReadCommandLine() {
  std::vector<std::string> arguments;
  std::string text;
  if (FILE *file = std::fopen("/proc/self/cmdline", "r")) {
    char buffer[4096];
    size_t read = 0;
    while ((read = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, read);
    std::fclose(file);
  }
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\0', begin);
    if (end == std::string::npos) end = text.size();
    arguments.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return arguments;
}

std::string ThreadOsName(int64_t os_tid) {
  return ReadFirstLine(absl::StrCat("/proc/self/task/", os_tid, "/comm"));
}

}  // namespace tfprof
