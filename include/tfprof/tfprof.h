// tfprof: an embeddable profiler runtime for ML programs.
//
// This is the whole public C ABI. It is C99, compiles as C and C++, and includes only standard
// headers. Versions with the same major number are ABI compatible.
//
// Thread rules, said once for every function below (a function that differs says so):
// - Every function may be called from any thread, at any time, with or without a profiling
//   session running.
// - Hot-path functions (spans, steps, instants, counters) return void, never block, never fail
//   the host program, and do nothing when no profiling session is running.
// - Control functions (start, stop, export, stats) return 0 or a negative PROF_E* code. They
//   serialise among themselves; call them from one thread at a time for predictable results.
//
// Strings passed in are only borrowed for the duration of the call: the runtime copies what it
// keeps, so a caller may free or reuse a name right after the call returns. Any bytes are legal
// in a name: it is kept as given, and every output writes it as valid UTF-8 (each byte of an
// invalid sequence becomes U+FFFD).
//
// Longer explanations live in docs/api.md.

#ifndef TFPROF_TFPROF_H_
#define TFPROF_TFPROF_H_

#include <stddef.h>
#include <stdint.h>

#define TFPROF_VERSION_MAJOR 0
#define TFPROF_VERSION_MINOR 5
#define TFPROF_VERSION_PATCH 0
#define TFPROF_VERSION_NUMBER \
  (TFPROF_VERSION_MAJOR * 10000 + TFPROF_VERSION_MINOR * 100 + TFPROF_VERSION_PATCH)

// PROF_API marks exported functions. Define TFPROF_BUILDING_LIBRARY only when building
// libtfprof itself; consumers need nothing.
#if defined(_WIN32)
#if defined(TFPROF_BUILDING_LIBRARY)
#define PROF_API __declspec(dllexport)
#else
#define PROF_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define PROF_API __attribute__((visibility("default")))
#else
#define PROF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

// Error codes returned by control functions. Values are pinned: they never change meaning.
#define PROF_OK 0
#define PROF_EINVAL (-1)        // an argument was NULL, empty or out of range
#define PROF_EOPTION (-2)       // the option string has an unknown key or a bad value
#define PROF_EALREADY (-3)      // a profiling session is already running
#define PROF_ENOTSTARTED (-4)   // no profiling session is running
#define PROF_EIO (-5)           // a file could not be opened, written or renamed
#define PROF_EFORMAT (-6)       // the output path's extension names no supported format
#define PROF_ENODATA (-7)       // nothing has been collected since the library was loaded
#define PROF_ENOMEM (-8)        // memory could not be allocated
#define PROF_EINTERNAL (-9)     // a bug in tfprof; please report it with prof_last_error()
#define PROF_EDATA (-10)        // an input file is damaged or in no supported format (since 0.2)
#define PROF_ENOGPU (-11)       // cuda=on, but GPU tracing cannot start here (since 0.2)

// ---- Version --------------------------------------------------------------------------------

// Returns TFPROF_VERSION_NUMBER of the loaded library (which may differ from the header used at
// compile time). Since 0.1.
PROF_API unsigned prof_version(void);

// Returns the loaded library's version as "MAJOR.MINOR.PATCH". Static storage; never free it.
// Since 0.1.
PROF_API const char *prof_version_string(void);

// ---- Control --------------------------------------------------------------------------------

