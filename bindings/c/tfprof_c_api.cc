// The extern "C" implementation of include/tfprof/tfprof.h: argument checks, status-to-code
// mapping and the per-thread last-error text. No exception ever crosses this boundary.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bindings/c/internal_entry_points.h"
#include "bindings/c/last_error.h"
#include "runtime/capture/capture_agent.h"
#include "runtime/capture/capture_trigger.h"
#include "runtime/common/own_threads.h"
#include "runtime/common/staged_file.h"
#include "runtime/session/profiler.h"
#include "runtime/collector/recorder.h"
#include "runtime/collector/registered_names.h"
#include "runtime/common/string_view_bridge.h"
#include "tfprof/tfprof.h"

namespace {

using tfprof_c::ClearLastError;
using tfprof_c::SetLastError;

// Maps a runtime status to a PROF_E* code and remembers its message for prof_last_error().
// `invalid_argument_code` is what InvalidArgument means for this call (a bad option string for
// prof_start, an unsupported extension for prof_export).
int Report(std::string_view function, const absl::Status &status, int invalid_argument_code) {
  if (status.ok()) {
    ClearLastError();
    return PROF_OK;
  }
  SetLastError(function, status);
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: return invalid_argument_code;
    case absl::StatusCode::kFailedPrecondition:
      return function == "prof_start" || function == "prof_listen" ? PROF_EALREADY
                                                                     : PROF_ENOTSTARTED;
    case absl::StatusCode::kUnavailable: return PROF_EIO;
    case absl::StatusCode::kNotFound: return PROF_ENODATA;
    case absl::StatusCode::kResourceExhausted: return PROF_ENOMEM;
    case absl::StatusCode::kAborted: return PROF_ENOGPU;
    default: return PROF_EINTERNAL;
  }
}

template <typename Call>
int Guarded(std::string_view function, int invalid_argument_code, Call &&call) {
  // Nothing may leave a C function: the handlers themselves make no status (a status with a
  // message allocates, and memory is what ran out).
  // Threads the call starts (the collector, CUPTI's) are tfprof's, not the program's.
  const tfprof::OwnThreadsScope own_threads;
  try {
    return Report(function, call(), invalid_argument_code);
  } catch (const std::bad_alloc &) {
    tfprof_c::SetLastErrorText(function, "out of memory");
    return PROF_ENOMEM;
  } catch (const std::exception &error) {
    tfprof_c::SetLastErrorText(function, error.what());
    return PROF_EINTERNAL;
  }
}

void FillStats(const tfprof::SessionStats &stats, prof_stats_t &out) {
  out.running = stats.running ? 1 : 0;
  out.events_recorded = stats.events_recorded;
  out.events_dropped = stats.losses.dropped;
  out.threads = stats.threads;
  out.unmatched_span_ends = stats.losses.unmatched_span_ends;
  out.unmatched_step_ends = stats.losses.unmatched_step_ends;
  out.names_interned = stats.names;
  out.session_serial = static_cast<uint64_t>(stats.serial);
  switch (stats.gpu_state) {
    case tfprof::GpuTracingState::kOff: out.gpu_state = PROF_GPU_OFF; break;
    case tfprof::GpuTracingState::kNotBuilt: out.gpu_state = PROF_GPU_NOT_BUILT; break;
    case tfprof::GpuTracingState::kUnavailable: out.gpu_state = PROF_GPU_UNAVAILABLE; break;
    case tfprof::GpuTracingState::kActive: out.gpu_state = PROF_GPU_ACTIVE; break;
  }
  out.gpu_records = stats.gpu_records;
  out.gpu_records_dropped = stats.gpu_losses.records_dropped;
  out.gpu_buffers_refused = stats.gpu_losses.buffers_refused;
  out.events_memory_dropped = stats.losses.memory_dropped;
  out.events_discarded = stats.losses.discarded;
  out.memory_bytes = static_cast<uint64_t>(std::max<int64_t>(stats.memory_bytes, 0));
  out.spill_bytes = stats.spill_bytes;
  out.slow_step_dumps = stats.slow_step_dumps;
}

inline uint64_t SessionWord() { return tfprof::g_session_word.load(std::memory_order_relaxed); }

