#include "bindings/preload/signal_flush.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "bindings/c/internal_entry_points.h"
#include "bindings/preload/preload_log.h"

namespace tfprof::preload {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGABRT};
// The watcher's own slack past the deadline before a waiting thread ends things itself.
constexpr int kGraceMs = 2000;

void (*g_flush)(const char *why) = nullptr;
int g_deadline_ms = 10000;
int g_request_pipe[2] = {-1, -1};  // handler -> watcher: the signal number
int g_flush_pipe[2] = {-1, -1};    // watcher -> flush thread: write the trace
int g_done_pipe[2] = {-1, -1};     // flush thread -> watcher: written
int g_release_pipe[2] = {-1, -1};  // watcher -> an aborting thread waiting in its handler
std::atomic<bool> g_ready{false};
std::atomic<int> g_claimed_signal{0};  // the signal that asked for the trace; 0 before
bool g_installed[sizeof kSignals / sizeof kSignals[0]] = {};
std::atomic<bool> g_deferred{false};  // a Python process: handlers wait for the interpreter

// Async-signal-safe: sigaction and raise.
void RestoreDefaultAndRaise(int signal_number) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, nullptr);
  raise(signal_number);  // inside a handler: blocked while it runs, delivered as it returns
}

int64_t MonotonicMs() {
  struct timespec now {};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// Waits until `fd` is readable or `timeout_ms` passed (EINTR resumes); true when readable.
// Async-signal-safe.
bool WaitReadable(int fd, int64_t timeout_ms) {
  const int64_t end = MonotonicMs() + timeout_ms;
  for (;;) {
    const int64_t left = end - MonotonicMs();
    if (left <= 0) return false;
    struct pollfd entry {fd, POLLIN, 0};
    const int ready = poll(&entry, 1, static_cast<int>(left));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

void WriteByte(int fd, unsigned char byte) {
  while (write(fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

// Ends the process with `signal_number`'s default action from a tfprof thread (which blocks
// every signal: unblocked here for this one only).
[[noreturn]] void EndWithSignal(int signal_number) {
  prof__remove_staged_files();
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal_number);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  raise(signal_number);
  _exit(128 + signal_number);  // a signal whose default is not to end the process (none here)
}

void OnFatalSignal(int signal_number) {
  const int saved_errno = errno;
  int none = 0;
  const bool first = g_claimed_signal.compare_exchange_strong(none, signal_number);
  if (!first || !g_ready.load() || g_deadline_ms == 0 ||
      write(g_request_pipe[1], &signal_number, sizeof signal_number) != sizeof signal_number) {
    // A second signal (or no watcher): end now, leaving no partial file.
    prof__remove_staged_files();
    RestoreDefaultAndRaise(signal_number);
    errno = saved_errno;
    return;
  }
  if (signal_number == SIGABRT) {
    // abort() ends the process if its handler returns: wait here until the watcher is done.
    WaitReadable(g_release_pipe[0], g_deadline_ms + kGraceMs);
    prof__remove_staged_files();
    RestoreDefaultAndRaise(signal_number);
  }
  // Any other signal: the program goes on, holding whatever locks it held, until the watcher
  // ends it. Nothing here waits.
  errno = saved_errno;
}

void *FlushWhenAsked(void *) {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t got = read(g_flush_pipe[0], &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return nullptr;
    const int signal_number = g_claimed_signal.load();
    char why[64];
    const char *name = sigabbrev_np(signal_number);
    snprintf(why, sizeof why, "SIG%s", name != nullptr ? name : "?");
    g_flush(why);
    WriteByte(g_done_pipe[1], 1);
  }
}

void *WatchSignals(void *) {
  int signal_number = 0;
  for (;;) {
    const ssize_t got = read(g_request_pipe[0], &signal_number, sizeof signal_number);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof signal_number)) return nullptr;
    break;
  }
  WriteByte(g_flush_pipe[1], 1);
  if (!WaitReadable(g_done_pipe[0], g_deadline_ms)) {
    // write(2), not stdio: the flush thread may be stuck holding stderr's lock.
    char line[256];
    const char *name = sigabbrev_np(signal_number);
    const int length = snprintf(line, sizeof line,
                                "tfprof: error: the trace was not written within %d ms of SIG%s "
                                "(TFPROF_SIGNAL_DEADLINE); the program ends without it\n",
                                g_deadline_ms, name != nullptr ? name : "?");
    if (Logs(LogLevel::kError) && length > 0) {
      static_cast<void>(write(STDERR_FILENO, line, static_cast<size_t>(length)));
    }
  }
  if (signal_number == SIGABRT) {
    WriteByte(g_release_pipe[1], 1);  // the aborting thread ends the process, on its own stack
    return nullptr;
  }
  EndWithSignal(signal_number);
}

bool MakePipe(int fds[2]) {
  if (fds[0] >= 0) close(fds[0]);
  if (fds[1] >= 0) close(fds[1]);
  fds[0] = fds[1] = -1;
  // Close-on-exec: an exec'd program starts its own.
  return pipe2(fds, O_CLOEXEC) == 0;
}

// A detached thread that takes no signals: a handler must never run on it.
bool StartThread(void *(*body)(void *), const char *name) {
  sigset_t all_signals;
  sigset_t previous;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous);
  pthread_t thread;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  const int created = pthread_create(&thread, &attributes, body, nullptr);
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (created != 0) return false;
  pthread_setname_np(thread, name);
  return true;
}

bool StartWatcher() {
  for (int *fds : {g_request_pipe, g_flush_pipe, g_done_pipe, g_release_pipe}) {
    if (!MakePipe(fds)) return false;
  }
  if (!StartThread(&FlushWhenAsked, "tfprof-flush") ||
      !StartThread(&WatchSignals, "tfprof-signals")) {
    return false;
  }
  g_ready.store(true);
  return true;
}

void InstallHandlers(bool skip_sigint) {
  for (size_t index = 0; index < sizeof kSignals / sizeof kSignals[0]; ++index) {
    if (skip_sigint && kSignals[index] == SIGINT) continue;
    struct sigaction current {};
    if (sigaction(kSignals[index], nullptr, &current) != 0) continue;
    const bool is_default = (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
    if (!is_default) continue;  // the program's own handler, or ignored: not ours to change
    struct sigaction action {};
    action.sa_handler = &OnFatalSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(kSignals[index], &action, nullptr) == 0) g_installed[index] = true;
  }
}

}  // namespace

void InstallSignalFlush(void (*flush)(const char *why), int deadline_ms, bool python_process) {
  g_flush = flush;
  g_deadline_ms = deadline_ms;
  if (deadline_ms > 0 && !StartWatcher()) {
    Log(LogLevel::kWarning, "cannot watch for signals (%s): a killed program leaves no trace",
        strerror(errno));
    return;
  }
  if (python_process) {
    g_deferred.store(true);
    return;
  }
  InstallHandlers(/*skip_sigint=*/false);
}

void InstallDeferredSignalHandlers() {
  if (!g_deferred.exchange(false)) return;
  InstallHandlers(/*skip_sigint=*/true);
}

void RestartSignalFlushInChild() {
  g_ready.store(false);
  g_claimed_signal.store(0);
  if (g_flush == nullptr || g_deadline_ms == 0) return;
  bool any_installed = false;
  for (const bool installed : g_installed) any_installed = any_installed || installed;
  if ((any_installed || g_deferred.load()) && !StartWatcher()) g_ready.store(false);
}

bool SignalEndPending() { return g_claimed_signal.load() != 0; }

void AwaitSignalEnd() {
  const int signal_number = g_claimed_signal.load();
  // The watcher ends the process within the deadline; this is the fallback if it cannot.
  struct timespec pause_time {0, 10 * 1000 * 1000};
  const int64_t end = MonotonicMs() + g_deadline_ms + kGraceMs;
  while (MonotonicMs() < end) nanosleep(&pause_time, nullptr);
  EndWithSignal(signal_number);
}

}  // namespace tfprof::preload
