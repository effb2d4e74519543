#include "runtime/session/profiler.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/convert/convert.h"
#include "runtime/export/exporter.h"
#include "runtime/formats/format.h"
#include "runtime/session/memory_limits.h"
#include "runtime/session/proc_self.h"
#include "runtime/collector/range_end_overflow.h"
#include "runtime/collector/recorder.h"
#include "runtime/collector/registered_names.h"
#include "runtime/collector/thread_registry.h"
#include "runtime/common/own_threads.h"
#include "tfprof/tfprof.h"

namespace tfprof {

namespace {

// How far a streamed output's writes may fall behind: a few pieces of a busy session.
constexpr int64_t kStreamWriterSlackBytes = int64_t{16} << 20;

// The value prof_session_active holds while a session runs: nonzero and different from the
// previous session's, so bindings can tell "a new session began" with the same one load.
int SessionSerial(uint64_t word) {
  const uint64_t generation = word >> 1;
  // 1 .. 0x7ffffffe: 0x7fffffff is Profiler::kArmedSessionValue, never a session's.
  return static_cast<int>(generation % 0x7ffffffe) + 1;
}

// cuda=auto without GPU tracing: one line on stderr per distinct cause in a process, so a program
// that starts many sessions is not flooded, and host tracing goes on.
void WarnGpuUnavailable(const GpuTrace &gpu) {
  if (gpu.state != GpuTracingState::kUnavailable && gpu.state != GpuTracingState::kNotBuilt) return;
  static std::mutex mutex;
  static std::set<std::string> *warned = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  if (!warned->insert(gpu.reason).second) return;
  std::fprintf(stderr,
               "tfprof: warning: GPU tracing is off for this session: %s. Host tracing goes on "
               "(option cuda=off turns GPU tracing off without this warning).\n",
               gpu.reason.c_str());
}

}  // namespace

Profiler &Profiler::Get() {
  static Profiler *profiler = [] {
    auto *created = new Profiler();
    pthread_atfork(&Profiler::BeforeFork, &Profiler::AfterForkInParent, &Profiler::AfterForkInChild);
    return created;
  }();
  return *profiler;
}

// fork() copies the session into the child without the collector thread (or any other thread).
// The child must neither write the parent's output nor wait on locks another thread held, so the
// locks are taken around fork() and the child abandons the copied session, leaking it: its
// destructors would flush the parent's stream file and call into CUPTI. The child may start its
// own session (the preload library does, for outputs named with %p).
void Profiler::BeforeFork() {
  Profiler &profiler = Get();
  profiler.control_mutex_.lock();
  profiler.model_mutex_.lock();
  ThreadRegistry::Get().LockForFork();
  profiler.collector_mutex_.lock();
}

void Profiler::AfterForkInParent() {
  Profiler &profiler = Get();
  profiler.collector_mutex_.unlock();
  ThreadRegistry::Get().UnlockAfterFork();
  profiler.model_mutex_.unlock();
  profiler.control_mutex_.unlock();
}

void Profiler::AfterForkInChild() {
  Profiler &profiler = Get();
  const uint64_t word = g_session_word.load(std::memory_order_relaxed);
  if (SessionRunning(word)) {
    std::atomic_ref<int>(prof_session_active).store(0, std::memory_order_relaxed);
    g_session_word.store(word & ~uint64_t{1}, std::memory_order_release);
    g_gpu_correlation_enabled.store(false, std::memory_order_release);
    g_full_ring_wait_ms.store(0, std::memory_order_relaxed);  // no collector to wait for
    // The collector does not exist here: forget its handle without joining.
    if (profiler.collector_.joinable()) new std::thread(std::move(profiler.collector_));
  }
  // A stopped session too: its writer thread (kept for exports) does not exist here, and
  // destroying the session, as the child's own prof_start() would, waits to join it forever.
  static_cast<void>(profiler.session_.release());
  static_cast<void>(profiler.parked_session_.release());
  profiler.capture_armed_ = false;
  ResetOverflowRangeEndsAfterFork();
  // The copied condition variable still counts the parent's collector among its waiters, and a
  // notify here would wait for that thread to leave, which never happens in this process: a new
  // one in its place (the old one's memory is plain data; destroying it would wait the same way).
  new (&profiler.collector_wake_) std::condition_variable();
  profiler.collector_mutex_.unlock();
  ThreadRegistry::Get().UnlockAfterFork();
  profiler.model_mutex_.unlock();
  // Not unlock(): other threads' tickets (taken before fork) would never be served here.
  profiler.control_mutex_.ResetAfterFork();
}

absl::Status Profiler::Start(const char *options_text, bool for_capture) {
  std::lock_guard<FairMutex> control(control_mutex_);
  absl::StatusOr<Options> options = ParseOptions(options_text);
  if (!options.ok()) return options.status();
  Format output_format = Format::kChromeJson;
  if (!options->format.empty()) {
    if (options->output.empty()) {
      return absl::InvalidArgumentError("option 'format' needs option 'output'");
    }
    FormatForName(options->format, &output_format).IgnoreError();  // ParseOptions checked it
  } else if (!options->output.empty()) {
    absl::Status status = FormatForPath(options->output, &output_format);
    if (status.ok()) status = CheckWritable(options->output, output_format);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("option 'output': ", status.message()));
    }
  }
  // A capture's session whose recording ended at its last step is still running until the
  // capture's thread has stopped it: its collector, stream and model are in use.
  if (SessionRunning(g_session_word.load(std::memory_order_relaxed)) ||
      (session_ != nullptr && session_->running)) {
    return absl::FailedPreconditionError(
        session_ != nullptr && session_->for_capture
            ? "a profiling session is already running: a `tfprof capture` of this process; it "
              "ends by itself after its steps or seconds"
            : "a profiling session is already running");
  }
  try {
    auto session = std::make_unique<Session>();
    session->options = *options;
    session->for_capture = for_capture;
    if (for_capture) capture_armed_ = false;  // the capture waited for this start
    session->word = (next_generation_++ << 1) | 1;
    session->running = true;
    ExportContext &context = session->context;
    context.pid = getpid();
    context.tensorboard_profile = options->tensorboard_profile;
    context.process_name = ReadFirstLine("/proc/self/comm");
    if (context.process_name.empty()) context.process_name = "process";
    context.command_line = ReadCommandLine();
    context.clock = options->clock;
    g_clock_source.store(options->clock, std::memory_order_relaxed);
    context.converter = TickConverter::Start(options->clock);
    context.start_monotonic_ns = context.converter.start_ns();
    context.start_wall_ns = WallNowNs() - (MonotonicNowNs() - context.start_monotonic_ns);
    session->output_format = output_format;
    session->model.store.spill_enabled = options->max_memory_mb > 0;
    session->model.store.spill_directory = options->spill_dir;
    // The output grows while the session runs, except .json.gz (written at stop) and a flight
    // recorder's (keep=last:...), which holds only the kept window, written at stop.
    const bool streamed = (output_format == Format::kChromeJson ||
                           output_format == Format::kTfRecord ||
                           output_format == Format::kTensorBoard ||
                           output_format == Format::kPerfetto) &&
                          options->keep.mode == KeepWindow::Mode::kAll;
    if (session->model.store.spill_enabled || (streamed && !options->output.empty())) {
      // Spill writes and streamed pieces may fall behind by WriterSlackBytes() (a stream's by a
      // few pieces more) before chunks wait in memory and pieces are dropped: the collector
      // itself never waits for the disk.
      const int64_t slack = WriterSlackBytes(options->max_memory_mb);
      session->writer = std::make_unique<BackgroundWriter>(static_cast<size_t>(
          streamed ? std::max<int64_t>(slack, kStreamWriterSlackBytes) : slack));
      if (session->model.store.spill_enabled) session->model.store.writer = session->writer.get();
    }
    session->last_drain_start_ns = context.start_monotonic_ns;
    session->gpu_flushed_through_ns = context.start_monotonic_ns;
    absl::StatusOr<std::unique_ptr<GpuTracer>> gpu =
        GpuTracer::Start(options->gpu, &session->model.gpu);
    if (!gpu.ok()) return gpu.status();
    session->gpu = std::move(*gpu);
    if (session->gpu == nullptr && options->warnings) WarnGpuUnavailable(session->model.gpu);
    if (streamed && !options->output.empty()) {
      // Created now, so a bad path fails prof_start rather than the end of a long run.
      absl::StatusOr<std::unique_ptr<TraceStream>> stream =
          TraceStream::Open(output_format, options->output, context, session->writer.get());
      if (!stream.ok()) return stream.status();
      session->stream = std::move(*stream);
      session->stream_path = session->stream->path();
    }
    {
      std::lock_guard<std::mutex> lock(model_mutex_);
      // Records still in rings belong to the previous session and are discarded by the drain
      // (their generation differs); the previous model is dropped with its session, except the
      // program's own stopped one under a capture's, kept until the capture is done (its data
      // stays exportable, as prof_start() promises until the program's next start).
      if (for_capture && session_ != nullptr && !session_->for_capture) {
        parked_session_ = std::move(session_);
      } else {
        parked_session_.reset();
      }
      session_ = std::move(session);
      Drain(false);
    }
    ThreadRegistry::Get().SetRingCapacity(options->buffer_events);
    g_gpu_correlation_enabled.store(session_->gpu != nullptr, std::memory_order_release);
    session_->events_without_buffer_at_start = g_events_without_buffer.load(std::memory_order_relaxed);
    g_full_ring_wait_ms.store(options->full_ring_wait_ms, std::memory_order_relaxed);
    g_session_word.store(session_->word, std::memory_order_release);
    std::atomic_ref<int>(prof_session_active)
        .store(SessionSerial(session_->word), std::memory_order_relaxed);
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError("out of memory starting a profiling session");
  }
  if (options->flush_interval_ms > 0) {
    {
      std::lock_guard<std::mutex> lock(collector_mutex_);
      collector_stop_ = false;
    }
    collector_ = StartOwnThread(
        [this, interval_ms = options->flush_interval_ms] { CollectorLoop(interval_ms); });
  }
  return absl::OkStatus();
}

