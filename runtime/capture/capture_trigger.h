// When a capture's session starts and ends: at the program's step boundaries, so that a capture
// holds whole steps only.
//
// The capture's thread (capture_agent.cc) arms the trigger; from then on prof_session_active is
// nonzero (Profiler::ArmForCapture), so the next prof_begin_step() on any thread reaches the
// library with no session running and starts the capture's session right there, on the program's
// thread, recording that step's begin as its first event. While the session runs, every step
// that ends is counted; the end that completes the requested number stops the recording at once
// (Profiler::HaltRecording), before the next step's begin is recorded. The capture's thread then
// stops the session and writes it (prof_stop()'s work, off the program's threads).
//
// The hot path pays for this only while a capture is armed or running: with no session,
// prof_begin_step() reads one more flag; spans read nothing more.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "absl/status/status.h"

namespace tfprof {

enum CapturePhase : int {
  kCaptureIdle = 0,
  kCaptureArmed,      // waiting for a step boundary
  kCaptureStarting,   // a thread is starting the session
  kCaptureRecording,  // the session runs (or its recording was halted)
  kCaptureFailed,     // the session could not start (CaptureTrigger::start_status())
};

// Hidden, read by the hot path with one PC-relative load each.
extern std::atomic<int> g_capture_phase __attribute__((visibility("hidden")));
extern std::atomic<bool> g_capture_counts_steps __attribute__((visibility("hidden")));

inline bool CaptureArmed() {
  return g_capture_phase.load(std::memory_order_relaxed) == kCaptureArmed;
}
inline bool CaptureCountsSteps() { return g_capture_counts_steps.load(std::memory_order_relaxed); }

// prof_begin_step() with no session running while a capture is armed: starts the capture here.
__attribute__((cold, noinline)) void CaptureStepBoundary(int64_t step);
// prof_begin_step() in a capture's session: ends this thread's open step (counting it), then
// records the begin, or ends the recording when that step completed the capture.
__attribute__((cold, noinline)) void CaptureStepBegin(uint64_t word, int64_t step);
// prof_end_step() in a capture's session: records the end and counts it.
__attribute__((cold, noinline)) void CaptureStepEnd(uint64_t word);

class CaptureTrigger {
 public:
  using Clock = std::chrono::steady_clock;

  static CaptureTrigger &Get();

  // Arms a capture with prof_start() `options`, ending after `step_limit` steps (0: when told).
  // False, and nothing armed, while a session runs.
  bool Arm(const std::string &options, uint64_t step_limit);
  // Waits while armed, until `deadline`; returns the phase then.
  CapturePhase WaitWhileArmed(Clock::time_point deadline);
  // Still armed (no step boundary came): starts the session now, on the calling thread, not at
  // a step boundary. Returns the phase after.
  CapturePhase StartNowIfArmed();
  // Gives up an armed capture: back to idle unless its session started meanwhile. Returns
  // kCaptureIdle (nothing started), kCaptureRecording (started: stop it, then Reset()) or
  // kCaptureFailed (the start failed: Reset()).
  CapturePhase Disarm();
  // Back to idle, once the capture's session (if any) is stopped.
  void Reset();

  // Valid once the phase left kCaptureArmed.
  absl::Status start_status();
  bool started_at_step() const { return started_at_step_; }  // else at once
  int64_t first_step() const { return first_step_; }
  uint64_t session_word() const { return word_.load(std::memory_order_acquire); }

  uint64_t steps_completed() const { return steps_completed_.load(std::memory_order_relaxed); }
  bool halted() const { return halted_.load(std::memory_order_acquire); }
  // A capture by time in a program that marks steps: ends the recording at the next step end.
  void EndAtNextStepEnd();
  // Ends the recording now (time's up, the command went away, the program is exiting).
  void HaltNow();
  // Waits until the recording ended or `deadline`; returns halted().
  bool WaitHalted(Clock::time_point deadline);

  // In a fork() child: no capture runs there. Takes no lock (another thread may have held one).
  void ResetAfterFork();

  // The hot path's side (CaptureStepBoundary and friends).
  void StartAtBoundary(int64_t step);
  // Counts an ended step; ends the recording and returns true when it completed the capture.
  bool CountStepEnd(uint64_t word);

 private:
  // Under mutex_: starts the session (phase kCaptureStarting), records the step's begin when
  // `at_step`, and publishes the outcome.
  void StartLocked(bool at_step, int64_t step);
  void ResetLocked();
  void MarkHalted(uint64_t word);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::string options_;
  absl::Status start_status_;
  std::atomic<uint64_t> word_{0};  // the capture's session word (read by the hot path)
  bool started_at_step_ = false;
  int64_t first_step_ = 0;
  std::atomic<uint64_t> steps_completed_{0};
  std::atomic<uint64_t> step_limit_{0};  // 0: no limit yet
  std::atomic<bool> halted_{false};
};

}  // namespace tfprof