// The hot-path entry points check the session word and tail-call these: kept out of line so that
// the entry points need no stack frame, and a call with no session running is a load, a test and
// a return.
// A capture's session (runtime/capture/capture_trigger.h) counts its steps to end at one.
__attribute__((noinline)) void StepBeginRunning(uint64_t word, int64_t step) {
  if (__builtin_expect(tfprof::CaptureCountsSteps(), 0)) return tfprof::CaptureStepBegin(word, step);
  tfprof::RecordStepBegin(word, step);
}
__attribute__((noinline)) void StepEndRunning(uint64_t word, tfprof::StepEndKind kind) {
  if (__builtin_expect(tfprof::CaptureCountsSteps(), 0) && kind == tfprof::StepEndKind::kEnded) {
    return tfprof::CaptureStepEnd(word);
  }
  tfprof::RecordStepEnd(word, kind);
}
// Spans whose fast path (recorder.h) could not record them, session or not. The name comes first
// so that prof_span_begin() passes it on in the register it came in.
__attribute__((noinline)) void SpanBeginGeneral(const char *name, uint64_t word) {
  if (tfprof::SessionRunning(word)) tfprof::RecordSpanBegin(word, name);
}
__attribute__((noinline)) void SpanEndGeneral(uint64_t word) {
  if (tfprof::SessionRunning(word)) tfprof::RecordSpanEnd(word);
}
__attribute__((noinline)) void SpanBeginIdGeneral(prof_name_id_t id, uint64_t word) {
  if (tfprof::SessionRunning(word)) tfprof::RecordSpanBeginId(word, id);
}
// A begin whose name's first words matched their cached copy (`id` is the name's if the rest
// matches too): the rest is checked here, out of line, so that prof_span_begin() needs no frame.
__attribute__((noinline)) void SpanBeginLongName(const char *name, uint64_t word, uint32_t id) {
  if (!tfprof::SpanBeginLongName(tfprof::t_current.buffer, name, id)) SpanBeginGeneral(name, word);
}
__attribute__((noinline)) void InstantRunning(uint64_t word, const char *name) {
  tfprof::RecordInstant(word, name);
}
__attribute__((noinline)) void CounterRunning(uint64_t word, const char *name, double value) {
  tfprof::RecordCounter(word, name, value);
}

// Range ids are unique in the process (never reused across sessions), so an end can never close
// another session's range. 0 means "no range".
std::atomic<uint64_t> g_next_range_id{1};

__attribute__((noinline)) uint64_t RangeStartRunning(uint64_t word, const char *name) {
  const uint64_t range_id = g_next_range_id.fetch_add(1, std::memory_order_relaxed);
  tfprof::RecordRangeStart(word, name, range_id);
  return range_id;
}

}  // namespace