absl::Status Profiler::Stop(bool by_capture) {
  std::lock_guard<FairMutex> control(control_mutex_);
  return StopLocked(by_capture);
}

absl::Status Profiler::StopCapture(SessionStats *stats) {
  std::lock_guard<FairMutex> control(control_mutex_);
  const absl::Status status = StopLocked(/*by_capture=*/true);
  // Under the same lock: the program's own prof_start() cannot replace the session first.
  if (session_ != nullptr && session_->for_capture) GetStatsLocked(stats).IgnoreError();
  return status;
}

absl::Status Profiler::StopLocked(bool by_capture) {
  const uint64_t word = g_session_word.load(std::memory_order_relaxed);
  if (!by_capture && session_ != nullptr && session_->running && session_->for_capture) {
    return absl::FailedPreconditionError(
        "no profiling session of the program's is running: the running one is a `tfprof "
        "capture`'s, which ends by itself after its steps or seconds");
  }
  // A capture's session whose recording HaltRecording() ended at a step boundary still runs here.
  const bool halted = !SessionRunning(word) && session_ != nullptr && session_->running &&
                      word == (session_->word & ~uint64_t{1});
  if (!SessionRunning(word) && !halted) {
    return absl::FailedPreconditionError("no profiling session is running");
  }
  if (!halted) {
    // A capture armed while the program's own session ran waits for a step of the next one.
    std::atomic_ref<int>(prof_session_active)
        .store(capture_armed_ ? kArmedSessionValue : 0, std::memory_order_relaxed);
    g_session_word.store(word & ~uint64_t{1}, std::memory_order_release);
  }
  g_full_ring_wait_ms.store(0, std::memory_order_relaxed);  // the collector is about to go
  session_->events_without_buffer = EventsWithoutBuffer();
  StopCollector();
  g_gpu_correlation_enabled.store(false, std::memory_order_release);
  FinishGpu();
  std::lock_guard<std::mutex> lock(model_mutex_);
  Drain(true);
  MoveGpuRecords();
  session_->events_without_buffer = EventsWithoutBuffer();  // a thread racing the stop
  session_->running = false;
  session_->context.end_ns = MonotonicNowNs();
  session_->context.converter = session_->context.converter.Refined();
  if (session_->stream != nullptr) {
    absl::Status status = session_->stream->Finish(session_->model, ContextForStream());
    session_->model.gpu.losses.late_records = session_->stream->late_gpu_records();
    session_->stream_dropped = session_->stream->dropped_records();
    EnforceMemoryLimits();  // with the stream: what it wrote may be let go of
    session_->stream.reset();
    if (status.ok()) WriteStreamedProfile();
    return status;
  }
  EnforceMemoryLimits();
  if (session_->options.output.empty()) return absl::OkStatus();
  return ExportTrace(session_->model, ContextNow(), session_->options.output,
                     session_->output_format);
}

