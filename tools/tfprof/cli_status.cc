#include "tools/tfprof/cli_status.h"

#include <cstdio>

namespace tfprof::cli {

void PrintError(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "tfprof %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
}

void PrintError(std::string_view command, const absl::Status &status) {
  const absl::string_view message = status.message();  // absl::string_view is its own type here
  PrintError(command, std::string_view(message.data(), message.size()));
}

void PrintLoadError(std::string_view command, const absl::Status &status) {
  PrintError(command, status);
  if (absl::IsDataLoss(status)) {
    PrintError(command, "--salvage reads what the file holds before the damage");
  }
}

int UsageError(std::string_view command, std::string_view message) {
  PrintError(command, message);
  std::fprintf(stderr, "Try 'tfprof %.*s --help' for more information.\n",
               static_cast<int>(command.size()), command.data());
  return kExitUsage;
}

int ExitCodeFor(const absl::Status &status, bool writing) {
  if (status.ok()) return kExitOk;
  if (absl::IsInvalidArgument(status) && !writing) return kExitInputError;
  return writing ? kExitOutputError : kExitInputError;
}

}  // namespace tfprof::cli
