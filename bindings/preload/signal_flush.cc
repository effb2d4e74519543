#include "bindings/preload/signal_flush.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "bindings/preload/preload_log.h"

namespace tfprof::preload {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGABRT};
// How long a dying program waits for its trace: long enough for a large export, short enough
// that a flush stuck on a lock the interrupted thread held does not hang the program for long.
constexpr int kFlushTimeoutMs = 30000;

void (*g_flush)(const char *why) = nullptr;
int g_request_pipe[2] = {-1, -1};  // handler -> watcher: the signal number
int g_done_pipe[2] = {-1, -1};     // watcher -> handler: written
std::atomic<bool> g_watcher_ready{false};
std::atomic<bool> g_flush_claimed{false};
bool g_installed[sizeof kSignals / sizeof kSignals[0]] = {};

void RestoreDefaultAndRaise(int signal_number) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, nullptr);
  raise(signal_number);  // blocked while this handler runs; delivered as it returns
}

// Async-signal-safe: write, poll, sigaction and raise only.
void OnFatalSignal(int signal_number) {
  const int saved_errno = errno;
  // Only the first signal waits for the trace; a second one (a second Ctrl-C) ends at once.
  if (g_watcher_ready.load() && !g_flush_claimed.exchange(true)) {
    const unsigned char byte = static_cast<unsigned char>(signal_number);
    if (write(g_request_pipe[1], &byte, 1) == 1) {
      struct timespec start {};
      clock_gettime(CLOCK_MONOTONIC, &start);
      for (;;) {
        struct timespec now {};
        clock_gettime(CLOCK_MONOTONIC, &now);
        const long waited_ms =
            (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (waited_ms >= kFlushTimeoutMs) break;
        struct pollfd done {g_done_pipe[0], POLLIN, 0};
        const int ready = poll(&done, 1, static_cast<int>(kFlushTimeoutMs - waited_ms));
        if (ready > 0 || (ready < 0 && errno != EINTR)) break;
      }
    }
  }
  RestoreDefaultAndRaise(signal_number);
  errno = saved_errno;
}

void *WatchSignals(void *) {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t got = read(g_request_pipe[0], &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return nullptr;
    const int signal_number = byte;
    char why[64];
    const char *name = sigabbrev_np(signal_number);
    snprintf(why, sizeof why, "SIG%s", name != nullptr ? name : "?");
    g_flush(why);
    const unsigned char done = 1;
    while (write(g_done_pipe[1], &done, 1) < 0 && errno == EINTR) {
    }
  }
}

// Pipes (close-on-exec: an exec'd program starts its own) and the watcher thread, which takes no
// signals itself: a handler waiting on the watcher must never run on it.
bool StartWatcher() {
  for (int *fds : {g_request_pipe, g_done_pipe}) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    fds[0] = fds[1] = -1;
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
  }
  sigset_t all_signals;
  sigset_t previous;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous);
  pthread_t thread;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  const int created = pthread_create(&thread, &attributes, &WatchSignals, nullptr);
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (created != 0) return false;
  pthread_setname_np(thread, "tfprof-signals");
  g_watcher_ready.store(true);
  return true;
}

}  // namespace

void InstallSignalFlush(void (*flush)(const char *why)) {
  g_flush = flush;
  if (!StartWatcher()) {
    Log(LogLevel::kWarning, "cannot watch for signals (%s): a killed program leaves no trace",
        strerror(errno));
    return;
  }
  for (size_t index = 0; index < sizeof kSignals / sizeof kSignals[0]; ++index) {
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

void RestartSignalFlushInChild() {
  g_watcher_ready.store(false);
  g_flush_claimed.store(false);
  if (g_flush == nullptr) return;
  bool any_installed = false;
  for (const bool installed : g_installed) any_installed = any_installed || installed;
  if (any_installed && !StartWatcher()) g_watcher_ready.store(false);
}

}  // namespace tfprof::preload
