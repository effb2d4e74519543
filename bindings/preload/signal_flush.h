// Writing the trace when the program is killed by SIGINT, SIGTERM, SIGHUP or SIGABRT (abort()).
//
// A signal handler cannot safely export: the thread it interrupted may hold any lock (malloc's,
// stdio's, the session's own control lock inside prof_export). So the handler takes no lock and
// waits on nothing the program holds: it hands the signal to tfprof's watcher thread through a
// pipe and returns, and the program goes on while tfprof's flush thread writes the trace. The
// watcher then ends the program with the same signal (same exit status, as without tfprof), or
// after the deadline (TFPROF_SIGNAL_DEADLINE) without the trace. abort() cannot go on after its
// handler, so the aborting thread waits in the handler instead, and re-raises when released.
//
// A second signal, of any kind, ends the program at once. Either way no partial file is left:
// outputs are unnamed until written in full (staged_file.h), and hidden names are removed.
// Signals whose disposition is not the default when tfprof starts (the program's own handlers,
// or ignored ones) are left alone.
//
// Python reads every signal's disposition once, when the interpreter starts: a handler of ours
// installed before then makes `signal.getsignal()` answer None (code that saves and restores a
// handler then raises TypeError: multiprocessing's forkserver re-forks its workers forever) and
// keeps Python from installing its own SIGINT handler (Ctrl-C kills the program without
// KeyboardInterrupt, `finally` or `with` cleanup). So in a Python process nothing is installed
// until the interpreter says it has started (InstallDeferredSignalHandlers, called by the
// `tfprof run` start-up module), and SIGINT stays Python's: KeyboardInterrupt unwinds the program
// and the trace is written at exit as usual.
#pragma once

namespace tfprof::preload {

// `flush(why)` is called on the flush thread with the signal's name; `deadline_ms` bounds how
// long the program may take to end after the first signal (0: at once, no flush).
// In a Python process (`python_process`) the handlers wait for InstallDeferredSignalHandlers().
void InstallSignalFlush(void (*flush)(const char *why), int deadline_ms, bool python_process);

// Installs the handlers InstallSignalFlush deferred in a Python process, SIGINT excepted, for the
// signals whose disposition is still the default. Once; later calls do nothing.
void InstallDeferredSignalHandlers();

// In a fork() child: the threads did not survive fork() and the pipes are shared with the
// parent, so both are made anew.
void RestartSignalFlushInChild();

// Whether a fatal signal has asked for the trace: the program is ending by that signal.
bool SignalEndPending();

// For the exit path when SignalEndPending(): waits to be ended by the signal (the watcher does
// it once the trace is written) and never returns.
[[noreturn]] void AwaitSignalEnd();

}  // namespace tfprof::preload