// Starts a profiling session. `options` is NULL or "" for defaults, or comma-separated
// `key=value` pairs (a literal comma or backslash in a value is written `\,` or `\\`):
//   buffer_events=N       per-thread ring capacity in events (16..67108864, rounded up to a
//                         power of two; default 65536)
//   output=PATH           write the session to PATH, in the format the path names (see
//                         prof_export()). A .json, .tfrecord, .pftrace (since 0.4) or
//                         TensorBoard log directory is
//                         created now (a bad path fails here) and grows step by step as steps
//                         finish, on a writer thread; a .json is a complete trace after every
//                         step written (since 0.4), so a crash keeps the finished steps. A
//                         .json.gz, .pb or .xplane.pb, and any output with keep=last:..., is
//                         written at prof_stop(); a log directory's XPlane profile too (see
//                         tensorboard_profile)
//   format=F              json|json.gz|pb|tfrecord|tensorboard|perfetto|xplane: overrides
//                         output's extension (perfetto and xplane since 0.4)
//   tensorboard_profile=on|off  a TensorBoard log directory output (and exports to one) also
//                         gets plugins/profile/<run>/<host>.xplane.pb, the XPlane profile of
//                         TensorBoard's Profile tab (default on; since 0.4)
//   flush_interval_ms=N   how often the collector thread drains rings (0 = only at stop and
//                         export; default 10)
//   clock=auto|tsc|monotonic   timestamp source (default auto: TSC when the kernel trusts it)
//   warnings=on|off       warnings on stderr, such as "GPU tracing is off" (default on; since 0.2)
// Memory and the flight recorder (since 0.3; docs/api.md "Memory"):
//   max_memory_mb=N       collected records held in memory, at most (0..1048576, default 48,
//                         256 before 0.4; 0 = no limit); beyond it the collector moves them to
//                         an unnamed spill file in $TMPDIR that exports read back, so nothing
//                         is lost. If the spill file fails (disk full), records beyond the
//                         limit are dropped and counted (events_memory_dropped), and the
//                         program goes on
//   spill_dir=PATH        where the spill file goes (default $TMPDIR, else /tmp); one warning
//                         when it is a file system in memory (tmpfs), which saves no RAM
//   keep=all|last:N|last:Ns   keep everything (default), or only the last N steps or the last
//                         N seconds: older records are evicted as the session runs and counted
//                         (events_discarded); prof_export() writes the window kept
//   dump_on_slow_step=X   when a step takes more than X times the median of the steps so far
//                         (X > 1; from the 4th step on), export the kept window next to
//                         `output` (trace.json -> trace.slow-step-<N>.json), at most 10 times
// GPU tracing through CUPTI (since 0.2; docs/gpu.md):
//   cuda=auto|on|off      auto (default): trace the GPU when CUPTI, the driver and a device are
//                         there, else warn once on stderr and trace the host only; on: fail
//                         with PROF_ENOGPU instead; off: host only, no warning
//   cupti_path=PATH       libcupti.so (or its directory) to load before searching the usual
//                         places ($TFPROF_CUPTI_PATH, $CUDA_HOME, /usr/local/cuda, the loader's
//                         path, the nvidia-cuda-cupti pip package)
//   cupti_buffer_kb=N     size of each CUPTI activity buffer (64..262144, default 4096)
//   cupti_buffers=N       buffers allocated before tracing starts (2..4096, default 8); when all
//                         are in use CUPTI drops records, and the drops are counted
//   cuda_sync=on|off      also record synchronisation waits (default off)
//   cuda_queries=on|off   also record the CUDA calls that only read state (cudaGetDevice,
//                         cudaGetLastError, ...; default off, since 0.4)
//   gpu_wait_ms=N         how long a step's output and prof_stop() wait for GPU work launched
//                         but not yet reported (0..600000, default 2000)
// A new session discards the data of the previous one. After fork() the child has no session
// (since 0.2): the parent's goes on, and its output is written by the parent only; the child may
// start its own.
// Returns 0, PROF_EOPTION (unknown key, bad value, duplicate key; nothing started),
// PROF_EALREADY (a session is running; it goes on untouched), PROF_ENOGPU (cuda=on and GPU
// tracing cannot start; prof_last_error() says why) or PROF_ENOMEM.
// Since 0.1.
PROF_API int prof_start(const char *options);

// Stops the running session and drains every thread's ring; the data stays exportable until the
// next prof_start(). Spans still open are closed at the stop time and marked incomplete. If the
// session was started with `output=`, finishes that output (or exports there) and returns that
// write's result (the session is stopped either way, and the data can be exported again
// elsewhere).
// Returns 0, PROF_ENOTSTARTED, or an export error. Since 0.1.
PROF_API int prof_stop(void);

