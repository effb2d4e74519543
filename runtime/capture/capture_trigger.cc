#include "runtime/capture/capture_trigger.h"

#include <new>

#include "runtime/collector/recorder.h"
#include "runtime/common/own_threads.h"
#include "runtime/session/profiler.h"

namespace tfprof {

std::atomic<int> g_capture_phase{kCaptureIdle};
std::atomic<bool> g_capture_counts_steps{false};

void CaptureStepBoundary(int64_t step) {
  int expected = kCaptureArmed;
  if (!g_capture_phase.compare_exchange_strong(expected, kCaptureStarting)) return;
  CaptureTrigger::Get().StartAtBoundary(step);
}

void CaptureStepBegin(uint64_t word, int64_t step) {
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  if (buffer->step_open) {
    // The begin ends the open step: record that end on its own, so that the step which completes
    // the capture is closed in the trace and the next one's begin is not recorded.
    RecordStepEnd(word, StepEndKind::kEnded);
    if (CaptureTrigger::Get().CountStepEnd(word)) return;
  }
  // Another thread's step end may have ended the recording meanwhile: no begin after it.
  if (!SessionRunning(g_session_word.load(std::memory_order_acquire))) return;
  RecordStepBegin(word, step);
}

void CaptureStepEnd(uint64_t word) {
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  const bool open = buffer->step_open;
  RecordStepEnd(word, StepEndKind::kEnded);
  if (open) CaptureTrigger::Get().CountStepEnd(word);
}

CaptureTrigger &CaptureTrigger::Get() {
  static CaptureTrigger *trigger = new CaptureTrigger();  // never destroyed: threads may use it late
  return *trigger;
}

bool CaptureTrigger::Arm(const std::string &options, uint64_t step_limit) {
  std::lock_guard<std::mutex> lock(mutex_);
  options_ = options;
  start_status_ = absl::OkStatus();
  word_.store(0, std::memory_order_relaxed);
  started_at_step_ = false;
  first_step_ = 0;
  steps_completed_.store(0, std::memory_order_relaxed);
  step_limit_.store(step_limit, std::memory_order_relaxed);
  halted_.store(false, std::memory_order_relaxed);
  g_capture_counts_steps.store(true, std::memory_order_relaxed);
  g_capture_phase.store(kCaptureArmed, std::memory_order_release);
  if (Profiler::Get().ArmForCapture()) return true;
  g_capture_phase.store(kCaptureIdle, std::memory_order_relaxed);
  g_capture_counts_steps.store(false, std::memory_order_relaxed);
  return false;
}

CapturePhase CaptureTrigger::WaitWhileArmed(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_until(lock, deadline, [] {
    const int phase = g_capture_phase.load(std::memory_order_acquire);
    return phase != kCaptureArmed && phase != kCaptureStarting;
  });
  return static_cast<CapturePhase>(g_capture_phase.load(std::memory_order_acquire));
}

CapturePhase CaptureTrigger::StartNowIfArmed() {
  int expected = kCaptureArmed;
  if (g_capture_phase.compare_exchange_strong(expected, kCaptureStarting)) {
    Profiler::Get().DisarmCapture();
    std::lock_guard<std::mutex> lock(mutex_);
    StartLocked(false, 0);
  }
  return WaitWhileArmed(Clock::time_point::max());
}

void CaptureTrigger::StartAtBoundary(int64_t step) {
  const OwnThreadsScope own_threads;  // on the program's thread: the session's threads are ours
  std::lock_guard<std::mutex> lock(mutex_);
  StartLocked(true, step);
}

void CaptureTrigger::StartLocked(bool at_step, int64_t step) {
  // Disarm() may have come first (the command gave up) while this thread waited for the mutex
  // after claiming the start: then no session starts.
  if (g_capture_phase.load(std::memory_order_acquire) != kCaptureStarting) return;
  absl::Status status;
  try {
    status = Profiler::Get().Start(options_.c_str(), /*for_capture=*/true);
  } catch (const std::bad_alloc &) {
    status = absl::ResourceExhaustedError("out of memory starting the capture's session");
  }
  start_status_ = status;
  if (status.ok()) {
    const uint64_t word = g_session_word.load(std::memory_order_acquire);
    word_.store(word, std::memory_order_release);
    started_at_step_ = at_step;
    first_step_ = step;
    if (at_step) RecordStepBegin(word, step);
    g_capture_phase.store(kCaptureRecording, std::memory_order_release);
  } else {
    Profiler::Get().DisarmCapture();
    g_capture_counts_steps.store(false, std::memory_order_relaxed);
    g_capture_phase.store(kCaptureFailed, std::memory_order_release);
  }
  changed_.notify_all();
}

CapturePhase CaptureTrigger::Disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto phase = static_cast<CapturePhase>(g_capture_phase.load(std::memory_order_acquire));
  if (phase == kCaptureRecording) return phase;  // started: the caller stops it, then Reset()s
  // Armed, or Starting on a thread still waiting for this mutex (StartLocked then starts nothing).
  ResetLocked();
  return phase == kCaptureFailed ? kCaptureFailed : kCaptureIdle;
}

void CaptureTrigger::Reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  ResetLocked();
}

void CaptureTrigger::ResetLocked() {
  g_capture_counts_steps.store(false, std::memory_order_relaxed);
  g_capture_phase.store(kCaptureIdle, std::memory_order_release);
  Profiler::Get().DisarmCapture();
  step_limit_.store(0, std::memory_order_relaxed);
  changed_.notify_all();
}

absl::Status CaptureTrigger::start_status() {
  std::lock_guard<std::mutex> lock(mutex_);
  return start_status_;
}

bool CaptureTrigger::CountStepEnd(uint64_t word) {
  // The program's own session (started while a capture was armed) is not the capture's.
  if (word != word_.load(std::memory_order_acquire)) return false;
  const uint64_t completed = steps_completed_.fetch_add(1, std::memory_order_relaxed) + 1;
  const uint64_t limit = step_limit_.load(std::memory_order_relaxed);
  if (limit == 0 || completed < limit) return false;
  if (!Profiler::HaltRecording(word)) return false;  // another thread's end got there first
  MarkHalted(word);
  return true;
}

void CaptureTrigger::EndAtNextStepEnd() {
  step_limit_.store(steps_completed_.load(std::memory_order_relaxed) + 1,
                    std::memory_order_relaxed);
}

void CaptureTrigger::HaltNow() {
  const uint64_t word = session_word();
  Profiler::HaltRecording(word);  // false when the step count ended it meanwhile
  MarkHalted(word);
}

void CaptureTrigger::MarkHalted(uint64_t word) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A late mark of an earlier capture must not end the next one (Arm() reset the word).
  if (word != word_.load(std::memory_order_relaxed)) return;
  halted_.store(true, std::memory_order_release);
  changed_.notify_all();
}

bool CaptureTrigger::WaitHalted(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_until(lock, deadline, [this] { return halted(); });
  return halted();
}

void CaptureTrigger::ResetAfterFork() {
  // Another thread may have held the mutex at fork(): fresh ones, the old ones' memory leaked.
  new (&mutex_) std::mutex();
  new (&changed_) std::condition_variable();
  g_capture_phase.store(kCaptureIdle, std::memory_order_relaxed);
  g_capture_counts_steps.store(false, std::memory_order_relaxed);
  step_limit_.store(0, std::memory_order_relaxed);
  halted_.store(false, std::memory_order_relaxed);
}

}  // namespace tfprof
