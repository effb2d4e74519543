// The last component of a path, for labels and messages ("logs/run1/" -> "run1").
#pragma once

#include <string>

namespace tfprof {

inline std::string FileName(const std::string &path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const size_t slash = trimmed.rfind('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

}  // namespace tfprof
