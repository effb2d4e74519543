#include "runtime/capture/capture_agent.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/capture/capture_trigger.h"
#include "runtime/common/option_string.h"
#include "runtime/common/own_threads.h"
#include "runtime/common/output_template.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/collector/recorder.h"
#include "runtime/formats/format.h"
#include "runtime/model/gpu_names.h"
#include "runtime/session/options.h"
#include "runtime/session/profiler.h"

namespace tfprof {

namespace {

using Clock = std::chrono::steady_clock;

// How often a capture in progress looks at its command and reports progress.
constexpr auto kPollInterval = std::chrono::milliseconds(200);
// A capture by time in a program that marks steps ends at the first step end after its time;
// it waits this long at most (or as long as the capture itself, if longer) for that end.
constexpr auto kStepEndGrace = std::chrono::seconds(10);
// How long the program's exit waits for a capture in progress to be written.
constexpr auto kExitWait = std::chrono::seconds(30);

// `base` with `overrides` on top (a key in both takes the override's value), then `output=`.
absl::StatusOr<std::string> MergedOptions(const std::string &base, const std::string &overrides,
                                          const std::string &output) {
  absl::StatusOr<std::vector<RawOption>> first = SplitOptionString(base);
  if (!first.ok()) return first.status();
  absl::StatusOr<std::vector<RawOption>> second = SplitOptionString(overrides);
  if (!second.ok()) return second.status();
  std::vector<RawOption> merged = *std::move(first);
  for (RawOption &option : *second) {
    if (option.key == "output") {
      return absl::InvalidArgumentError("the options name an output: it comes from -o");
    }
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const RawOption &kept) { return kept.key == option.key; });
    if (same != merged.end()) {
      same->value = std::move(option.value);
    } else {
      merged.push_back(std::move(option));
    }
  }
  std::string text = "output=" + EscapeOptionValue(output);
  for (const RawOption &option : merged) {
    absl::StrAppend(&text, ",", option.key, "=", EscapeOptionValue(option.value));
  }
  return text;
}

// The folder `output` goes into must exist and be writable by this process (which writes it, not
// the command): checked before the capture waits for a step.
absl::Status CheckOutputDirectory(std::string output) {
  while (output.size() > 1 && output.back() == '/') output.pop_back();  // a log directory
  const size_t slash = output.rfind('/');
  const std::string folder = slash == 0 ? "/" : output.substr(0, slash);
  if (access(folder.c_str(), W_OK | X_OK) == 0) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("cannot write into '", folder, "' (process ",
                                             getpid(), "): ", std::strerror(errno)));
}

CaptureMessage ErrorMessage(std::string_view code, std::string_view text) {
  CaptureMessage message;
  message.Set("event", "error").Set("code", std::string(code)).Set("message", std::string(text));
  return message;
}

// The `done` line: what was written and what it holds.
CaptureMessage DoneMessage(const std::string &output, uint64_t steps, const char *ended_by,
                           const SessionStats &stats) {
  CaptureMessage message;
  message.Set("event", "done").Set("output", output).Set("steps", std::to_string(steps));
  const uint64_t lost = stats.losses.dropped + stats.losses.memory_dropped;
  message.Set("events", std::to_string(stats.events_recorded))
      .Set("lost", std::to_string(lost))
      .Set("threads", std::to_string(stats.threads))
      .Set("gpu", std::string(GpuStateName(stats.gpu_state)))
      .Set("gpu_records", std::to_string(stats.gpu_records))
      .Set("ended_by", ended_by);
  return message;
}

}  // namespace

CaptureAgent &CaptureAgent::Get() {
  static CaptureAgent *agent = new CaptureAgent();
  return *agent;
}

bool CaptureAgent::listening() {
  std::lock_guard<std::mutex> lock(mutex_);
  return listen_fd_ >= 0;
}