extern "C" {

PROF_API int prof_session_active = 0;

PROF_API unsigned prof_version(void) { return TFPROF_VERSION_NUMBER; }

PROF_API const char *prof_version_string(void) {
#define TFPROF_STRINGIFY_(x) #x
#define TFPROF_STRINGIFY(x) TFPROF_STRINGIFY_(x)
  return TFPROF_STRINGIFY(TFPROF_VERSION_MAJOR) "." TFPROF_STRINGIFY(
      TFPROF_VERSION_MINOR) "." TFPROF_STRINGIFY(TFPROF_VERSION_PATCH);
#undef TFPROF_STRINGIFY
#undef TFPROF_STRINGIFY_
}

PROF_API int prof_start(const char *options) {
  return Guarded("prof_start", PROF_EOPTION,
                 [&] { return tfprof::Profiler::Get().Start(options); });
}

PROF_API int prof_stop(void) {
  return Guarded("prof_stop", PROF_EINVAL, [] { return tfprof::Profiler::Get().Stop(); });
}

PROF_API int prof_export(const char *path) {
  if (path == nullptr || path[0] == '\0') {
    return Report("prof_export", absl::InvalidArgumentError("path is NULL or empty"), PROF_EINVAL);
  }
  return Guarded("prof_export", PROF_EFORMAT, [&] { return tfprof::Profiler::Get().Export(path); });
}

PROF_API int prof_listen(const char *options) {
  return Guarded("prof_listen", PROF_EOPTION,
                 [&] { return tfprof::CaptureAgent::Get().Listen(options); });
}

PROF_API int prof_unlisten(void) {
  return Guarded("prof_unlisten", PROF_EINVAL, [] { return tfprof::CaptureAgent::Get().Unlisten(); });
}

PROF_API int prof_is_listening(void) { return tfprof::CaptureAgent::Get().listening() ? 1 : 0; }

PROF_API int prof_is_running(void) { return tfprof::SessionRunning(SessionWord()) ? 1 : 0; }

PROF_API int prof_get_stats(prof_stats_t *out) {
  constexpr uint32_t kVersion01Size = static_cast<uint32_t>(offsetof(prof_stats_t, gpu_state));
  if (out == nullptr || out->struct_size < kVersion01Size) {
    return Report("prof_get_stats",
                  absl::InvalidArgumentError(out == nullptr
                                                 ? "out is NULL"
                                                 : absl::StrCat("struct_size ", out->struct_size,
                                                                " is smaller than the ",
                                                                kVersion01Size, " bytes of 0.1")),
                  PROF_EINVAL);
  }
  return Guarded("prof_get_stats", PROF_EINVAL, [&] {
    tfprof::SessionStats stats;
    absl::Status status = tfprof::Profiler::Get().GetStats(&stats);
    if (!status.ok()) return status;
    // Fill a whole struct, then hand the caller the part its struct_size covers.
    prof_stats_t full{};
    full.struct_size = static_cast<uint32_t>(std::min<size_t>(out->struct_size, sizeof full));
    FillStats(stats, full);
    const uint32_t caller_size = out->struct_size;
    std::memset(out, 0, caller_size);
    std::memcpy(out, &full, full.struct_size);
    return absl::OkStatus();
  });
}

PROF_API const char *prof_strerror(int code) {
  switch (code) {
    case PROF_OK: return "success";
    case PROF_EINVAL: return "invalid argument";
    case PROF_EOPTION: return "invalid option string";
    case PROF_EALREADY: return "a profiling session is already running";
    case PROF_ENOTSTARTED: return "no profiling session is running";
    case PROF_EIO: return "file could not be written";
    case PROF_EFORMAT: return "unsupported output format";
    case PROF_ENODATA: return "no profiling session has run";
    case PROF_ENOMEM: return "out of memory";
    case PROF_EINTERNAL: return "internal error";
    case PROF_EDATA: return "an input file is damaged or in no supported format";
    case PROF_ENOGPU: return "GPU tracing was required (cuda=on) but cannot start";
    default: return "unknown error code";
  }
}

PROF_API const char *prof_last_error(void) { return tfprof_c::LastError(); }

PROF_API void prof_begin_step(int64_t step) {
  const uint64_t word = SessionWord();
  if (tfprof::SessionRunning(word)) {
    StepBeginRunning(word, step);
  } else if (__builtin_expect(tfprof::CaptureArmed(), 0)) {
    tfprof::CaptureStepBoundary(step);  // a capture waits for this boundary to start
  }
}

PROF_API void prof_end_step(void) {
  const uint64_t word = SessionWord();
  if (tfprof::SessionRunning(word)) StepEndRunning(word, tfprof::StepEndKind::kEnded);
}

PROF_API void prof_cancel_step(void) {
  const uint64_t word = SessionWord();
  if (tfprof::SessionRunning(word)) StepEndRunning(word, tfprof::StepEndKind::kCancelled);
}

// One compare of the thread's fast key with the session word admits the fast path (see
// recorder.h); whatever it cannot do (a name not cached at this address, a full ring, no open
// span, GPU tracing, a dropped span) goes on to the general path.
PROF_API void prof_span_begin(const char *name) {
  const uint64_t word = SessionWord();
  if (__builtin_expect(tfprof::t_current.fast_key == word, 1)) {
    uint32_t id;
    switch (tfprof::SpanBeginFast(tfprof::t_current.buffer, name, &id)) {
      case tfprof::FastBegin::kDone: return;
      case tfprof::FastBegin::kLongName: return SpanBeginLongName(name, word, id);
      case tfprof::FastBegin::kNo: break;
    }
  }
  SpanBeginGeneral(name, word);
}

PROF_API prof_name_id_t prof_register_name(const char *name) {
  if (name == nullptr || name[0] == '\0') name = tfprof::kUnnamed;
  return tfprof::RegisteredNames::Get().Register(name);
}

PROF_API void prof_span_begin_id(prof_name_id_t id) {
  const uint64_t word = SessionWord();
  if (__builtin_expect(tfprof::t_current.fast_key == word, 1) &&
      tfprof::SpanBeginIdFast(tfprof::t_current.buffer, id)) {
    return;
  }
  SpanBeginIdGeneral(id, word);
}

PROF_API void prof_span_end(void) {
  const uint64_t word = SessionWord();
  if (__builtin_expect(tfprof::t_current.fast_key == word, 1) &&
      tfprof::SpanEndFast(tfprof::t_current.buffer)) {
    return;
  }
  SpanEndGeneral(word);
}

PROF_API void prof_instant(const char *name) {
  const uint64_t word = SessionWord();
  if (tfprof::SessionRunning(word)) InstantRunning(word, name);
}

PROF_API void prof_counter(const char *name, double value) {
  const uint64_t word = SessionWord();
  if (tfprof::SessionRunning(word)) CounterRunning(word, name, value);
}

PROF_API uint64_t prof_range_start(const char *name) {
  const uint64_t word = SessionWord();
  return tfprof::SessionRunning(word) ? RangeStartRunning(word, name) : 0;
}

PROF_API void prof_range_end(uint64_t range_id) {
  const uint64_t word = SessionWord();
  if (range_id != 0 && tfprof::SessionRunning(word)) tfprof::RecordRangeEnd(word, range_id);
}

PROF_API void prof_set_thread_name(const char *name) {
  try {
    tfprof::SetCurrentThreadName(SessionWord(), name);
  } catch (const std::bad_alloc &) {
    // Naming is best effort; out of memory leaves the previous name.
  }
}

PROF_API void prof__remove_staged_files(void) { tfprof::RemoveStagedFilesNow(); }

PROF_API int prof__creating_own_threads(void) { return tfprof::CreatingOwnThreads() ? 1 : 0; }

}  // extern "C"
