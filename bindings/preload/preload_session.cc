#include "bindings/preload/preload_session.h"

#include <dlfcn.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "bindings/preload/preload_config.h"
#include "bindings/preload/preload_log.h"
#include "bindings/preload/signal_flush.h"
#include "tfprof/tfprof.h"

namespace tfprof::preload {

// Constant-initialized: valid before any static constructor runs.
std::atomic<StepMarker *> g_step_marker{nullptr};

namespace {

std::mutex g_start_mutex;
bool g_start_attempted = false;  // guarded by g_start_mutex
std::atomic<bool> g_hooks_enabled{false};
// Our session's life: the first of the exit path and the signal flush to finish it writes the
// trace; the other waits until the trace is written.
enum SessionState : int { kNoSession, kRunning, kFinishing, kFinished };
std::atomic<int> g_session_state{kNoSession};
// Whether FinishSession wrote the trace to OutputPath().
std::atomic<bool> g_output_written{false};
// TFPROF_ON_DEMAND: this process listens for `tfprof capture` (prof_listen()) instead of running
// a session of its own.
std::atomic<bool> g_listening{false};
// A process started by the profiled program (not the one tfprof run started).
bool g_descendant = false;
bool g_fork_child = false;  // a fork() child of a profiled process, profiled itself
// Heap objects behind functions: the constructor below may run before this file's static
// initializers.
PreloadConfig &Config() {
  static PreloadConfig *config = new PreloadConfig();
  return *config;
}
std::string &OutputPath() {
  static std::string *path = new std::string();
  return *path;
}
thread_local bool t_inside_own_start = false;

std::optional<std::string> ReadEnvironment(const char *name) {
  const char *value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// This library's own file, for NVTX_INJECTION64_PATH.
std::string OwnLibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&OwnLibraryPath), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  return info.dli_fname;
}

#ifdef TFPROF_PRELOAD_HAVE_NVTX
// NVTX loads the library named by NVTX_INJECTION64_PATH at the program's first NVTX call; naming
// ourselves routes every NVTX range here, with or without a GPU.
void RouteNvtxHere() {
  const std::string own_path = OwnLibraryPath();
  if (own_path.empty()) {
    Log(LogLevel::kWarning, "cannot find this library's path: NVTX ranges are not recorded");
    return;
  }
  const char *current = std::getenv("NVTX_INJECTION64_PATH");
  if (current != nullptr && *current != '\0' && own_path != current) {
    char *resolved = realpath(current, nullptr);
    const bool same = resolved != nullptr && own_path == resolved;
    std::free(resolved);
    if (!same) {
      Log(LogLevel::kWarning,
          "NVTX_INJECTION64_PATH names another tool (%s): NVTX ranges go there, not to tfprof",
          current);
      return;
    }
  }
  setenv("NVTX_INJECTION64_PATH", own_path.c_str(), 1);
}
#endif

// The program is a Python interpreter (the python executable, or a program linking libpython):
// its signal handling must be left to it until it has started (signal_flush.h).
bool IsPythonProcess() { return dlsym(RTLD_DEFAULT, "Py_IsInitialized") != nullptr; }

std::string OutputPathFor(int64_t pid, bool descendant, std::string *error) {
  std::string path;
  if (!ExpandOutputTemplate(Config().output_template, pid, RankFrom(&ReadEnvironment), &path,
                            error)) {
    return "";
  }
  if (descendant && !TemplateNamesPid(Config().output_template)) {
    struct stat info {};
    if (path.back() != '/' && stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) path += '/';
    path = PathForDescendant(path, pid);
  }
  return path;
}

// `options` without its `cuda` item and with cuda=off: items are split on unescaped commas, as
// prof_start() splits them, and a key given twice would be an error there.
std::string WithGpuTracingOff(const std::string &options) {
  std::string kept;
  size_t start = 0;
  for (size_t at = 0; at <= options.size(); ++at) {
    if (at < options.size() && options[at] == '\\') {
      ++at;  // an escaped character, a comma included
      continue;
    }
    if (at < options.size() && options[at] != ',') continue;
    const std::string item = options.substr(start, at - start);
    start = at + 1;
    const size_t equals = item.find('=');
    std::string key = item.substr(0, equals);
    key.erase(0, key.find_first_not_of(' '));
    key.erase(key.find_last_not_of(' ') + 1);
    if (key == "cuda" || item.find_first_not_of(' ') == std::string::npos) continue;
    kept += item + ",";
  }
  return kept + "cuda=off";
}

// prof_start() with the configured options; on failure one line naming the variable to fix.
// `gpu_allowed` false: GPU tracing off whatever the options say.
bool StartProfiling(const std::string &path, bool gpu_allowed = true) {
  std::string options = "output=" + EscapeOptionValue(path);
  if (!Logs(LogLevel::kWarning) && ("," + Config().options).find(",warnings=") == std::string::npos) {
    options += ",warnings=off";
  }
  if (!gpu_allowed) {
    options += "," + WithGpuTracingOff(Config().options);
  } else if (!Config().options.empty()) {
    options += "," + Config().options;
  }
  t_inside_own_start = true;
  const int status = prof_start(options.c_str());
  t_inside_own_start = false;
  if (status != PROF_OK) {
    const std::string reason = prof_last_error();
    const bool about_output = reason.find("'output'") != std::string::npos ||
                              status == PROF_EIO || status == PROF_EFORMAT;
    Log(LogLevel::kError, "%s: %s; profiling is off for this process",
        about_output ? "TFPROF_OUTPUT" : "TFPROF_OPTIONS", reason.c_str());
    return false;
  }
  OutputPath() = path;
  g_session_state.store(kRunning);
  Log(LogLevel::kDebug, "profiling process %d into %s", static_cast<int>(getpid()), path.c_str());
  return true;
}

// On demand: prof_listen() with the options a session would get (warnings off as above, GPU
// tracing off where `gpu_allowed` is false), so that every capture records what `tfprof run`
// records. The hooks stay on; they record only while a capture's session runs.
bool StartListening(bool gpu_allowed, LogLevel announce) {
  std::string options = Config().options;
  if (!Logs(LogLevel::kWarning) && ("," + options).find(",warnings=") == std::string::npos) {
    options += options.empty() ? "warnings=off" : ",warnings=off";
  }
  if (!gpu_allowed) options = WithGpuTracingOff(options);
  t_inside_own_start = true;  // the thread that waits for captures is tfprof's
  const int status = prof_listen(options.c_str());
  t_inside_own_start = false;
  if (status != PROF_OK) {
    Log(LogLevel::kError, "%s: %s; profiling is off for this process",
        status == PROF_EOPTION ? "TFPROF_OPTIONS" : "cannot wait for captures", prof_last_error());
    return false;
  }
  g_listening.store(true);
  const int pid = static_cast<int>(getpid());
  Log(announce, "process %d waits for `tfprof capture %d`", pid, pid);
  return true;
}

// The signal flush's work: the session's trace, or on demand the capture in progress, if any
// (prof_unlisten() ends it and writes it before the signal ends the program).
void FlushAtSignal(const char *why) {
  if (g_listening.exchange(false)) {
    prof_unlisten();
    return;
  }
  FinishSession(why);
}

void WriteAtExit() {
  FinishSession("exit");
  // A signal came first: the program ends by that signal, as it would have without tfprof.
  if (SignalEndPending()) AwaitSignalEnd();
}

// Runs in a fork() child, after libtfprof abandoned the parent's session there.
void AfterForkInChild() {
  g_session_state.store(kNoSession);
  g_listening.store(false);  // the parent's endpoint was closed here (capture_agent.cc)
  t_inside_own_start = true;  // the threads made here are tfprof's
  RestartSignalFlushInChild();
  t_inside_own_start = false;
  if (!g_hooks_enabled.load()) return;
  if (!Config().follow_children) {
    Log(LogLevel::kDebug, "fork child %d is not profiled (TFPROF_FOLLOW_CHILDREN=0)",
        static_cast<int>(getpid()));
    return;
  }
  // Its own file, named as an exec'd child's is (the pid before the extension when the path has
  // no %p): multiprocessing's and DataLoader's forked workers keep what they record. One that
  // records nothing leaves no file (RemoveIfNothingRecorded).
  // GPU tracing stays off there: CUDA cannot be used in a forked child of a process that used it,
  // and CUPTI set up there hangs (seen on an H200: a DataLoader's forked workers under
  // `tfprof run --options cuda=on` never ended).
  g_fork_child = true;
  if (Config().on_demand) {
    // Capturable by its own pid. Announced at debug level only: a DataLoader forks its workers
    // again every epoch; `tfprof capture --all` finds them.
    if (!StartListening(/*gpu_allowed=*/false, LogLevel::kDebug)) g_hooks_enabled.store(false);
    return;
  }
  std::string error;
  const std::string path = OutputPathFor(getpid(), true, &error);
  if (path.empty() || !StartProfiling(path, /*gpu_allowed=*/false)) g_hooks_enabled.store(false);
}

void StartLocked() {
  if (getauxval(AT_SECURE) != 0) return;  // set-uid or set-gid: never act on the environment
  std::string error;
  if (!ParsePreloadConfig(&ReadEnvironment, &Config(), &error)) {
    Log(LogLevel::kError, "%s; profiling is off for this process", error.c_str());
    return;
  }
  g_log_level.store(static_cast<int>(Config().log_level));
  const int64_t pid = getpid();
  const char *root = std::getenv("TFPROF_ROOT_PID");
  const bool descendant = root != nullptr && std::atoll(root) != pid;
  if (root == nullptr) setenv("TFPROF_ROOT_PID", std::to_string(pid).c_str(), 1);
  if (descendant && !Config().follow_children) {
    Log(LogLevel::kDebug, "process %d is not profiled (TFPROF_FOLLOW_CHILDREN=0)",
        static_cast<int>(pid));
    return;
  }
  g_descendant = descendant;
  const std::string path = Config().on_demand ? "" : OutputPathFor(pid, descendant, &error);
  if (!Config().on_demand && path.empty()) {
    Log(LogLevel::kError, "%s; profiling is off for this process", error.c_str());
    return;
  }
  g_step_marker.store(new StepMarker(Config().step_markers));
#ifdef TFPROF_PRELOAD_HAVE_NVTX
  RouteNvtxHere();
#endif
  // prof_listen() registers the capture agent's fork handler: before ours, so that in a child the
  // parent's endpoint is forgotten before AfterForkInChild listens on the child's own.
  if (Config().on_demand ? !StartListening(/*gpu_allowed=*/true, LogLevel::kInfo)
                         : !StartProfiling(path)) {
    return;
  }
  std::atexit(&WriteAtExit);  // on demand: the library's own exit handler writes a capture
  pthread_atfork(nullptr, nullptr, &AfterForkInChild);
  InstallSignalFlush(&FlushAtSignal, Config().signal_deadline_ms, IsPythonProcess());
  g_hooks_enabled.store(true);
}

}  // namespace

