#include "runtime/formats/chrome/pytorch_trace_directory.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace tfprof {

std::vector<std::string> PytorchTracesIn(const std::string &dir) {
  std::vector<std::string> found;
  std::error_code error;
  std::filesystem::directory_iterator entries(dir, error);
  for (; !error && entries != std::filesystem::directory_iterator(); entries.increment(error)) {
    const std::string name = entries->path().filename().string();
    if (name.find(".pt.trace") == std::string::npos ||
        !(name.ends_with(".json") || name.ends_with(".json.gz"))) {
      continue;
    }
    std::error_code kind_error;
    if (entries->is_regular_file(kind_error)) found.push_back(entries->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string SeveralPytorchTracesMessage(const std::string &dir,
                                        const std::vector<std::string> &traces) {
  constexpr size_t kNamed = 5;
  std::string names;
  for (size_t index = 0; index < traces.size() && index < kNamed; ++index) {
    if (index > 0) names += ", ";
    names += std::filesystem::path(traces[index]).filename().string();
  }
  if (traces.size() > kNamed) absl::StrAppend(&names, ", ...");
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return absl::StrCat(base, ": holds ", traces.size(), " PyTorch profiler traces (", names,
                      "), each a trace of its own (a worker or a profiling window): name one, as "
                      "in ", traces.front(), ", or merge one window's workers with `tfprof merge ",
                      base, "/*.pt.trace.json -o merged.json`");
}

}  // namespace tfprof
