// Entry points libtfprof.so exports for tfprof's own libraries (the preload library) only: not
// in tfprof.h, not part of the stable C ABI, and free to change with any release.
#pragma once

#include "tfprof/tfprof.h"

#ifdef __cplusplus
extern "C" {
#endif

// Removes the hidden file of every output not yet written in full (staged_file.h; only file
// systems without unnamed files have them). Async-signal-safe: a signal handler that ends the
// process calls it so that no partial file outlives the process. Any thread.
PROF_API void prof__remove_staged_files(void);

// Nonzero while the calling thread starts threads of tfprof's own (runtime/common/own_threads.h):
// inside a control call, a capture's start, or on one of tfprof's threads. The preload library's
// pthread_create hook asks it, to record the program's thread starts only. Any thread.
PROF_API int prof__creating_own_threads(void);

#ifdef __cplusplus
}
#endif
