// Writing the trace when the program is killed by SIGINT, SIGTERM, SIGHUP or SIGABRT (abort()).
//
// A signal handler cannot safely export (it may have interrupted malloc). So the handler only
// wakes a watcher thread through a pipe and waits, with a timeout, for it to finish writing; then
// it restores the signal's default action and re-raises it, so the program ends exactly as it
// would have without tfprof (same signal, same exit status). Signals whose disposition is not
// the default when tfprof starts (the program's own handlers, or ignored ones) are left alone.
#pragma once

namespace tfprof::preload {

// `flush(why)` is called on the watcher thread with the signal's name.
void InstallSignalFlush(void (*flush)(const char *why));

// In a fork() child: the watcher thread did not survive fork() and the pipes are shared with the
// parent, so both are made anew.
void RestartSignalFlushInChild();

}  // namespace tfprof::preload
