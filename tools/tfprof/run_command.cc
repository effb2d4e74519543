#include "tools/tfprof/commands.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "runtime/common/output_template.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/preload_locator.h"
#include "tools/tfprof/run_arguments.h"

namespace tfprof::cli {

namespace {

constexpr std::string_view kCommand = "run";
constexpr int kCannotExecute = 126;
constexpr int kNotFound = 127;

// ld.so splits LD_PRELOAD at spaces and colons; a path holding one cannot be preloaded.
constexpr std::string_view kPreloadSeparators = " :";

// An environment variable's value; an empty one counts as unset.
std::optional<std::string> Environment(const char *name) {
  const char *value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

int PreloadNotFound(const PreloadSearch &search) {
  std::string message = "cannot find the preload library libtfprof_preload.so; looked " +
                        search.where_looked + ":";
  for (const std::string &place : search.searched) message += "\n  " + place;
  PrintError(kCommand, message);
  std::fprintf(stderr, "Pass --preload PATH or set TFPROF_PRELOAD to the library's path.\n");
  return kExitUsage;
}

// Sanitizer runtimes refuse to start unless they are the first libraries loaded.
bool IsSanitizerRuntime(std::string_view entry) {
  const std::string_view name = entry.substr(entry.find_last_of('/') + 1);  // npos + 1 == 0
  for (std::string_view prefix :
       {"libasan.", "libhwasan.", "libmsan.", "libtsan.", "libubsan.", "libclang_rt."}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

// The LD_PRELOAD list with `library` in front of the entries already in `existing`, except
// sanitizer runtimes, which stay ahead of it. A second copy of `library` is dropped.
std::string PrependToPreloadList(const std::string &library, std::string_view existing) {
  std::vector<std::string_view> sanitizers;
  std::vector<std::string_view> others;
  while (!existing.empty()) {
    const size_t end = std::min(existing.find_first_of(kPreloadSeparators), existing.size());
    const std::string_view entry = existing.substr(0, end);
    if (IsSanitizerRuntime(entry)) {
      sanitizers.push_back(entry);
    } else if (!entry.empty() && entry != library) {
      others.push_back(entry);
    }
    existing.remove_prefix(std::min(end + 1, existing.size()));
  }
  std::string list;
  for (std::string_view entry : sanitizers) list.append(entry).append(":");
  list += library;
  for (std::string_view entry : others) list.append(":").append(entry);
  return list;
}

// What would keep the trace from being written to `path` (absolute), found now rather than when
// the program exits: its directory (for a TensorBoard directory, the one holding it) must exist
// and be writable. "" when nothing is wrong or the directory holds a %p or %r placeholder.
std::string OutputDirectoryProblem(std::string path) {
  while (path.size() > 1 && path.ends_with('/')) path.pop_back();
  const std::string directory = std::filesystem::path(path).parent_path().string();
  if (directory.empty() || directory.find('%') != std::string::npos) return "";
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    return "cannot write the trace into '" + directory + "': no such directory";
  }
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    return "cannot write the trace into '" + directory + "': " + std::strerror(errno);
  }
  return "";
}

void SetEnvironment(const char *name, const std::string &value) {
  setenv(name, value.c_str(), /*overwrite=*/1);
}

// Python programs import the start-up module next to the preload library (_startup/, in the wheel
// and the build tree) through PYTHONPATH: it turns the framework integrations on and gives Python
// its signals back. Harmless for any other program; kept for Python programs COMMAND starts.
void AddPythonStartup(const std::string &preload_library) {
  const std::filesystem::path folder =
      std::filesystem::path(preload_library).parent_path() / "_startup";
  std::error_code error;
  if (!std::filesystem::is_regular_file(folder / "sitecustomize.py", error)) return;
  const std::optional<std::string> existing = Environment("PYTHONPATH");
  if (existing && (*existing == folder.string() || existing->starts_with(folder.string() + ":"))) {
    return;  // a tfprof run inside a tfprof run
  }
  SetEnvironment("PYTHONPATH", existing ? folder.string() + ":" + *existing : folder.string());
}

}  // namespace

int RunCommand(std::span<const std::string> words) {
  const ParsedRunArguments parsed = ParseRunArguments(words);
  if (parsed.arguments.help) {
    std::fputs(RunUsage(), stdout);
    return 0;
  }
  if (!parsed.error.empty()) return UsageError(kCommand, parsed.error);
  const RunArguments &arguments = parsed.arguments;
  const std::optional<std::string> output =
      arguments.output ? std::optional(AbsoluteOutputTemplate(*arguments.output)) : std::nullopt;
  if (output) {
    const std::string problem = OutputDirectoryProblem(*output);
    if (!problem.empty()) {
      PrintError(kCommand, problem);
      return kExitUsage;
    }
  }

  const PreloadSearch search =
      FindPreloadLibrary(arguments.preload, Environment("TFPROF_PRELOAD"));
  if (search.found.empty()) return PreloadNotFound(search);
  if (search.found.find_first_of(kPreloadSeparators) != std::string::npos) {
    PrintError(kCommand, "cannot preload '" + search.found +
               "': LD_PRELOAD cannot hold a path with a space or a colon; move the library or "
               "link to it from another path");
    return kExitUsage;
  }

  if (output) SetEnvironment("TFPROF_OUTPUT", *output);
  if (arguments.options) SetEnvironment("TFPROF_OPTIONS", *arguments.options);
  if (arguments.step_marker) SetEnvironment("TFPROF_STEP_MARKER", *arguments.step_marker);
  if (arguments.log_level) SetEnvironment("TFPROF_LOG_LEVEL", *arguments.log_level);
  if (arguments.no_follow_children) SetEnvironment("TFPROF_FOLLOW_CHILDREN", "0");
  if (arguments.on_demand) SetEnvironment("TFPROF_ON_DEMAND", "1");
  if (arguments.signal_deadline) {
    SetEnvironment("TFPROF_SIGNAL_DEADLINE", *arguments.signal_deadline);
  }
  if (arguments.frameworks) SetEnvironment("TFPROF_FRAMEWORKS", *arguments.frameworks);
  SetEnvironment("LD_PRELOAD",
                 PrependToPreloadList(search.found, Environment("LD_PRELOAD").value_or("")));
  AddPythonStartup(search.found);

  std::vector<char *> argv;
  argv.reserve(arguments.command.size() + 1);
  for (const std::string &word : arguments.command) {
    argv.push_back(const_cast<char *>(word.c_str()));  // execvp does not write to them
  }
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());

  const int error = errno;
  PrintError(kCommand, "cannot run '" + arguments.command[0] + "': " + std::strerror(error));
  return error == ENOENT ? kNotFound : kCannotExecute;
}

}  // namespace tfprof::cli