bool Profiler::ArmForCapture() {
  std::lock_guard<FairMutex> control(control_mutex_);
  if (SessionRunning(g_session_word.load(std::memory_order_relaxed)) ||
      (session_ != nullptr && session_->running)) {
    return false;
  }
  capture_armed_ = true;
  int expected = 0;
  std::atomic_ref<int>(prof_session_active)
      .compare_exchange_strong(expected, kArmedSessionValue, std::memory_order_relaxed);
  return true;
}

void Profiler::ResetCaptureAfterFork() {
  capture_armed_ = false;
  int expected = kArmedSessionValue;
  std::atomic_ref<int>(prof_session_active)
      .compare_exchange_strong(expected, 0, std::memory_order_relaxed);
}

void Profiler::DisarmCapture() {
  std::lock_guard<FairMutex> control(control_mutex_);
  capture_armed_ = false;
  // Only the armed value: a session started meanwhile (the capture's or the program's) keeps its.
  int expected = kArmedSessionValue;
  std::atomic_ref<int>(prof_session_active)
      .compare_exchange_strong(expected, 0, std::memory_order_relaxed);
}

bool Profiler::HaltRecording(uint64_t word) {
  if (!SessionRunning(word)) return false;
  uint64_t expected = word;
  if (!g_session_word.compare_exchange_strong(expected, word & ~uint64_t{1},
                                              std::memory_order_release,
                                              std::memory_order_relaxed)) {
    return false;
  }
  std::atomic_ref<int>(prof_session_active).store(0, std::memory_order_relaxed);
  return true;
}