absl::Status CaptureAgent::Listen(const char *options_text) {
  const std::string options = options_text == nullptr ? "" : options_text;
  // The options are checked now, with a stand-in output, so that a mistake fails here and not
  // at the first capture.
  absl::StatusOr<std::string> merged = MergedOptions("", options, "/capture.json");
  if (!merged.ok()) return merged.status();
  absl::StatusOr<Options> parsed = ParseOptions(merged->c_str());
  if (!parsed.ok()) return parsed.status();

  std::lock_guard<std::mutex> lock(mutex_);
  if (listen_fd_ >= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("process ", getpid(), " is listening for captures already"));
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("socket(AF_UNIX): ", std::strerror(errno)));
  }
  sockaddr_un address{};
  const socklen_t length = CaptureEndpointAddress(getpid(), &address);
  if (bind(fd, reinterpret_cast<const sockaddr *>(&address), length) != 0 || listen(fd, 8) != 0) {
    const int error = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on the abstract socket @", ToAbsl(kCaptureEndpointPrefix), getpid(), ": ",
        std::strerror(error),
        error == EADDRINUSE ? " (another process of this pid's network namespace holds it)" : ""));
  }
  if (!hooks_installed_) {
    hooks_installed_ = true;
    // The profiler's fork handlers first: in a child, ours runs after it has reset its locks.
    Profiler::Get();
    std::atexit(&CaptureAgent::AtExit);
    pthread_atfork(nullptr, nullptr, &CaptureAgent::AfterForkInChild);
  }
  if (acceptor_.joinable()) acceptor_.join();  // a previous listen's, already ended
  unlistening_.store(false);
  try {
    acceptor_ = StartOwnThread([this, fd] { AcceptLoop(fd); });
  } catch (const std::system_error &error) {
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot start the thread that waits for captures: ", error.what()));
  }
  listen_fd_ = fd;
  options_ = options;
  return absl::OkStatus();
}

absl::Status CaptureAgent::Unlisten() {
  std::thread acceptor;
  std::thread worker;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (listen_fd_ < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("process ", getpid(), " is not listening for captures"));
    }
    unlistening_.store(true);
    // Wakes the acceptor from accept(), which then fails: the thread ends.
    shutdown(listen_fd_, SHUT_RDWR);
    acceptor = std::move(acceptor_);
  }
  acceptor.join();  // after it, no new worker can start
  {
    std::lock_guard<std::mutex> lock(mutex_);
    worker = std::move(worker_);
    close(listen_fd_);
    listen_fd_ = -1;
  }
  if (worker.joinable()) worker.join();  // a capture in progress ends early and is written
  return absl::OkStatus();
}

void CaptureAgent::AcceptLoop(int listen_fd) {
  for (;;) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down by Unlisten(), or the socket is gone
    }
    if (unlistening_.load()) {
      close(fd);
      return;
    }
    LineChannel channel(fd);
    ucred peer{};
    socklen_t size = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
        (peer.uid != geteuid() && peer.uid != 0)) {
      channel.Send(ErrorMessage(
          "not_permitted", absl::StrCat("process ", getpid(), " runs as user ", geteuid(),
                                        "; a capture may come from that user or root only")));
      close(fd);
      continue;
    }
    if (worker_busy_.exchange(true)) {
      channel.Send(ErrorMessage(
          "busy", absl::StrCat("another capture of process ", getpid(),
                               " is in progress; try again when it is written")));
      close(fd);
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (worker_.joinable()) worker_.join();  // the previous capture's, finished
    try {
      worker_ = StartOwnThread([this, fd] { Serve(fd); });
    } catch (const std::system_error &) {
      channel.Send(ErrorMessage("internal", "cannot start a thread for the capture"));
      close(fd);
      worker_busy_.store(false);
    }
  }
}

void CaptureAgent::Serve(int fd) {
  connection_fd_.store(fd);
  LineChannel channel(fd);
  try {
    absl::StatusOr<CaptureMessage> message = channel.Receive(5000);
    absl::StatusOr<CaptureRequest> request =
        message.ok() ? CaptureRequest::FromMessage(*message) : message.status();
    if (!request.ok()) {
      channel.Send(ErrorMessage("bad_request", ToStd(request.status().message())));
    } else if (request->kind == CaptureRequest::Kind::kDump) {
      Dump(channel, *request);
    } else {
      Capture(channel, *request);
    }
  } catch (const std::bad_alloc &) {
    channel.Send(ErrorMessage("internal", "out of memory"));
  }
  // Free before the command sees the connection close: its next request must not find us busy.
  worker_busy_.store(false);
  connection_fd_.store(-1);
  close(fd);
}

std::string CaptureAgent::EndReason(LineChannel &channel) {
  if (exiting_.load()) return "exit";
  if (unlistening_.load()) return "unlisten";
  if (channel.PeerClosed()) return "command_gone";
  return "";
}