void EnsureStarted() {
  try {
    std::lock_guard<std::mutex> lock(g_start_mutex);
    if (g_start_attempted) return;
    g_start_attempted = true;
    StartLocked();
  } catch (const std::exception &error) {
    DisableAfterFailure(error.what());
  } catch (...) {
    DisableAfterFailure("unknown exception");
  }
}

bool HooksEnabled() { return g_hooks_enabled.load(std::memory_order_relaxed); }

bool InsideOwnStart() { return t_inside_own_start; }

// A helper program the profiled program ran that recorded nothing (the `uname -p` Python runs for
// platform.processor(), a shell), or a forked child that recorded nothing (a DataLoader worker),
// leaves no empty trace beside the program's: its file is removed again. Python programs started
// as children (multiprocessing's spawned workers) keep theirs, as do directory outputs.
static bool RemoveIfNothingRecorded(const prof_stats_t &stats) {
  const bool removable = g_fork_child || (g_descendant && !IsPythonProcess());
  if (!removable || stats.events_recorded != 0 || stats.events_dropped != 0 ||
      stats.gpu_records != 0) {
    return false;
  }
  struct stat info {};
  if (stat(OutputPath().c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  if (unlink(OutputPath().c_str()) != 0) return false;
  Log(LogLevel::kDebug, "process %d recorded nothing: no trace written (%s)",
      static_cast<int>(getpid()), OutputPath().c_str());
  return true;
}

// "N events", or "N of M events: K lost to full rings (...), ...": what the written file holds
// of every event recorded or dropped, and why the rest is not in it. Formats into `text` (no
// allocation: this may run at a signal).
static void DescribeContent(const prof_stats_t &stats, char *text, size_t size) {
  const unsigned long long recorded = stats.events_recorded;
  const unsigned long long memory = stats.events_memory_dropped;
  const unsigned long long window = stats.events_discarded;
  const unsigned long long held = recorded - std::min<unsigned long long>(recorded, memory + window);
  const unsigned long long rings = stats.events_dropped;
  if (held == recorded && rings == 0) {
    std::snprintf(text, size, "%llu events", held);
    return;
  }
  int used = std::snprintf(text, size, "%llu of %llu events:", held, recorded + rings);
  const char *separator = " ";
  auto cause = [&](unsigned long long count, const char *why) {
    if (count == 0 || used < 0 || static_cast<size_t>(used) >= size) return;
    used += std::snprintf(text + used, size - static_cast<size_t>(used), "%s%llu %s", separator,
                          count, why);
    separator = ", ";
  };
  cause(rings, "lost to full rings (raise buffer_events, or wait: full_ring_wait_ms)");
  cause(memory, "lost to memory or a slow disk (events_memory_dropped)");
  cause(window, "outside the keep= window");
}

void FinishSession(const char *why) {
  int state = kRunning;
  if (!g_session_state.compare_exchange_strong(state, kFinishing)) {
    // Another thread is writing the trace: return once it is written.
    while (state == kFinishing) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      state = g_session_state.load();
    }
    return;
  }
  const int status = prof_stop();
  if (status == PROF_OK) {
    prof_stats_t stats{};
    stats.struct_size = sizeof stats;
    prof_get_stats(&stats);
    if (RemoveIfNothingRecorded(stats)) {
      g_session_state.store(kFinished);
      return;
    }
    g_output_written.store(true);
    char content[320];
    DescribeContent(stats, content, sizeof content);
    char gpu[64] = "";
    if (stats.gpu_records != 0) {
      std::snprintf(gpu, sizeof gpu, ", %llu GPU records (%llu dropped by CUPTI)",
                    static_cast<unsigned long long>(stats.gpu_records),
                    static_cast<unsigned long long>(stats.gpu_records_dropped));
    }
    Log(LogLevel::kInfo, "wrote %s (%s; %llu threads%s; at %s)", OutputPath().c_str(), content,
        static_cast<unsigned long long>(stats.threads), gpu, why);
  } else if (status != PROF_ENOTSTARTED) {
    Log(LogLevel::kError, "could not write %s: %s", OutputPath().c_str(), prof_last_error());
  }
  g_session_state.store(kFinished);
}

void DisableAfterFailure(const char *what) {
  static std::atomic<bool> reported{false};
  g_hooks_enabled.store(false);
  if (!reported.exchange(true)) {
    Log(LogLevel::kError, "internal failure (%s); profiling is off for the rest of this process",
        what);
  }
}

}  // namespace tfprof::preload