// Writes what was collected to `path`; the format follows the path: ".json" is Chrome trace
// JSON, ".json.gz" the same compressed with gzip, ".pb" one binary TensorFlow RunMetadata,
// ".tfrecord" a TFRecord file of one RunMetadata per step, ".pftrace" or ".perfetto-trace"
// Perfetto's protobuf trace (since 0.4; docs/perfetto.md), ".xplane.pb" an XPlane profile, what
// TensorBoard's Profile tab (XProf) reads (since 0.4), and an existing directory or a path
// ending in '/' a TensorBoard event file (events.out.tfevents.<time>.<host>) inside it and,
// beside it, the XPlane profile plugins/profile/<run>/<host>.xplane.pb (since 0.4; option
// tensorboard_profile=off: the event file only) (docs/tensorflow.md says what they hold). Works while a session runs (exporting what was
// collected so far, open spans marked incomplete) and after prof_stop(). The file is written
// unnamed (O_TMPFILE) and named when complete, so a failure, or a process killed meanwhile,
// never leaves a half-written file at `path` or a temporary one beside it (since 0.4).
// A failure loses nothing: the same data can be exported again to another path.
// Returns 0, PROF_EINVAL (NULL or empty path), PROF_EFORMAT (unknown extension), PROF_EIO (the
// file could not be written; prof_last_error() says which and why) or PROF_ENODATA (no session
// has run since the library was loaded). Since 0.1.
PROF_API int prof_export(const char *path);

// Returns 1 while a profiling session is running, else 0. Since 0.1.
PROF_API int prof_is_running(void);

// ---- Capture on demand (since 0.5; docs/capture.md) -----------------------------------------
// A process that calls prof_listen() runs with no session (the hot path costs what it costs with
// none) until `tfprof capture PID` asks for one: the session then starts at the program's next
// prof_begin_step() (or at once with `--seconds` when the program marks no steps), records the
// steps or seconds asked for, is written to the path the command gave (any output format), and
// the process goes back to waiting, holding nothing. Any number of captures, one at a time.
// The endpoint is a Unix socket in the abstract namespace, "tfprof-capture/<pid>": no TCP port,
// no file. Only the process's own user and root may capture it (the peer's credentials are
// checked). One thread of tfprof's waits in accept() and wakes only when a command connects;
// each capture runs on a thread of its own. GPU tracing (CUPTI) runs only during captures.
// `options` is NULL or prof_start() options every capture's session gets (cuda=, buffer_events=,
// ...; not output=, which each capture names); a capture's own options override them.
// A capture is refused while the program runs a session of its own (prof_start(), tfprof.trace),
// and the program's prof_start() fails with PROF_EALREADY while a capture records.
// `tfprof capture --dump PID` writes what a running session holds (a flight recorder's kept
// window, keep=last:N) without stopping it.
// At exit, a capture in progress is ended and written first (waiting up to 30 s). After fork()
// the child does not listen (it may call prof_listen() itself).
// Returns 0, PROF_EOPTION (bad options), PROF_EALREADY (listening already) or PROF_EIO (the
// endpoint could not be made; prof_last_error() says why). Since 0.5.
PROF_API int prof_listen(const char *options);

// Stops listening. A capture in progress is ended and written first. Returns 0 or
// PROF_ENOTSTARTED (not listening). Since 0.5.
PROF_API int prof_unlisten(void);

// Returns 1 while the process listens for captures (prof_listen()), else 0. Since 0.5.
PROF_API int prof_is_listening(void);

// Statistics of the current (or, after prof_stop(), the last) session.
// Set `struct_size` to sizeof(prof_stats_t) before calling: newer libraries fill only the fields
// an older caller knows about, so the struct can grow without breaking the ABI.
typedef struct prof_stats {
  uint32_t struct_size;          // in: sizeof(prof_stats_t) as the caller knows it
  uint32_t running;              // 1 while a session is running
  uint64_t events_recorded;      // events written into rings (and, since 0.4, events of a
                                 // thread that could get no ring: counted as memory-dropped)
  uint64_t events_dropped;       // events dropped because a ring was full
  uint64_t threads;              // threads that recorded at least one event
  uint64_t unmatched_span_ends;  // prof_span_end() calls with no open span (ignored)
  uint64_t unmatched_step_ends;  // prof_end_step()/prof_cancel_step() calls, no open step
  uint64_t names_interned;       // distinct names seen so far
  uint64_t session_serial;       // the value prof_session_active held while this session ran,
                                 // so a caller can tell its own session from a later one
  // Since 0.2 (filled when struct_size covers them):
  int32_t gpu_state;             // PROF_GPU_OFF, PROF_GPU_NOT_BUILT, PROF_GPU_UNAVAILABLE or
                                 // PROF_GPU_ACTIVE
  uint32_t reserved0;
  uint64_t gpu_records;          // kernels, copies, memsets and CUDA API calls collected so far
  uint64_t gpu_records_dropped;  // records CUPTI dropped (no buffer space), summed
  uint64_t gpu_buffers_refused;  // times CUPTI asked for a buffer while all were in use
  // Since 0.3 (filled when struct_size covers them):
  uint64_t events_memory_dropped;  // records collected, then lost: no memory for them (since
                                   // 0.4 also a thread's ring, a streamed piece), or the spill
                                   // file failed (disk full)
  uint64_t events_discarded;     // records evicted on purpose: older than the keep= window
  uint64_t memory_bytes;         // collected records held in memory now
  uint64_t spill_bytes;          // collected records in the spill file now
  uint64_t slow_step_dumps;      // dumps written by dump_on_slow_step
} prof_stats_t;

