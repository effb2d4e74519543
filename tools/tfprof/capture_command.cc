// `tfprof capture`: asks a running process that listens (prof_listen(), tfprof.listen(),
// `tfprof run --on-demand`) to record a few steps and write them, and waits for the file.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/capture/capture_protocol.h"
#include "runtime/common/output_template.h"
#include "tools/tfprof/capture_targets.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/commands.h"
#include "tools/tfprof/option_word.h"

namespace tfprof::cli {

namespace {

constexpr std::string_view kCommand = "capture";
constexpr uint64_t kDefaultSteps = 5;

constexpr const char *kUsage =
    "usage: tfprof capture PID... [--steps N | --seconds S] -o PATH [--options OPTS]\n"
    "       tfprof capture --all [--steps N | --seconds S] -o PATH [--options OPTS]\n"
    "       tfprof capture --dump PID -o PATH\n"
    "\n"
    "Records a running program that waits to be captured (`tfprof run --on-demand -- CMD`,\n"
    "tfprof.listen() in Python, prof_listen() in C): the program starts a session at its next\n"
    "step boundary, records N whole steps (or S seconds), writes the trace to PATH in the\n"
    "format its name says (.json, .json.gz, .pb, .tfrecord, .pftrace, .xplane.pb, a log\n"
    "directory), and goes back to waiting. The command shows progress, waits for the file and\n"
    "prints its path. Only the program's own user and root may capture it. Captures of one\n"
    "program come one at a time, as many as wanted.\n"
    "\n"
    "Options:\n"
    "  --steps N        record N whole steps, from the next step begin (default 5)\n"
    "  --seconds S      record for S seconds instead: from the next step begin to the first\n"
    "                   step end after S seconds; from now to S seconds when the program marks\n"
    "                   no step within --step-wait\n"
    "  --step-wait S    how long to wait for the next step begin (default 10)\n"
    "  -o, --output PATH  where the program writes the trace; relative to this directory.\n"
    "                   %p is the program's pid, %r its rank (RANK, OMPI_COMM_WORLD_RANK,\n"
    "                   SLURM_PROCID or PMI_RANK), %% a literal %\n"
    "  --options OPTS   session options for this capture (prof_start()'s, such as\n"
    "                   cuda=off,buffer_events=262144); they override the program's\n"
    "  --all            every program of this user on this host that waits to be captured\n"
    "                   (every user's, as root); PATH must hold %p or %r\n"
    "  --dump           write what the program's running session holds (the window of a\n"
    "                   session with keep=last:N), without stopping it\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit status: 0 every capture was written, 1 a capture failed (no such process, not\n"
    "listening, not permitted, another capture in progress, no step began, the program\n"
    "ended), 2 bad command line, 3 the trace could not be written.\n"
    "\n"
    "Many hosts: run it on every node through the job's launcher, then merge:\n"
    "  srun --ntasks-per-node=1 tfprof capture --all --steps 20 -o /shared/run/rank%r.json\n"
    "  tfprof merge -o run.json /shared/run/rank*.json\n";

struct CaptureArguments {
  bool help = false;
  bool all = false;
  bool dump = false;
  std::optional<uint64_t> steps;
  std::optional<double> seconds;
  double step_wait_seconds = 10;
  std::string output;
  std::string options;
  std::vector<int64_t> pids;
};

bool ParseSeconds(const std::string &text, double *seconds) {
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, *seconds);
  return error == std::errc() && stop == end && std::isfinite(*seconds) && *seconds > 0 &&
         *seconds < 1e7;
}

std::string ParseWords(std::span<const std::string> words, CaptureArguments *arguments) {
  std::vector<std::string> inputs;
  std::string problem = ScanCommandWords(
      words, &inputs, &arguments->help,
      [&](OptionWord &option, const auto &take_value) -> std::string {
        const std::string name(option.name);
        if (name == "--all" || name == "--dump") {
          if (option.value) return name + " takes no value";
          (name == "--all" ? arguments->all : arguments->dump) = true;
          return "";
        }
        if (!take_value()) return name + " needs a value";
        const std::string &value = *option.value;
        if (name == "-o" || name == "--output") {
          arguments->output = value;
        } else if (name == "--options") {
          arguments->options = value;
        } else if (name == "--steps") {
          uint64_t steps = 0;
          const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), steps);
          if (error != std::errc() || end != value.data() + value.size() || steps == 0) {
            return "--steps '" + value + "': a whole number of steps, 1 or more, was expected";
          }
          arguments->steps = steps;
        } else if (name == "--seconds" || name == "--step-wait") {
          double seconds = 0;
          if (!ParseSeconds(value, &seconds)) {
            return name + " '" + value + "': a number of seconds above 0 was expected";
          }
          if (name == "--seconds") {
            arguments->seconds = seconds;
          } else {
            arguments->step_wait_seconds = seconds;
          }
        } else {
          return UnknownOption(option);
        }
        return "";
      });
  if (!problem.empty() || arguments->help) return problem;
  for (const std::string &word : inputs) {
    int64_t pid = 0;
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), pid);
    if (error != std::errc() || end != word.data() + word.size() || pid <= 0) {
      return "'" + word + "' is not a process id";
    }
    arguments->pids.push_back(pid);
  }
  if (arguments->all == !arguments->pids.empty()) {
    return arguments->all ? "--all captures every listening process: give no PID besides it"
                          : "which process? Give its PID (or --all)";
  }
  if (arguments->steps && arguments->seconds) return "--steps and --seconds do not go together";
  if (arguments->dump && (arguments->steps || arguments->seconds)) {
    return "--dump writes what the session holds now: --steps and --seconds do not apply";
  }
  if (arguments->output.empty()) return "where should the trace go? Give -o PATH";
  if (arguments->output == "-") return "-o needs a file: the program writes it, not this command";
  return "";
}

