// What every `tfprof` command shares: exit codes and how an error is printed.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace tfprof::cli {

// Exit codes of the file commands (summary, report, diff, convert, merge). `tfprof run` returns
// kExitUsage for a bad command line, else the program's own status (126/127 when it cannot run).
constexpr int kExitOk = 0;
constexpr int kExitInputError = 1;   // an input is missing, unreadable, damaged or no trace
constexpr int kExitUsage = 2;        // bad command line
constexpr int kExitOutputError = 3;  // the output could not be written

// Prints "tfprof COMMAND: MESSAGE" on stderr (the status message names the file and problem).
void PrintError(std::string_view command, const absl::Status &status);
void PrintError(std::string_view command, std::string_view message);
// A file that could not be read: its error, and for a damaged or cut one (a stream whose program
// was killed mid-write) that --salvage reads what comes before the damage.
void PrintLoadError(std::string_view command, const absl::Status &status);

// Prints the usage error and "Try 'tfprof COMMAND --help'"; returns kExitUsage.
int UsageError(std::string_view command, std::string_view message);

// The exit code for a failed read or write: input errors -> kExitInputError, the rest
// (Unavailable/PermissionDenied while writing) as `writing` says.
int ExitCodeFor(const absl::Status &status, bool writing);

}  // namespace tfprof::cli
