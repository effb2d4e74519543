// The running session's work (Profiler's other half; profiler.cc has its lifecycle): draining the
// threads' rings into the session log, collecting GPU records, marking steps, writing settled
// steps to a streamed output, dumping slow steps, and keeping memory within its limits.
#include "runtime/session/profiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/collector/range_end_overflow.h"
#include "runtime/collector/recorder.h"
#include "runtime/collector/registered_names.h"
#include "runtime/collector/thread_registry.h"
#include "runtime/export/exporter.h"
#include "runtime/session/memory_limits.h"
#include "runtime/session/proc_self.h"

namespace tfprof {

namespace {

bool KindHasName(EventKind kind) {
  return kind == EventKind::kSpanBegin || kind == EventKind::kInstant ||
         kind == EventKind::kCounter || kind == EventKind::kRangeStart;
}

}  // namespace

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