// prof_stats_t.gpu_state values. Since 0.2.
#define PROF_GPU_OFF 0          // cuda=off
#define PROF_GPU_NOT_BUILT 1    // this library was built without GPU support
#define PROF_GPU_UNAVAILABLE 2  // cuda=auto and CUPTI could not be used (see the trace's reason)
#define PROF_GPU_ACTIVE 3

// Fills `*out` with the statistics. Counts are exact: recorded + dropped equals the number of
// hot-path calls that reached a running session (a span end whose begin was dropped counts as
// dropped). GPU counts cover the records handed over by CUPTI so far. Returns 0, PROF_EINVAL
// (NULL `out` or a `struct_size` smaller than the version 0.1 struct, 64 bytes) or PROF_ENODATA
// (no session has run). Since 0.1.
PROF_API int prof_get_stats(prof_stats_t *out);

// Returns a static description of a PROF_E* code ("unknown error code" for others). Never NULL,
// never free it. Since 0.1.
PROF_API const char *prof_strerror(int code);

// Returns a description of the last error a control function returned on the calling thread:
// what failed, where and why (for example the option key and its offset, or the path and the
// system's reason). "" if none. Thread-local storage, valid until the thread's next control call.
// Since 0.1.
PROF_API const char *prof_last_error(void);

// ---- Converting and merging trace files ------------------------------------------------------
// These read files and write one; they never touch the profiling session, so they work with or
// without one running, and several threads may convert at once. They run the library's one
// convert engine, the same one `tfprof convert`/`tfprof merge` and tfprof.convert()/merge() run:
// the same inputs and options give the same bytes (docs/api.md "Converting").

// Converts the trace in `input_path` to `output_path`. The input may be in any format tfprof
// reads, detected from the content: Chrome trace JSON (tfprof's, the PyTorch profiler's, any
// other; plain or gzip), a TensorFlow RunMetadata or StepStats, a TFRecord file of RunMetadata, a
// TensorBoard event file or a log directory, a Perfetto trace (since 0.4), TensorFlow's or JAX's
// XPlane profile: a <host>.xplane.pb, its run folder, or a log directory holding
// plugins/profile/<run>/ (the newest run; each host its own recording; since 0.4). The output's
// name chooses its format as for prof_export() (".json", ".json.gz", ".pb", ".tfrecord",
// ".pftrace", ".xplane.pb", a directory for a TensorBoard event file and its XPlane profile). `options` is NULL or "" for defaults, or comma-separated `key=value` pairs as for
// prof_start():
//   layout=tfprof|timeline  tfprof (default): tfprof's own layout (processes, threads, streams,
//                          steps, the wall-clock origin) in any output format. timeline: TensorFlow
//                          step statistics drawn as TensorFlow's timeline.py draws them, Chrome JSON
//                          only; other inputs are first made into step statistics (since 0.4)
//   format=NAME            json, json.gz, pb, tfrecord, tensorboard, perfetto or xplane,
//                          whatever the name says (since 0.4)
//   tensorboard_profile=on|off  a log directory output gets the XPlane profile of TensorBoard's
//                          Profile tab beside its event file (default on; since 0.4)
//   salvage=on|off         on damaged input, still write what was read before the damage
//                          (default off)
//   with layout=timeline only:
//   show_dataflow=on|off   arrows from each tensor's producer to its consumers (default on)
//   show_memory=on|off     tensor lifetimes and per-allocator memory counters (default off)
//   rows=threads|lanes     threads: one row per recorded thread id, named from the data, extra
//                          rows only where ops of one thread overlap without nesting, nanosecond
//                          times when present (default); lanes: timeline.py's rows and whole
//                          microseconds exactly, to compare with it event for event
// The output is written unnamed (O_TMPFILE) and named when complete, so a failure leaves no
// partial file at `output_path` (except with salvage=on, which writes it on PROF_EDATA on purpose).
// An input that simply ends early (its writer killed mid-write) is no error: it is converted to
// its last whole step, the call returns 0 and prof_last_error() holds the warning saying what was
// kept and dropped ("" after a success otherwise).
// Returns 0, PROF_EINVAL (NULL or empty path, or the output is the input), PROF_EOPTION (a bad
// option, or options that do not go together), PROF_EFORMAT (an output name in no format),
// PROF_EIO (a file could not be read or written), PROF_EDATA (an input is damaged, empty or no
// trace; prof_last_error() names the file, the byte offset and the problem) or PROF_ENOMEM.
// Since 0.2; every input and output format and layout= since 0.4 (0.2 and 0.3 converted step
// statistics to timeline.py's layout only).
PROF_API int prof_convert(const char *input_path, const char *output_path, const char *options);