void CaptureAgent::Capture(LineChannel &channel, const CaptureRequest &request) {
  const std::string pid = std::to_string(getpid());
  std::string options_now;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    options_now = options_;
  }
  absl::StatusOr<std::string> options = MergedOptions(options_now, request.options, request.output);
  absl::StatusOr<Options> parsed =
      options.ok() ? ParseOptions(options->c_str()) : absl::StatusOr<Options>(options.status());
  if (!parsed.ok()) {
    channel.Send(ErrorMessage("bad_options", ToStd(parsed.status().message())));
    return;
  }
  // The output is checked now, as prof_start() would check it at the step boundary: a path that
  // cannot be written fails before the wait.
  Format format = Format::kChromeJson;
  absl::Status writable = parsed->format.empty() ? FormatForPath(parsed->output, &format)
                                                 : FormatForName(parsed->format, &format);
  if (writable.ok()) writable = CheckWritable(parsed->output, format);
  if (writable.ok()) writable = CheckOutputDirectory(parsed->output);
  if (!writable.ok()) {
    channel.Send(ErrorMessage("bad_output", ToStd(writable.message())));
    return;
  }
  CaptureTrigger &trigger = CaptureTrigger::Get();
  const std::string own_session_running = absl::StrCat(
      "process ", pid,
      " is recording a profiling session of its own (prof_start, tfprof.trace or tfprof run "
      "without --on-demand); a capture cannot start beside it. 'tfprof capture --dump ",
      pid, "' writes what that session holds");
  if (!trigger.Arm(*options, request.steps)) {
    channel.Send(ErrorMessage("session_running", own_session_running));
    return;
  }
  channel.Send(CaptureMessage()
                   .Set("event", "waiting")
                   .Set("step_wait_ms", std::to_string(request.step_wait_ms)));
  const Clock::time_point step_deadline =
      Clock::now() + std::chrono::milliseconds(request.step_wait_ms);
  CapturePhase phase = kCaptureArmed;
  std::string ended_early;
  while (phase == kCaptureArmed && Clock::now() < step_deadline) {
    phase = trigger.WaitWhileArmed(std::min(step_deadline, Clock::now() + kPollInterval));
    if (phase == kCaptureArmed) ended_early = EndReason(channel);
    if (!ended_early.empty()) break;
  }
  if (phase == kCaptureArmed && (!ended_early.empty() || request.steps > 0)) {
    // Giving up; a step that began meanwhile may have started the session all the same, and then
    // the capture goes on (ended at once, and written, when it was cancelled).
    phase = trigger.Disarm();
    if (phase == kCaptureIdle) {
      if (!ended_early.empty()) {
        channel.Send(ErrorMessage("cancelled", "the capture ended before it began (" +
                                                   ended_early + ")"));
      } else if (SessionRunning(g_session_word.load(std::memory_order_acquire))) {
        channel.Send(ErrorMessage("session_running", own_session_running));
      } else {
        channel.Send(ErrorMessage(
            "no_steps", absl::StrCat("process ", pid, " began no step in ",
                                     static_cast<double>(request.step_wait_ms) / 1000.0,
                                     " s, so a capture of whole steps cannot start: --seconds S "
                                     "captures by time, --step-wait S waits longer for a step")));
      }
      return;
    }
  }
  if (phase == kCaptureArmed) phase = trigger.StartNowIfArmed();  // by time: no step came
  // A program thread claimed the start and is starting the session: wait for its outcome.
  if (phase == kCaptureStarting) phase = trigger.WaitWhileArmed(Clock::time_point::max());
  if (phase == kCaptureFailed) {
    const absl::Status status = trigger.start_status();
    trigger.Reset();
    const absl::StatusCode code = status.code();
    channel.Send(ErrorMessage(code == absl::StatusCode::kFailedPrecondition ? "session_running"
                              : code == absl::StatusCode::kUnavailable       ? "bad_output"
                                                                             : "start_failed",
                              ToStd(status.message())));
    return;
  }
  CaptureMessage started;
  started.Set("event", "started").Set("at", trigger.started_at_step() ? "step" : "now");
  if (trigger.started_at_step()) started.Set("step", std::to_string(trigger.first_step()));
  channel.Send(started);

  const Clock::time_point began = Clock::now();
  const auto by_time = std::chrono::milliseconds(request.milliseconds);
  Clock::time_point give_up_at = Clock::time_point::max();
  uint64_t reported_steps = 0;
  const char *ended_by = request.steps > 0 ? "steps" : "time";
  if (!ended_early.empty()) trigger.HaltNow();  // cancelled as it started
  while (!trigger.WaitHalted(Clock::now() + kPollInterval)) {
    const uint64_t steps = trigger.steps_completed();
    if (steps != reported_steps) {
      reported_steps = steps;
      CaptureMessage progress;
      progress.Set("event", "progress").Set("steps", std::to_string(steps));
      if (request.steps > 0) progress.Set("of", std::to_string(request.steps));
      channel.Send(progress);
    }
    const std::string reason = EndReason(channel);
    const Clock::time_point now = Clock::now();
    if (!reason.empty()) {
      ended_early = reason;
      trigger.HaltNow();
    } else if (request.milliseconds > 0 && now - began >= by_time &&
               give_up_at == Clock::time_point::max()) {
      if (trigger.started_at_step()) {
        trigger.EndAtNextStepEnd();  // whole steps: the one under way ends the capture
        give_up_at = now + std::max<Clock::duration>(kStepEndGrace, by_time);
      } else {
        trigger.HaltNow();
      }
    } else if (now >= give_up_at) {
      trigger.HaltNow();
    }
  }
  // The program's exit or prof_unlisten() may have ended the recording (HaltNow) before the
  // loop above saw why.
  if (ended_early.empty() && exiting_.load()) ended_early = "exit";
  if (ended_early.empty() && unlistening_.load()) ended_early = "unlisten";
  SessionStats stats;
  const absl::Status status = Profiler::Get().StopCapture(&stats);
  CaptureMessage last;
  if (!status.ok()) {
    last = ErrorMessage("write_failed", ToStd(status.message()));
  } else {
    if (!ended_early.empty()) ended_by = ended_early == "exit"           ? "exit"
                                         : ended_early == "unlisten"     ? "unlisten"
                                                                         : "command_gone";
    last = DoneMessage(request.output, trigger.steps_completed(), ended_by, stats);
  }
  // Dormant again before the command hears of it, so that it may ask for the next capture at once.
  Profiler::Get().DiscardStoppedCapture();
  trigger.Reset();
  channel.Send(last);
}

