// The control side of the runtime: starting and stopping sessions, the collector thread that
// drains rings into the session's trace model, statistics and export.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <condition_variable>
#include <mutex>

#include "absl/status/status.h"
#include "runtime/storage/background_writer.h"
#include "runtime/export/export_context.h"
#include "runtime/export/exporter.h"
#include "runtime/export/trace_stream.h"
#include "runtime/session/fair_mutex.h"
#include "runtime/gpu/gpu_settling.h"
#include "runtime/gpu/gpu_tracer.h"
#include "runtime/session/memory_limits.h"
#include "runtime/session/options.h"
#include "runtime/collector/thread_buffer.h"
#include "runtime/session/session_log.h"

namespace tfprof {

struct SessionStats {
  bool running = false;
  int serial = 0;  // prof_session_active's value while the session ran
  uint64_t events_recorded = 0;
  uint64_t threads = 0;
  uint64_t names = 0;
  LossCounters losses;
  GpuTracingState gpu_state = GpuTracingState::kOff;
  uint64_t gpu_records = 0;  // kernels, copies, memsets and API calls collected so far
  GpuLossCounters gpu_losses;
  int64_t memory_bytes = 0;  // collected records held in memory now
  uint64_t spill_bytes = 0;  // collected records in the spill file now
  uint64_t slow_step_dumps = 0;
};

class Profiler {
 public:
  // The one profiler. Never destroyed (threads may record after static destructors ran).
  static Profiler &Get();

  // Errors: InvalidArgument (bad options), FailedPrecondition (already running),
  // Aborted (cuda=on and GPU tracing cannot start), ResourceExhausted. `for_capture`: the session
  // of a `tfprof capture` (runtime/capture/), which errors name.
  absl::Status Start(const char *options, bool for_capture = false);
  // Errors: FailedPrecondition (not running, or a capture's session and not `by_capture`: the
  // program's prof_stop() must not end a capture), or the automatic export's error. Also stops a
  // session whose recording HaltRecording() ended.
  absl::Status Stop(bool by_capture = false);
  // Stop(by_capture) for a capture's thread, with the stopped session's statistics taken under
  // the same lock (the program may start a session of its own right after).
  absl::Status StopCapture(SessionStats *stats);

  // Captures (runtime/capture/capture_trigger.h). While a capture waits for a step boundary,
  // prof_session_active holds kArmedSessionValue, which no session's serial is: the inline
  // hot-path wrappers then call into the library, whose prof_begin_step() starts the capture.
  // ArmForCapture() returns false (and changes nothing) while a session runs.
  static constexpr int kArmedSessionValue = 0x7fffffff;
  bool ArmForCapture();
  void DisarmCapture();
  // In a fork() child, where another thread may have held the control lock: takes none.
  void ResetCaptureAfterFork();
  // From any thread (a step boundary on the program's thread): ends the recording of the session
  // whose word is `word` at once, as Stop() begins; Stop() on the capture's thread does the
  // rest. False if that session is not recording (stopped, halted, or another one).
  static bool HaltRecording(uint64_t word);
  // Frees a stopped session's data if it was a capture's (once written): a dormant process holds
  // nothing between captures. A running session, or the program's own, is left alone.
  void DiscardStoppedCapture();
  // Errors: NotFound (no session ever ran), or ExportTrace()'s errors.
  absl::Status Export(const char *path);
  // Errors: NotFound (no session ever ran).
  absl::Status GetStats(SessionStats *stats);

 private:
  struct Session {
    Options options;
    uint64_t word = 0;
    bool for_capture = false;  // a `tfprof capture`'s session
    ExportContext context;  // end_ns and converter are final once stopped
    SessionLog model;
    bool running = false;
    Format output_format = Format::kChromeJson;
    // The output growing while the session runs (output= a .json, .tfrecord or log directory):
    // the collector encodes its pieces, the writer thread writes them.
    std::unique_ptr<TraceStream> stream;
    uint64_t stream_dropped = 0;  // records the stream dropped, once it is finished
    // The stream's file (a log directory's event file); it outlives the stream: once the session
    // has let go of events the file holds (records_released), exports convert it.
    std::string stream_path;
    // g_events_without_buffer when the session started, and (once stopped) what it added.
    uint64_t events_without_buffer_at_start = 0;
    uint64_t events_without_buffer = 0;
    int64_t last_drain_start_ns = 0;  // every event stamped before this has been drained
    // GPU tracing, when it runs. The tracer is used outside model_mutex_ (CUPTI may call back).
    std::unique_ptr<GpuTracer> gpu;
    GpuSettling gpu_settling;
    int64_t gpu_flushed_through_ns = 0;  // start of the last forced CUPTI flush
    bool step_marked = false;            // a drain saw a step begin or end since the last flush
    // Registered name id - 1 -> the model's name id + 1 (0: not seen yet in this session).
    std::vector<uint32_t> registered_name_ids;
    // keep=last:N: the latest N distinct steps begun, oldest first, with their first begin.
    std::deque<std::pair<int64_t, uint64_t>> recent_steps;
    // dump_on_slow_step: durations of the latest steps (ns), and a slow step waiting for its dump.
    std::deque<int64_t> step_durations_ns;
    bool slow_step_pending = false;
    int64_t slow_step = 0;
    int64_t slow_step_ns = 0;
    int64_t slow_step_median_ns = 0;
    uint64_t slow_step_dumps = 0;
    SpillWarnings spill_warnings;
    // The spill writes' thread. Declared last: destroyed (joined, its writes done) before the
    // spill file and the model they write from.
    std::unique_ptr<BackgroundWriter> writer;
  };