// Prints one process's lines, whole, among the other processes' (--all).
std::mutex g_print_mutex;

void Say(int64_t pid, const std::string &text) {
  std::lock_guard<std::mutex> lock(g_print_mutex);
  std::fprintf(stderr, "tfprof capture: %lld: %s\n", static_cast<long long>(pid), text.c_str());
}

// The outcome of one process's capture: an exit status, and the path on success.
struct Outcome {
  int status = kExitOk;
  std::string path;
};

Outcome Fail(int64_t pid, const std::string &text, int status = kExitInputError) {
  std::lock_guard<std::mutex> lock(g_print_mutex);
  std::fprintf(stderr, "tfprof capture: error: process %lld: %s\n", static_cast<long long>(pid),
               text.c_str());
  return {status, ""};
}

std::string Seconds(uint64_t milliseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(milliseconds) / 1000.0);
  return text;
}

// Connects to `pid`'s endpoint and checks that the process itself answers. -1 after printing why.
int Connect(const ProcessInfo &process, Outcome *failure) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *failure = Fail(process.pid, std::string("socket: ") + std::strerror(errno));
    return -1;
  }
  sockaddr_un address{};
  const socklen_t length = CaptureEndpointAddress(process.pid, &address);
  if (connect(fd, reinterpret_cast<const sockaddr *>(&address), length) != 0) {
    const int error = errno;
    close(fd);
    *failure = Fail(process.pid,
                    error == ECONNREFUSED || error == ENOENT
                        ? "'" + process.name +
                              "' is not listening for captures: start it with `tfprof run "
                              "--on-demand -- CMD`, or have it call tfprof.listen() (Python) or "
                              "prof_listen() (C)"
                        : std::string("cannot connect to its endpoint: ") + std::strerror(error));
    return -1;
  }
  ucred peer{};
  socklen_t size = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.pid != process.pid) {
    close(fd);
    const std::string holder = peer.pid == 0 ? "a process outside this pid namespace"
                                             : "process " + std::to_string(peer.pid);
    *failure = Fail(process.pid, "its endpoint is held by " + holder +
                                     ", not by it: refusing to talk to another process");
    return -1;
  }
  return fd;
}

