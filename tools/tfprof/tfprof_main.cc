// `tfprof`: the command-line tool. Dispatches `tfprof COMMAND ...` to the command's function.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfprof/tfprof.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/commands.h"

namespace tfprof::cli {
namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*function)(std::span<const std::string> words);  // the words after the command's name
};

constexpr Command kCommands[] = {
    {"run", "run a program with the tfprof preload library: tfprof run -o trace.json -- CMD",
     RunCommand},
    {"capture", "record a few steps of a running program: tfprof capture PID -o trace.json",
     CaptureCommand},
    {"summary", "where a trace's time went, with a diagnosis: tfprof summary trace.json",
     SummaryCommand},
    {"report", "the summary as an HTML page with charts: tfprof report trace.json -o r.html",
     ReportCommand},
    {"diff", "what changed between two traces, per step: tfprof diff before.json after.json",
     DiffCommand},
    {"convert", "convert a trace between formats: tfprof convert run.pb -o run.json", ConvertCommand},
    {"merge", "traces of several processes or runs on one timeline: tfprof merge -o all.json A B",
     MergeCommand},
};

void PrintUsage(std::FILE *stream) {
  std::fprintf(stream,
               "usage: tfprof [--help] [--version] COMMAND [ARGS...]\n"
               "\n"
               "tfprof profiles ML programs: host spans, steps and GPU activity as Chrome trace\n"
               "and TensorFlow formats.\n"
               "\n"
               "Commands:\n");
  for (const Command &command : kCommands) {
    std::fprintf(stream, "  %-8.*s %.*s\n", static_cast<int>(command.name.size()),
                 command.name.data(), static_cast<int>(command.summary.size()),
                 command.summary.data());
  }
  std::fprintf(stream, "\n'tfprof COMMAND --help' describes a command.\n");
}

int Main(std::span<const std::string> words) {
  if (words.empty()) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  const std::string_view first = words.front();
  if (first == "-h" || first == "--help") {
    PrintUsage(stdout);
    return 0;
  }
  if (first == "--version") {
    std::printf("tfprof %s\n", prof_version_string());  // the library linked in: this build's
    return 0;
  }
  for (const Command &command : kCommands) {
    if (command.name == first) return command.function(words.subspan(1));
  }
  std::fprintf(stderr, "tfprof: unknown %s '%s'\nTry 'tfprof --help' for the commands.\n",
               first.starts_with('-') ? "option" : "command", words.front().c_str());
  return kExitUsage;
}

}  // namespace
}  // namespace tfprof::cli

int main(int argc, char **argv) {
#if defined(__GLIBC__)
  // The commands hold a trace's millions of events and, beside them, lists of millions of
  // intervals that come and go. glibc raises its mmap threshold (up to 32 MB) each time such a
  // list is freed, so later lists come from the heap, whose freed middle is never returned: the
  // resident peak then holds lists long gone (18 MB of the 5M-event summary's). A fixed
  // threshold keeps every large list in its own mapping, returned when freed. A threshold the
  // user set (glibc's tunable or its older variable) is left to rule.
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr &&
      (tunables == nullptr || std::strstr(tunables, "mmap_threshold") == nullptr)) {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  }
#endif
  const std::vector<std::string> words(argv + (argc > 0 ? 1 : 0), argv + argc);
  return tfprof::cli::Main(words);
}
