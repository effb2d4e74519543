/* The public header on its own, as strict C99 with every warning an error: it must be hermetic
 * (only standard headers) and clean. Built as part of the test suite; nothing runs. */
#include <tfprof/tfprof.h>

/* Every declaration is usable from C: take each function's address. */
typedef void (*AnyFunction)(void);
const AnyFunction tfprof_header_check_functions[] = {
    (AnyFunction)prof_version,   (AnyFunction)prof_version_string, (AnyFunction)prof_start,
    (AnyFunction)prof_stop,      (AnyFunction)prof_export,         (AnyFunction)prof_is_running,
    (AnyFunction)prof_get_stats, (AnyFunction)prof_strerror,       (AnyFunction)prof_last_error,
    (AnyFunction)(prof_begin_step), (AnyFunction)(prof_end_step),  (AnyFunction)(prof_span_begin),
    (AnyFunction)(prof_span_end), (AnyFunction)(prof_instant),     (AnyFunction)(prof_counter),
    (AnyFunction)prof_set_thread_name, (AnyFunction)prof_convert,   (AnyFunction)prof_merge,
    (AnyFunction)prof_range_start, (AnyFunction)prof_range_end,   (AnyFunction)prof_register_name,
    (AnyFunction)(prof_span_begin_id), (AnyFunction)prof_cancel_step, (AnyFunction)prof_listen,
    (AnyFunction)prof_unlisten,   (AnyFunction)prof_is_listening,
};

/* The inline wrappers expand where a call is written. */
void tfprof_header_check_calls(void) {
  prof_begin_step(1);
  prof_span_begin("op");
  prof_span_begin_id(prof_register_name("registered"));
  prof_span_end();
  prof_instant("mark");
  prof_counter("value", 1.0);
  prof_range_end(prof_range_start("range"));
  prof_span_end();
  prof_end_step();
}