// LD_PRELOAD: start before main() (and before most of the program's own constructors).
__attribute__((constructor)) static void TfprofPreloadConstructor() {
  tfprof::preload::EnsureStarted();
}

// Python's `tfprof run` start-up module calls this once the interpreter has set up its own signal
// handling: SIGTERM, SIGHUP and SIGABRT then write the trace as in any program (SIGINT stays
// Python's KeyboardInterrupt). Returns 1 when the preload's session runs in this process.
extern "C" __attribute__((visibility("default"))) int tfprof_preload_python_started(void) {
  tfprof::preload::InstallDeferredSignalHandlers();
  return tfprof::preload::HooksEnabled() ? 1 : 0;
}

// How many steps NVTX step markers (TFPROF_STEP_MARKER) have opened in this process: Python's
// framework integrations stop marking steps of their own once the program marks some.
extern "C" __attribute__((visibility("default"))) uint64_t tfprof_preload_marked_steps(void) {
  const tfprof::preload::StepMarker *marker =
      tfprof::preload::g_step_marker.load(std::memory_order_acquire);
  return marker == nullptr ? 0 : marker->steps_marked();
}

// Whether this process listens for `tfprof capture` (tfprof run --on-demand) rather than running
// a session: Python's integrations then leave out what needs a session for the whole run.
extern "C" __attribute__((visibility("default"))) int tfprof_preload_on_demand(void) {
  return tfprof::preload::Config().on_demand && tfprof::preload::HooksEnabled() ? 1 : 0;
}

// Python's Keras integration calls this at the interpreter's exit, before the C library's exit
// handlers: the session stops and its trace is written now, so that TensorFlow's profile can be
// folded into it. Returns the path written, or NULL when nothing was (no session, or a failure
// already reported). The path stays valid until the process exits.
// Python's forked children call it before os._exit(), which skips the exit handlers: on demand it
// stops listening, which ends and writes a capture in progress.
extern "C" __attribute__((visibility("default"))) const char *tfprof_preload_finish(void) {
  if (tfprof::preload::g_listening.exchange(false)) {
    prof_unlisten();
    return nullptr;
  }
  tfprof::preload::FinishSession("the interpreter's exit");
  return tfprof::preload::g_output_written.load() ? tfprof::preload::OutputPath().c_str() : nullptr;
}

// CUDA_INJECTION64_PATH: the CUDA driver calls this from cuInit.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  tfprof::preload::EnsureStarted();
  return 1;
}