void Profiler::DiscardStoppedCapture() {
  std::lock_guard<FairMutex> control(control_mutex_);
  std::unique_ptr<Session> discarded;
  {
    std::lock_guard<std::mutex> lock(model_mutex_);
    if (session_ == nullptr || session_->running || !session_->for_capture) return;
    discarded = std::move(session_);
    session_ = std::move(parked_session_);
  }
  // Destroyed outside model_mutex_: its writer thread is joined here.
}

absl::Status Profiler::Export(const char *path) {
  std::lock_guard<FairMutex> control(control_mutex_);
  // CUPTI first, without model_mutex_: the session cannot change while control_mutex_ is held.
  if (session_ != nullptr && session_->running && session_->gpu != nullptr) {
    session_->gpu->Flush(true);
  }
  std::lock_guard<std::mutex> lock(model_mutex_);
  if (session_ == nullptr) {
    return absl::NotFoundError("nothing to export: no profiling session has run");
  }
  if (session_->running) {
    Drain(true);
    MoveGpuRecords();
  }
  EnforceMemoryLimits();
  if (session_->model.store.records_released > 0) return ExportFromOutput(path);
  return ExportTrace(session_->model, ContextNow(), path);
}

void Profiler::WriteStreamedProfile() {
  if (session_->output_format != Format::kTensorBoard || !session_->options.tensorboard_profile) {
    return;
  }
  // The stream wrote the event file as the session ran; TensorBoard's Profile tab reads an
  // XPlane, one message that cannot grow by pieces: it is made from the finished event file,
  // which is read back whole (memory as for converting it). The event file is the session's
  // output: a profile that cannot be made is a warning, not a failed stop.
  CreatedLogDirectory created;
  absl::StatusOr<std::string> profile = NewProfilePath(
      session_->options.output, session_->context.start_wall_ns, LocalHostName(), &created);
  absl::Status status = profile.status();
  if (profile.ok()) {
    ConvertOptions options;
    options.format = Format::kXPlane;
    status = ConvertTrace(session_->stream_path, *profile, options, nullptr).status;
  }
  if (status.ok()) {
    created.Keep();
    return;
  }
  if (session_->options.warnings) {
    std::fprintf(stderr,
                 "tfprof: warning: TensorBoard's profile (plugins/profile/...) was not written "
                 "beside '%s': %s. The event file is complete; 'tfprof convert %s -o "
                 "host.xplane.pb' makes the profile later (option tensorboard_profile=off "
                 "skips it).\n",
                 session_->stream_path.c_str(), std::string(status.message()).c_str(),
                 session_->stream_path.c_str());
  }
}