// Like prof_convert() for `count` inputs on one timeline: each input becomes its own group of
// processes (named "rank R · HOST · pid P" with what the file records, else its file name; with
// layout=timeline, its processes prefixed with its file name). One more option:
//   align=wall|start       wall (default): by each input's wall-clock time; start: every input's
//                          first event at time 0 (layout=tfprof only; since 0.4)
//   fold=on|off            on: the inputs after the first are more of the first one's process
//                          (TensorFlow's profile taken beside a tfprof session): their host
//                          threads join its process, their GPUs its group, their steps count
//                          only if it marked none (layout=tfprof, align=wall; since 0.4)
// The paths are borrowed for the call. With salvage=on a damaged input contributes what was read
// before its damage and the others are merged in full. Returns as prof_convert(); PROF_EINVAL
// also for a NULL array, a NULL entry or `count` 0. Since 0.2.
PROF_API int prof_merge(const char *const *input_paths, size_t count, const char *output_path,
                        const char *options);

// ---- Hot path: steps, spans, instants, counters ----------------------------------------------
// None of these take a lock, allocate or make a system call after a thread's first event. When a
// thread's ring is full the event is dropped and counted (see prof_get_stats()).

// Marks the start of training step `step` on the calling thread's timeline. Events recorded
// from now until prof_end_step() (on any thread) belong to this step. Calling it while a step is
// open on this thread ends that step first, so a loop may call it alone each iteration.
// Since 0.1.
PROF_API void prof_begin_step(int64_t step);

// Ends the step opened by prof_begin_step() on the calling thread. With no open step it does
// nothing but count the call (prof_stats_t.unmatched_step_ends). Since 0.1.
PROF_API void prof_end_step(void);

// Ends the step opened by prof_begin_step() on the calling thread as if it had never begun: it is
// not counted, and what it held stays in the trace outside any step. For a step opened before it
// was known to be one, such as one whose input fetch then finds the data exhausted. With no open
// step it does nothing but count the call (prof_stats_t.unmatched_step_ends). Since 0.4.
PROF_API void prof_cancel_step(void);

// Opens a host op span named `name` on the calling thread. Spans nest; each is closed by
// prof_span_end() on the same thread. A NULL or empty `name` is recorded as "(unnamed)".
// Since 0.1.
PROF_API void prof_span_begin(const char *name);

// Closes the calling thread's innermost open span. With no open span it does nothing but count
// the call (prof_stats_t.unmatched_span_ends). Since 0.1.
PROF_API void prof_span_end(void);

// A name registered once with prof_register_name(), for spans opened very often: the span then
// records the id and never looks at text. 0 is never an id. Since 0.4.
typedef uint32_t prof_name_id_t;

// Registers `name` for prof_span_begin_id() and returns its id: the same id for the same text,
// from any thread, in this process for its whole life (across sessions; a name is never
// unregistered). The text is copied: `name` is borrowed for the call only. NULL or "" registers
// "(unnamed)". Takes a lock, so register names once, up front, not in a loop. Returns 0 when
// the process already registered 65536 names or memory ran out (prof_span_begin(name) still
// works then). Since 0.4.
PROF_API prof_name_id_t prof_register_name(const char *name);

// prof_span_begin() for a registered name: the same span, closed by prof_span_end(), with the
// cost of the name lookup gone (benchmarks/RESULTS.md). An id that prof_register_name() did not
// return is recorded as "(unregistered name)". Since 0.4.
PROF_API void prof_span_begin_id(prof_name_id_t id);