void CaptureAgent::Dump(LineChannel &channel, const CaptureRequest &request) {
  const std::string pid = std::to_string(getpid());
  if (!SessionRunning(g_session_word.load(std::memory_order_acquire))) {
    channel.Send(ErrorMessage(
        "no_session",
        absl::StrCat("process ", pid,
                     " runs no profiling session to dump: --dump writes the window of a session "
                     "started with keep=last:N; 'tfprof capture ",
                     pid, "' records one")));
    return;
  }
  const absl::Status status = Profiler::Get().Export(request.output.c_str());
  if (!status.ok()) {
    channel.Send(ErrorMessage("write_failed", ToStd(status.message())));
    return;
  }
  SessionStats stats;
  Profiler::Get().GetStats(&stats).IgnoreError();
  channel.Send(DoneMessage(request.output, 0, "dump", stats));
}

void CaptureAgent::AtExit() {
  CaptureAgent &agent = Get();
  agent.exiting_.store(true);
  // A capture in progress ends now and is written before the process goes.
  const Clock::time_point deadline = Clock::now() + kExitWait;
  while (agent.worker_busy_.load() && Clock::now() < deadline) {
    CaptureTrigger::Get().HaltNow();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void CaptureAgent::AfterForkInChild() {
  // The child has none of the parent's threads and must not answer on its socket: it forgets
  // both (leaking the thread handles: destroying a joinable std::thread ends the process). The
  // child may listen itself (the preload library's --on-demand children do).
  CaptureAgent &agent = Get();
  new (&agent.mutex_) std::mutex();
  if (agent.listen_fd_ >= 0) close(agent.listen_fd_);
  agent.listen_fd_ = -1;
  // A command's connection too: the command waits for it to close when the parent goes.
  if (const int connection = agent.connection_fd_.exchange(-1); connection >= 0) close(connection);
  if (agent.acceptor_.joinable()) new std::thread(std::move(agent.acceptor_));
  if (agent.worker_.joinable()) new std::thread(std::move(agent.worker_));
  agent.worker_busy_.store(false);
  agent.unlistening_.store(false);
  CaptureTrigger::Get().ResetAfterFork();
  Profiler::Get().ResetCaptureAfterFork();
}

}  // namespace tfprof