absl::Status Profiler::ExportFromOutput(const char *path) {
  // The streamed output holds the events the session let go of: the export converts it (while
  // the session runs, as far as it is written: the steps settled so far).
  if (session_->writer != nullptr) session_->writer->WaitIdle();
  struct stat target {};
  struct stat output {};
  if (stat(path, &target) == 0 && stat(session_->options.output.c_str(), &output) == 0 &&
      target.st_dev == output.st_dev && target.st_ino == output.st_ino) {
    return absl::OkStatus();  // the output itself: it is written already
  }
  ConvertResult result = ConvertTrace(session_->stream_path, path, ConvertOptions{}, nullptr);
  if (result.status.ok()) return absl::OkStatus();
  return absl::Status(
      result.status.code(),
      absl::StrCat(result.status.message(), " (exporting from the session's output '",
                   session_->stream_path, "', which alone holds the ",
                   session_->model.store.records_released,
                   " events let go of to stay within max_memory_mb)"));
}

absl::Status Profiler::GetStats(SessionStats *stats) {
  std::lock_guard<FairMutex> control(control_mutex_);
  return GetStatsLocked(stats);
}

absl::Status Profiler::GetStatsLocked(SessionStats *stats) {
  std::lock_guard<std::mutex> lock(model_mutex_);
  if (session_ == nullptr) return absl::NotFoundError("no profiling session has run");
  if (session_->running) {
    Drain(false);
    MoveGpuRecords();
    EnforceMemoryLimits();
  }
  const ExportContext context = ContextNow();
  stats->running = session_->running;
  stats->serial = SessionSerial(session_->word);
  stats->events_recorded = context.events_recorded;
  stats->threads = session_->model.tracks.size();
  stats->names = session_->model.names.size();
  stats->losses = context.losses;
  const GpuTrace &gpu = session_->model.gpu;
  stats->gpu_state = gpu.state;
  stats->gpu_records = gpu.activities.size() + gpu.api_calls.size();
  stats->gpu_losses = gpu.losses;
  const ChunkStore &store = session_->model.store;
  stats->memory_bytes = store.resident_bytes;
  stats->spill_bytes = store.spill != nullptr ? store.spill->bytes_held() : 0;
  stats->slow_step_dumps = session_->slow_step_dumps;
  return absl::OkStatus();
}

uint64_t Profiler::EventsWithoutBuffer() const {
  if (!session_->running) return session_->events_without_buffer;
  return g_events_without_buffer.load(std::memory_order_relaxed) -
         session_->events_without_buffer_at_start;
}

TickConverter Profiler::ConverterNow() const {
  const TickConverter &converter = session_->context.converter;
  return session_->running ? converter.Refined() : converter;
}

ExportContext Profiler::ContextNow() const {
  ExportContext context = ContextForStream();
  if (session_->stream != nullptr) context.losses.memory_dropped += session_->stream->dropped_records();
  return context;
}

ExportContext Profiler::ContextForStream() const {
  ExportContext context = session_->context;
  if (session_->running) {
    context.converter = ConverterNow();
    context.end_ns = MonotonicNowNs();
  }
  // An event whose thread got no buffer counts as recorded and lost to memory, so that
  // recorded + dropped is still every call that reached the session.
  context.events_recorded = session_->model.events_recorded + EventsWithoutBuffer();
  context.losses = session_->model.retired_losses;
  context.losses.memory_dropped +=
      session_->model.store.records_lost + session_->stream_dropped + EventsWithoutBuffer();
  context.losses.discarded += session_->model.store.records_discarded;
  // Buffers still registered (live, or retired but not yet drained) have not been added to
  // retired_losses yet. Their counters are only read here, so this is safe beside their writers.
  ThreadRegistry::Get().ForEach([&](const ThreadBuffer &buffer) {
    if (buffer.generation != session_->word) return;
    context.losses.dropped += buffer.dropped.load(std::memory_order_relaxed);
    context.losses.unmatched_span_ends += buffer.unmatched_span_ends.load(std::memory_order_relaxed);
    context.losses.unmatched_step_ends += buffer.unmatched_step_ends.load(std::memory_order_relaxed);
  });
  return context;
}

}  // namespace tfprof
