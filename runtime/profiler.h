// The control side of the runtime: starting and stopping sessions, the collector thread that
// drains rings into the session's trace model, statistics and export.
#pragma once

#include <cstdint>
#include <memory>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/export/export_context.h"
#include "runtime/options.h"
#include "runtime/thread_buffer.h"
#include "runtime/trace_model.h"

namespace tfprof {

struct SessionStats {
  bool running = false;
  uint64_t events_recorded = 0;
  uint64_t threads = 0;
  uint64_t names = 0;
  LossCounters losses;
};

class Profiler {
 public:
  // The one profiler. Never destroyed (threads may record after static destructors ran).
  static Profiler &Get();

  // Errors: InvalidArgument (bad options), FailedPrecondition (already running),
  // ResourceExhausted.
  absl::Status Start(const char *options);
  // Errors: FailedPrecondition (not running), or the automatic export's error.
  absl::Status Stop();
  // Errors: NotFound (no session ever ran), or ExportTrace()'s errors.
  absl::Status Export(const char *path);
  // Errors: NotFound (no session ever ran).
  absl::Status GetStats(SessionStats *stats);

 private:
  struct Session {
    Options options;
    uint64_t word = 0;
    ExportContext context;  // end_ns and converter are final once stopped
    TraceModel model;
    bool running = false;
  };

  Profiler() = default;

  // Moves every published record into the session's model. With `refresh_names`, also re-reads
  // the OS names of live threads (a few syscalls per thread: not done on periodic drains).
  void Drain(bool refresh_names) ABSL_EXCLUSIVE_LOCKS_REQUIRED(model_mutex_);
  void DrainBuffer(ThreadBuffer &buffer, bool final, bool refresh_names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(model_mutex_);
  // The export context as of now: while running, a refined clock and the current time as end.
  ExportContext ContextNow() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(model_mutex_);
  void CollectorLoop(uint32_t interval_ms);
  void StopCollector() ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mutex_);

  absl::Mutex control_mutex_;  // serialises Start/Stop/Export/GetStats
  absl::Mutex model_mutex_ ABSL_ACQUIRED_AFTER(control_mutex_);  // guards session_'s contents
  std::unique_ptr<Session> session_ ABSL_GUARDED_BY(model_mutex_);
  uint64_t next_generation_ ABSL_GUARDED_BY(control_mutex_) = 1;

  std::thread collector_ ABSL_GUARDED_BY(control_mutex_);
  absl::Mutex collector_mutex_;
  bool collector_stop_ ABSL_GUARDED_BY(collector_mutex_) = false;
};

}  // namespace tfprof