  Profiler() = default;

  // pthread_atfork handlers (see profiler.cc).
  static void BeforeFork();
  static void AfterForkInParent();
  static void AfterForkInChild();

  // Export() once the session has let go of events its streamed output holds: converts the
  // output to `path`. Caller holds model_mutex_.
  absl::Status ExportFromOutput(const char *path);
  // A streamed TensorBoard output's XPlane profile for the Profile tab, made at stop from the
  // event file (unless tensorboard_profile=off); a failure is a warning on stderr.
  void WriteStreamedProfile();

  // Moves every published record into the session's model. With `refresh_names`, also re-reads
  // the OS names of live threads (a few syscalls per thread: not done on periodic drains).
  // Caller holds model_mutex_.
  void Drain(bool refresh_names);
  void DrainBuffer(ThreadBuffer &buffer, bool final, bool refresh_names);
  // Files the range ends that found their ring full (range_end_overflow.h) on their threads'
  // rows. Caller holds model_mutex_, right after the rings' drain.
  void DrainOverflowRangeEnds();
  // The export context as of now: while running, a refined clock and the current time as end.
  // Caller holds model_mutex_.
  ExportContext ContextNow() const;
  // The same without the stream's own drops, which the stream adds itself.
  ExportContext ContextForStream() const;
  // Events this session lost because their thread could get no buffer (out of memory).
  uint64_t EventsWithoutBuffer() const;
  // The session's tick converter, refined to now while running. Caller holds model_mutex_.
  TickConverter ConverterNow() const;
  // Appends the steps that have settled to the session's growing output file, if it has one.
  // Caller holds model_mutex_, right after a Drain that began at `drain_start_ns`.
  void AppendSettledSteps(int64_t drain_start_ns);
  void CollectorLoop(uint32_t interval_ms);
  // Asks CUPTI for its records (forced: partly filled buffers too), then, under model_mutex_,
  // moves them into the model. Caller holds control_mutex_ or is the collector, not model_mutex_.
  void CollectGpuRecords(bool forced);
  // Under model_mutex_: moves parsed GPU records into the model.
  void MoveGpuRecords();
  // At stop: waits (up to gpu_wait_ms) for the GPU work of launches already seen, then stops CUPTI.
  void FinishGpu();
  // Caller holds control_mutex_.
  void StopCollector();
  absl::Status StopLocked(bool by_capture);
  absl::Status GetStatsLocked(SessionStats *stats);
  // Under model_mutex_: evicts what fell out of the keep= window, then keeps the records within
  // max_memory_mb (memory_limits.h), warning once about what that costs.
  void EnforceMemoryLimits();
  // Under model_mutex_: evicts the records older than the keep= window.
  void ApplyKeepWindow();
  // Under model_mutex_, on the drain: notes a step's begin and times the step it ends.
  void NoteStepBegin(ThreadLog &track, const Event &event);
  void NoteStepEnd(ThreadLog &track, uint64_t end_ticks);
  void NoteStepCancelled(ThreadLog &track);
  void NoteStepEnded(const StepMarks<uint64_t>::Step &step);  // times it for dump_on_slow_step
  // Under model_mutex_: writes the kept window next to `output` when a step was slow.
  void DumpSlowStep();

  // std::mutex rather than absl::Mutex: Debian's Abseil is not built with ThreadSanitizer, so
  // its Mutex would hide this synchronisation from the race detector the tests run under.
  // Lock order: control_mutex_, then model_mutex_, then the registry's and a buffer's.
  // Serialises Start/Stop/Export/GetStats, in the order they come (a program calling one in a
  // loop starves no other caller); guards the fields below.
  FairMutex control_mutex_;
  uint64_t next_generation_ = 1;
  // A capture waits for a step (ArmForCapture): prof_session_active holds kArmedSessionValue
  // whenever no session runs, also after the program's own session stops.
  bool capture_armed_ = false;
  std::thread collector_;

  std::mutex model_mutex_;  // guards session_ and what it holds
  std::unique_ptr<Session> session_;
  // The program's own stopped session while a capture's runs in its place (restored after).
  std::unique_ptr<Session> parked_session_;

  std::mutex collector_mutex_;  // guards collector_stop_
  std::condition_variable collector_wake_;
  bool collector_stop_ = false;
};

}  // namespace tfprof