Outcome CaptureOne(int64_t pid, const CaptureArguments &arguments, const std::string &output) {
  const std::optional<ProcessInfo> process = FindProcess(pid);
  if (!process) return Fail(pid, "no such process");
  if (process->uid != geteuid() && geteuid() != 0) {
    return Fail(pid, "not permitted: '" + process->name + "' belongs to " +
                         UserDescription(process->uid) + "; only that user or root may capture it");
  }
  CaptureRequest request;
  request.kind = arguments.dump ? CaptureRequest::Kind::kDump : CaptureRequest::Kind::kCapture;
  if (arguments.seconds) {
    request.milliseconds = static_cast<uint64_t>(std::llround(*arguments.seconds * 1000.0));
    if (request.milliseconds == 0) request.milliseconds = 1;
  } else {
    request.steps = arguments.steps.value_or(kDefaultSteps);
  }
  request.step_wait_ms = static_cast<uint64_t>(std::llround(arguments.step_wait_seconds * 1000.0));
  std::string error;
  if (!ExpandOutputTemplate(output, pid, RankOfProcess(pid), &request.output, &error, "-o")) {
    return Fail(pid, error, kExitUsage);
  }
  request.options = arguments.options;

  Outcome failure;
  const int fd = Connect(*process, &failure);
  if (fd < 0) return failure;
  LineChannel channel(fd);
  // A send that fails is not the end: a process that refuses (busy, not permitted) answers at
  // once and closes, and its answer is still there to read.
  channel.Send(request.ToMessage());
  Outcome outcome;
  for (;;) {
    // Waits as long as the process lives: a capture lasts what its steps last.
    absl::StatusOr<CaptureMessage> message = channel.Receive(1000);
    if (absl::IsDeadlineExceeded(message.status())) {
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;
      message = absl::UnavailableError("the process is gone");
    }
    if (!message.ok()) {
      outcome = Fail(pid, absl::IsUnavailable(message.status())
                              ? "'" + process->name +
                                    "' ended (or stopped listening) before the trace was written"
                              : "a message it sent could not be read: " +
                                    std::string(message.status().message()));
      break;
    }
    const std::string event = message->Get("event");
    if (event == "waiting") {
      uint64_t wait_ms = 0;
      const std::string text = message->Get("step_wait_ms");
      std::from_chars(text.data(), text.data() + text.size(), wait_ms);
      Say(pid, "waiting for the next step of '" + process->name + "' (up to " + Seconds(wait_ms) +
                   ")");
    } else if (event == "started") {
      Say(pid, message->Get("at") == "step"
                   ? "recording from step " + message->Get("step")
                   : "recording from now (no step began)");
    } else if (event == "progress") {
      const std::string of = message->Get("of");
      Say(pid, message->Get("steps") + (of.empty() ? "" : " of " + of) + " steps recorded");
    } else if (event == "done") {
      std::string summary = "wrote " + message->Get("output");
      if (!arguments.dump) summary += ": " + message->Get("steps") + " steps";
      summary += (arguments.dump ? ": " : ", ") + message->Get("events") + " events";
      if (message->Get("lost") != "0" && !message->Get("lost").empty()) {
        summary += " (" + message->Get("lost") + " lost)";
      }
      summary += ", GPU tracing " + message->Get("gpu");
      const std::string ended_by = message->Get("ended_by");
      if (ended_by == "exit") summary += "; the program exited during the capture";
      if (ended_by == "unlisten") summary += "; the program stopped listening during the capture";
      Say(pid, summary);
      outcome = {kExitOk, message->Get("output")};
      break;
    } else if (event == "error") {
      const std::string code = message->Get("code");
      outcome = Fail(pid, message->Get("message"),
                     code == "bad_output" || code == "write_failed" ? kExitOutputError
                     : code == "bad_options"                         ? kExitUsage
                                                                     : kExitInputError);
      break;
    }
  }
  close(fd);
  return outcome;
}

}  // namespace

int CaptureCommand(std::span<const std::string> words) {
  CaptureArguments arguments;
  const std::string problem = ParseWords(words, &arguments);
  if (arguments.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!problem.empty()) return UsageError(kCommand, problem);
  std::vector<int64_t> pids = arguments.pids;
  if (arguments.all) {
    for (const int64_t pid : ListeningPids()) {
      const std::optional<ProcessInfo> process = FindProcess(pid);
      if (process && (process->uid == geteuid() || geteuid() == 0)) pids.push_back(pid);
    }
    if (pids.empty()) {
      PrintError(kCommand, "no process of " + UserDescription(geteuid()) +
                               " listens for captures on this host");
      return kExitInputError;
    }
  }
  if (pids.size() > 1 && !TemplateNamesProcess(arguments.output)) {
    return UsageError(kCommand, std::to_string(pids.size()) +
                                    " processes would write one file: put %p (pid) or %r (rank) "
                                    "in -o");
  }
  const std::string output = AbsoluteOutputTemplate(arguments.output);
  std::vector<Outcome> outcomes(pids.size());
  std::vector<std::thread> threads;
  for (size_t index = 0; index < pids.size(); ++index) {
    threads.emplace_back(
        [&, index] { outcomes[index] = CaptureOne(pids[index], arguments, output); });
  }
  for (std::thread &thread : threads) thread.join();
  int status = kExitOk;
  for (const Outcome &outcome : outcomes) {
    if (outcome.status == kExitOk) {
      std::printf("%s\n", outcome.path.c_str());
    } else if (status == kExitOk || outcome.status == kExitOutputError) {
      status = outcome.status;
    }
  }
  return status;
}

}  // namespace tfprof::cli