// Records a point event named `name` on the calling thread. NULL or "" becomes "(unnamed)".
// Since 0.1.
PROF_API void prof_instant(const char *name);

// Records the value of the process-wide counter `name` (for example "queue_depth"). NULL or ""
// becomes "(unnamed)". Any value is kept, NaN and infinities included (Chrome JSON writes those as
// the strings "NaN", "Infinity", "-Infinity"). Since 0.1.
PROF_API void prof_counter(const char *name, double value);

// Opens a range named `name` that, unlike a span, need not nest: it may end on any thread, in
// any order (NVTX's nvtxRangeStart/nvtxRangeEnd). Returns the range's id, unique in the process,
// for prof_range_end(); 0 when no session runs. NULL or "" becomes "(unnamed)". Chrome traces
// show ranges as async slices ("b"/"e") under the start thread; TensorFlow formats as ops of the
// start thread. A range not ended by the end of the session is marked incomplete. Since 0.2.
PROF_API uint64_t prof_range_start(const char *name);

// Ends the range `range_id` returned by prof_range_start(), on any thread. 0, an unknown id or a
// second end of one range does nothing (an id that was never started is ignored by exporters).
// Lock-free like a span end. When the calling thread's ring is full, the end goes to a shared
// overflow queue of 8192 ends (since 0.4), so a range keeps its end under load; only when that
// is full too is the end dropped (counted in events_dropped) and the range marked incomplete.
// Since 0.2.
PROF_API void prof_range_end(uint64_t range_id);

// Names the calling thread's row in the trace; takes precedence over the OS thread name. NULL or
// "" restores the OS thread name. Unlike the other functions here it may take a lock, so call it
// once per thread rather than in a loop. Since 0.1.
PROF_API void prof_set_thread_name(const char *name);

// ---- Inline check for the disabled case ------------------------------------------------------

// Nonzero while a profiling session runs, 0 otherwise. Exported so that the calls above can be
// skipped at the call site for the price of one load and one branch. While running it holds a
// session serial that differs from the previous session's, so a binding can keep per-thread
// state (such as "this thread's name was set") per session with the same load. Read-only for
// callers. Since 0.1.
PROF_API extern int prof_session_active;

#ifdef __cplusplus
}  // extern "C"
#endif

// With GCC and Clang, the hot-path calls above go through these inline wrappers, which call into
// the library only while a session runs. Arguments are evaluated exactly once either way.
// `(prof_span_begin)(name)` or a function pointer reaches the function itself; define
// TFPROF_NO_INLINE_CHECK before including this header to turn the wrappers off.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(TFPROF_NO_INLINE_CHECK) && \
    !defined(TFPROF_BUILDING_LIBRARY)
// No branch hint: with one, compilers move the call out of line and jump back after it, an
// instruction more per call while a session runs; without, the disabled case is the same load,
// test and branch.
#define PROF__ACTIVE() (__atomic_load_n(&prof_session_active, __ATOMIC_RELAXED) != 0)
static inline void prof__begin_step(int64_t step) {
  if (PROF__ACTIVE()) (prof_begin_step)(step);
}
static inline void prof__end_step(void) {
  if (PROF__ACTIVE()) (prof_end_step)();
}
static inline void prof__cancel_step(void) {
  if (PROF__ACTIVE()) (prof_cancel_step)();
}
static inline void prof__span_begin(const char *name) {
  if (PROF__ACTIVE()) (prof_span_begin)(name);
}
static inline void prof__span_begin_id(prof_name_id_t id) {
  if (PROF__ACTIVE()) (prof_span_begin_id)(id);
}
static inline void prof__span_end(void) {
  if (PROF__ACTIVE()) (prof_span_end)();
}
static inline void prof__instant(const char *name) {
  if (PROF__ACTIVE()) (prof_instant)(name);
}
static inline void prof__counter(const char *name, double value) {
  if (PROF__ACTIVE()) (prof_counter)(name, value);
}
#define prof_begin_step(step) prof__begin_step(step)
#define prof_end_step() prof__end_step()
#define prof_cancel_step() prof__cancel_step()
#define prof_span_begin(name) prof__span_begin(name)
#define prof_span_begin_id(id) prof__span_begin_id(id)
#define prof_span_end() prof__span_end()
#define prof_instant(name) prof__instant(name)
#define prof_counter(name, value) prof__counter(name, value)
#endif

#endif  // TFPROF_TFPROF_H_
