// The `tfprof` commands that tfprof_main.cc dispatches to. Each takes the words after its name and
// returns the exit status (cli_status.h), having printed any failure on stderr as
// "tfprof COMMAND: what is wrong", naming the file and the problem.
#pragma once

#include <span>
#include <string>

namespace tfprof::cli {

// `tfprof run [OPTIONS] -- COMMAND`: sets up the preload library's environment and replaces this
// process with COMMAND, so its exit status and signals reach the caller unchanged. Returns only
// when nothing was run: 0 after --help; kExitUsage for a usage error, a missing preload library
// or a missing output directory; 126 or 127 when COMMAND could not be executed.
int RunCommand(std::span<const std::string> words);

// `tfprof capture PID... | --all [--steps N | --seconds S | --dump] -o PATH`: has running programs
// that listen (prof_listen()) record and write a session, waiting for the files. kExitInputError
// when a capture failed (no such process, not listening, not permitted, busy, the program ended),
// kExitUsage, kExitOutputError when a trace could not be written.
int CaptureCommand(std::span<const std::string> words);

// `tfprof summary FILE...`: what each trace says, as tables or --json, with a diagnosis.
// kExitInputError when a FILE cannot be read (the others are still summarized).
int SummaryCommand(std::span<const std::string> words);

// `tfprof report FILE -o report.html`: the summary of a trace as one self-contained HTML page.
// kExitInputError when the trace cannot be read, kExitOutputError when the page cannot be written.
int ReportCommand(std::span<const std::string> words);

// `tfprof convert IN -o OUT`: reads a trace in any format tfprof reads and writes it in the format
// the output's name (or --format) names. kExitInputError (the input is missing, unreadable,
// damaged or no trace), kExitUsage or kExitOutputError (the output cannot be written).
int ConvertCommand(std::span<const std::string> words);

// `tfprof merge -o OUT FILE...`: several traces (runs, steps, processes, ranks; any format tfprof
// reads) on one wall-clock timeline in one file, a process group per input. Exit codes as
// ConvertCommand's.
int MergeCommand(std::span<const std::string> words);

// `tfprof diff A B`: two traces' summaries compared figure by figure (step time, categories, ops,
// kernels), as tables, --json or an --html page. kExitInputError when A or B cannot be read,
// kExitOutputError when the page cannot be written.
int DiffCommand(std::span<const std::string> words);

}  // namespace tfprof::cli
