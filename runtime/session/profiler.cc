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
#include "runtime/session/memory_limits.h"
#include "runtime/collector/range_end_overflow.h"
#include "runtime/collector/recorder.h"
#include "runtime/collector/registered_names.h"
#include "runtime/collector/thread_registry.h"
#include "tfprof/tfprof.h"

namespace tfprof {

namespace {

// How far a streamed output's writes may fall behind: a few pieces of a busy session.
constexpr int64_t kStreamWriterSlackBytes = int64_t{64} << 20;

std::string ReadFirstLine(const std::string &path) {
  std::string line;
  if (FILE *file = std::fopen(path.c_str(), "r")) {
    char buffer[256];
    if (std::fgets(buffer, sizeof buffer, file) != nullptr) line = buffer;
    std::fclose(file);
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

// The process's arguments as the kernel has them (argv[0] first); empty if /proc is missing.
std::vector<std::string> ReadCommandLine() {
  std::vector<std::string> arguments;
  std::string text;
  if (FILE *file = std::fopen("/proc/self/cmdline", "r")) {
    char buffer[4096];
    size_t read = 0;
    while ((read = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, read);
    std::fclose(file);
  }
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\0', begin);
    if (end == std::string::npos) end = text.size();
    arguments.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return arguments;
}

std::string ThreadOsName(int64_t os_tid) {
  return ReadFirstLine(absl::StrCat("/proc/self/task/", os_tid, "/comm"));
}

bool KindHasName(EventKind kind) {
  return kind == EventKind::kSpanBegin || kind == EventKind::kInstant ||
         kind == EventKind::kCounter || kind == EventKind::kRangeStart;
}

// The value prof_session_active holds while a session runs: nonzero and different from the
// previous session's, so bindings can tell "a new session began" with the same one load.
int SessionSerial(uint64_t word) {
  const uint64_t generation = word >> 1;
  return static_cast<int>(generation % 0x7fffffff) + 1;
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

absl::Status Profiler::Start(const char *options_text) {
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
  if (SessionRunning(g_session_word.load(std::memory_order_relaxed))) {
    return absl::FailedPreconditionError("a profiling session is already running");
  }
  try {
    auto session = std::make_unique<Session>();
    session->options = *options;
    session->word = (next_generation_++ << 1) | 1;
    session->running = true;
    ExportContext &context = session->context;
    context.pid = getpid();
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
      // (their generation differs); the previous model is dropped with its session.
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
    // The collector takes none of the program's signals: a handler that waits for a flush
    // (the preload library's) must never run on the thread doing the flush.
    sigset_t all_signals;
    sigset_t previous;
    sigfillset(&all_signals);
    pthread_sigmask(SIG_SETMASK, &all_signals, &previous);
    collector_ = std::thread(&Profiler::CollectorLoop, this, options->flush_interval_ms);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  return absl::OkStatus();
}

absl::Status Profiler::Stop() {
  std::lock_guard<FairMutex> control(control_mutex_);
  const uint64_t word = g_session_word.load(std::memory_order_relaxed);
  if (!SessionRunning(word)) {
    return absl::FailedPreconditionError("no profiling session is running");
  }
  std::atomic_ref<int>(prof_session_active).store(0, std::memory_order_relaxed);
  g_session_word.store(word & ~uint64_t{1}, std::memory_order_release);
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
    return status;
  }
  EnforceMemoryLimits();
  if (session_->options.output.empty()) return absl::OkStatus();
  return ExportTrace(session_->model, ContextNow(), session_->options.output,
                     session_->output_format);
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

void Profiler::Drain(bool refresh_names) {
  ThreadRegistry::Get().DrainAll(
      [&](ThreadBuffer &buffer, bool final) { DrainBuffer(buffer, final, refresh_names); });
  DrainOverflowRangeEnds();
}

void Profiler::DrainOverflowRangeEnds() {
  SessionLog &model = session_->model;
  OverflowRangeEnd end;
  while (PopOverflowRangeEnd(&end)) {
    if (end.generation != session_->word) continue;  // an earlier session's
    // The ending thread's row: its latest track, else a new one (all its records so far were
    // range ends that overflowed).
    size_t track = model.tracks.size();
    while (track > 0 && model.tracks[track - 1].os_tid != end.os_tid) --track;
    try {
      track = track > 0 ? track - 1 : model.AddTrack(end.os_tid);
    } catch (const std::bad_alloc &) {
      ++model.store.records_lost;
      continue;
    }
    model.has_ranges = true;
    ++model.events_recorded;
    model.tracks[track].events.Append(Event{end.ticks, end.range_id, 0, EventKind::kRangeEnd, 0});
  }
}

void Profiler::DrainBuffer(ThreadBuffer &buffer, bool final, bool refresh_names) {
  Session &session = *session_;
  if (buffer.generation != session.word) {
    // A buffer of an earlier session (or one attached only for a thread name): discard records.
    buffer.ring.Drain(buffer.drain_scratch, [](const Event &, std::string_view) {});
    return;
  }
  SessionLog &model = session.model;
  const bool new_track = buffer.track_index < 0;
  if (new_track) {
    if (buffer.ring.Pending() == 0) return;  // a thread shows up once it recorded something
    try {
      buffer.track_index = static_cast<int32_t>(model.AddTrack(buffer.os_tid));
    } catch (const std::bad_alloc &) {
      // No memory for the thread's track: its records are dropped and counted; a later drain
      // tries again.
      model.store.records_lost +=
          buffer.ring.Drain(buffer.drain_scratch, [](const Event &, std::string_view) {});
      return;
    }
  }
  ThreadLog &track = model.tracks[static_cast<size_t>(buffer.track_index)];
  auto map_name = [&](uint32_t local_id) {
    // Names are published before the records that use them, so this id is always published.
    while (buffer.global_name_ids.size() <= local_id) {
      const uint32_t next = static_cast<uint32_t>(buffer.global_name_ids.size());
      buffer.global_name_ids.push_back(model.names.Intern(buffer.names.NameAt(next)));
    }
    return buffer.global_name_ids[local_id];
  };
  auto map_registered_name = [&](uint32_t registered_id) {
    std::vector<uint32_t> &ids = session.registered_name_ids;
    if (registered_id == 0 || registered_id > RegisteredNames::kMaxNames) {
      return model.names.Intern(kUnregisteredName);
    }
    if (ids.size() < registered_id) ids.resize(registered_id, 0);
    uint32_t &known = ids[registered_id - 1];
    if (known == 0) {
      std::string_view text;
      if (!RegisteredNames::Get().Lookup(registered_id, &text)) {
        return model.names.Intern(kUnregisteredName);  // not cached: a misuse, not a hot path
      }
      known = model.names.Intern(text) + 1;
    }
    return known - 1;
  };
  ChunkStore &store = model.store;
  model.events_recorded += buffer.ring.Drain(
      buffer.drain_scratch, [&](const Event &record, std::string_view inline_name) {
        Event stored = record;
        stored.kind = BaseKind(record.kind);
        // Nothing here may throw into the ring's drain: a record that cannot be kept (no memory
        // for its name or its chunk) is dropped and counted, and the program goes on.
        bool named = true;
        try {
          if (HasInlineName(record.kind)) {
            stored.name = model.names.Intern(inline_name);
          } else if (HasRegisteredName(record.kind)) {
            stored.name = map_registered_name(record.name);
          } else if (KindHasName(stored.kind)) {
            stored.name = map_name(record.name);
          }
        } catch (const std::bad_alloc &) {
          named = false;
        }
        switch (stored.kind) {
          case EventKind::kSpanBegin: {
            bool kept = false;
            if (!named || track.stored_spans.InsideDroppedSpan()) {
              ++store.records_lost;
            } else {
              kept = track.events.Append(stored);  // counts its own failure
            }
            track.stored_spans.Open(kept);
            return;
          }
          case EventKind::kSpanEnd:
            // The end of a span whose begin was not kept goes too, so nesting stays right.
            if (track.stored_spans.depth() > 0 && !track.stored_spans.Close()) {
              ++store.records_lost;
              return;
            }
            break;
          case EventKind::kStepBegin:
            session.step_marked = true;
            NoteStepBegin(track, stored);
            break;
          case EventKind::kStepEnd:
            session.step_marked = true;
            if (IsCancelledStepEnd(stored)) {
              NoteStepCancelled(track);
            } else {
              NoteStepEnd(track, stored.ticks);
            }
            break;
          case EventKind::kRangeStart:
          case EventKind::kRangeEnd:
            model.has_ranges = true;
            break;
          default:
            break;
        }
        if (!named) {
          ++store.records_lost;
          return;
        }
        track.events.Append(stored);
      });
  try {
    std::lock_guard<std::mutex> lock(buffer.name_mutex);
    if ((new_track || refresh_names) && !final) {
      const std::string os_name = ThreadOsName(buffer.os_tid);
      if (!os_name.empty()) buffer.os_name = os_name;
    }
    track.name = buffer.explicit_name.empty() ? buffer.os_name : buffer.explicit_name;
  } catch (const std::bad_alloc &) {
    // The row keeps its previous name (or "thread <tid>"); nothing recorded is lost.
  }
  if (final) {
    track.retired = true;
    model.retired_losses += LossCounters{buffer.dropped.load(std::memory_order_relaxed),
                                         buffer.unmatched_span_ends.load(std::memory_order_relaxed),
                                         buffer.unmatched_step_ends.load(std::memory_order_relaxed)};
  }
}

void Profiler::CollectorLoop(uint32_t interval_ms) {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(collector_mutex_);
      collector_wake_.wait_for(lock, std::chrono::milliseconds(interval_ms),
                               [this] { return collector_stop_; });
      if (collector_stop_) return;
    }
    // Stop() joins this thread before it changes the session, so session_ is stable here.
    const int64_t drain_start_ns = MonotonicNowNs();
    bool forced = false;
    {
      std::lock_guard<std::mutex> lock(model_mutex_);
      Drain(false);
      forced = session_->step_marked || session_->gpu_settling.waiting() > 0;
      session_->step_marked = false;
    }
    if (session_->gpu != nullptr) CollectGpuRecords(forced);
    std::lock_guard<std::mutex> lock(model_mutex_);
    try {
      AppendSettledSteps(drain_start_ns);
      DumpSlowStep();
      EnforceMemoryLimits();
    } catch (const std::bad_alloc &) {
      // Out of memory off the hot path: what could not be stored is counted where it was lost
      // (records still in the session, such as the steps a stream could not take yet, are taken
      // by a later pass); the collector and the program go on.
    }
  }
}

void Profiler::CollectGpuRecords(bool forced) {
  const int64_t flush_start_ns = MonotonicNowNs();
  session_->gpu->Flush(forced);  // no lock of ours held: CUPTI calls back into the tracer
  std::lock_guard<std::mutex> lock(model_mutex_);
  if (forced) session_->gpu_flushed_through_ns = flush_start_ns;
  MoveGpuRecords();
}

void Profiler::MoveGpuRecords() {
  if (session_->gpu == nullptr) return;
  session_->gpu->MoveRecordsInto(session_->model.gpu);
  session_->gpu_settling.Advance(session_->model.gpu, ConverterNow());
}

void Profiler::FinishGpu() {
  if (session_->gpu == nullptr) return;
  const int64_t wait_ns = int64_t{session_->options.gpu.wait_ms} * 1000000;
  const int64_t deadline_ns = MonotonicNowNs() + wait_ns;
  // Kernels still queued when prof_stop() is called are waited for, up to gpu_wait_ms, while the
  // activity kinds are still enabled; whatever never comes is counted by CUPTI as dropped.
  for (;;) {
    CollectGpuRecords(true);
    {
      std::lock_guard<std::mutex> lock(model_mutex_);
      if (session_->gpu_settling.waiting() == 0) break;
    }
    if (MonotonicNowNs() >= deadline_ns) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  session_->gpu->Stop();
}

void Profiler::AppendSettledSteps(int64_t drain_start_ns) {
  // An event stamped before the previous drain began has been published and drained by now
  // (unless its thread stalled a whole flush interval in between: such a late span goes to the
  // outside_steps record at stop, never lost), so steps that ended by then are complete.
  const int64_t settled_ns = session_->last_drain_start_ns;
  session_->last_drain_start_ns = drain_start_ns;
  int64_t gpu_complete_ns = kGpuCompleteAlways;
  if (session_->gpu != nullptr) {
    // A step also waits for the GPU work it launched (bounded by gpu_wait_ms).
    gpu_complete_ns = session_->gpu_settling.CompleteThroughNs(
        session_->gpu_flushed_through_ns, MonotonicNowNs(),
        int64_t{session_->options.gpu.wait_ms} * 1000000);
  }
  if (session_->stream != nullptr) {
    // A backlog is encoded piece by piece, the rings drained in between (a burst then waits in
    // the session, spilled or released under its limit, instead of overflowing the rings).
    session_->stream->Append(session_->model, ContextForStream(), settled_ns, gpu_complete_ns,
                             [this] {
                               Drain(false);
                               EnforceMemoryLimits();
                             });
    session_->model.gpu.losses.late_records = session_->stream->late_gpu_records();
  }
}

void Profiler::NoteStepBegin(ThreadLog &track, const Event &event) {
  Session &session = *session_;
  StepMarks<uint64_t>::Step ended;
  if (track.steps.Begin(static_cast<int64_t>(event.arg), event.ticks, &ended)) NoteStepEnded(ended);
  const KeepWindow &keep = session.options.keep;
  if (keep.mode != KeepWindow::Mode::kLastSteps) return;
  // Threads that mark the same step count it once; their marks arrive close together.
  auto &recent = session.recent_steps;
  const size_t look_back = std::min<size_t>(recent.size(), 64);
  for (size_t i = recent.size() - look_back; i < recent.size(); ++i) {
    if (recent[i].first == track.steps.number()) return;
  }
  recent.emplace_back(track.steps.number(), event.ticks);
  while (recent.size() > keep.count) recent.pop_front();
}

void Profiler::NoteStepCancelled(ThreadLog &track) {
  StepMarks<uint64_t>::Step withdrawn;
  if (!track.steps.Cancel(&withdrawn)) return;
  // Withdrawn: it neither counts among the kept last steps nor times a step.
  auto &recent = session_->recent_steps;
  if (!recent.empty() && recent.back().first == withdrawn.number &&
      recent.back().second == withdrawn.begin) {
    recent.pop_back();
  }
}

void Profiler::NoteStepEnd(ThreadLog &track, uint64_t end_ticks) {
  StepMarks<uint64_t>::Step ended;
  if (track.steps.End(end_ticks, &ended)) NoteStepEnded(ended);
}

void Profiler::NoteStepEnded(const StepMarks<uint64_t>::Step &step) {
  Session &session = *session_;
  const double factor = session.options.dump_on_slow_step;
  if (factor <= 0) return;
  const int64_t ns = static_cast<int64_t>(
      static_cast<double>(static_cast<int64_t>(step.end - step.begin)) *
      session.context.converter.ns_per_tick());
  // The median of the latest steps (at most 1000), once there are enough to mean something.
  constexpr size_t kMinSteps = 3;
  constexpr size_t kMaxSteps = 1000;
  std::deque<int64_t> &durations = session.step_durations_ns;
  if (durations.size() >= kMinSteps && !session.slow_step_pending) {
    std::vector<int64_t> sorted(durations.begin(), durations.end());
    auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
    std::nth_element(sorted.begin(), middle, sorted.end());
    const int64_t median = *middle;
    if (static_cast<double>(ns) > factor * static_cast<double>(median)) {
      session.slow_step_pending = true;
      session.slow_step = step.number;
      session.slow_step_ns = ns;
      session.slow_step_median_ns = median;
    }
  }
  durations.push_back(ns);
  if (durations.size() > kMaxSteps) durations.pop_front();
}

void Profiler::DumpSlowStep() {
  Session &session = *session_;
  if (!session.slow_step_pending) return;
  session.slow_step_pending = false;
  // A run that keeps slowing down must not fill the disk with dumps.
  constexpr uint64_t kMaxDumps = 10;
  if (session.slow_step_dumps >= kMaxDumps) return;
  ApplyKeepWindow();
  const std::string path =
      SlowStepDumpPath(session.options.output, session.output_format, session.slow_step);
  const absl::Status status = ExportTrace(session.model, ContextNow(), path, session.output_format);
  if (status.ok()) ++session.slow_step_dumps;
  if (!session.options.warnings) return;
  const double ms = static_cast<double>(session.slow_step_ns) / 1e6;
  const double median_ms = static_cast<double>(session.slow_step_median_ns) / 1e6;
  if (status.ok()) {
    std::fprintf(stderr, "tfprof: step %lld took %.3f ms, %.1fx the median step (%.3f ms): wrote %s%s\n",
                 static_cast<long long>(session.slow_step), ms, ms / median_ms, median_ms,
                 path.c_str(),
                 session.slow_step_dumps == kMaxDumps ? " (the last dump of this session)" : "");
  } else {
    std::fprintf(stderr, "tfprof: warning: step %lld was slow, but its dump failed: %s\n",
                 static_cast<long long>(session.slow_step), std::string(status.message()).c_str());
  }
}

void Profiler::ApplyKeepWindow() {
  Session &session = *session_;
  const KeepWindow &keep = session.options.keep;
  uint64_t threshold = 0;
  if (keep.mode == KeepWindow::Mode::kAll) return;
  if (keep.mode == KeepWindow::Mode::kLastSteps) {
    if (session.recent_steps.size() < keep.count) return;
    threshold = session.recent_steps.front().second;
  } else {
    const int64_t end_ns = session.running ? MonotonicNowNs() : session.context.end_ns;
    const int64_t window_start_ns = end_ns - static_cast<int64_t>(keep.count) * 1000000000;
    if (window_start_ns <= session.context.start_monotonic_ns) return;
    threshold = ConverterNow().ToTicks(window_start_ns);
  }
  EvictBefore(session.model, threshold);
}

void Profiler::EnforceMemoryLimits() {
  Session &session = *session_;
  ApplyKeepWindow();
  if (session.stream != nullptr) {
    ReleaseWrittenRecords(session.model, session.options.max_memory_mb, session.stream->Written());
  }
  EnforceMemoryLimit(session.model, session.options.max_memory_mb);
  if (session.options.warnings) {
    WarnAboutSpilling(session.model.store, session.options.max_memory_mb, session.spill_warnings);
    WarnAboutMemoryDrops(session.model.store, EventsWithoutBuffer(), session.spill_warnings);
  }
}

void Profiler::StopCollector() {
  if (!collector_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(collector_mutex_);
    collector_stop_ = true;
  }
  collector_wake_.notify_all();
  collector_.join();
}

}  // namespace tfprof
