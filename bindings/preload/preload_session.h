// The preload library's one profiling session: started from the environment when the library is
// loaded (LD_PRELOAD), or when CUDA calls InitializeInjection (CUDA_INJECTION64_PATH), written at
// exit or on a fatal signal, and restarted in fork() children whose output names the pid.
// With TFPROF_ON_DEMAND (tfprof run --on-demand) no session starts: the process, and each child it
// forks or execs, listens for `tfprof capture PID` (prof_listen()) with the hooks on, so that a
// capture records what a session would.
#pragma once

#include <atomic>
#include <cstdint>

#include "bindings/preload/step_marker.h"
#include "tfprof/tfprof.h"

namespace tfprof::preload {

// Starts the session once per process image; later calls do nothing. Never throws, never
// exits: on bad configuration or any failure it says so in one line and leaves the program
// unprofiled.
void EnsureStarted();

// Whether the hooks (NVTX, function spans, thread lifetimes) should record: false in an inert
// process (set-uid, bad environment, a child not followed, or after an internal failure).
bool HooksEnabled();

// The configured step marker, or null while not started. Inline: read on every NVTX push.
extern std::atomic<StepMarker *> g_step_marker;
inline StepMarker *GetStepMarker() { return g_step_marker.load(std::memory_order_acquire); }

// Stops the session and writes its output (the exit and signal paths). `why` is logged. Does
// nothing without a session (on demand, the library's own exit handler writes a capture).
void FinishSession(const char *why);

// Turns the hooks off after an internal failure, with one error line naming `what`.
void DisableAfterFailure(const char *what);

// True on the thread that is inside the preload's own prof_start() (threads it creates are the
// profiler's, not the program's).
bool InsideOwnStart();

}  // namespace tfprof::preload
