// The calls Python code makes per event, written against CPython's C API directly: pybind11's
// generic dispatch costs more than the whole recorded event, and these run inside users' loops.
//   tfprof.span(name)            a context manager (also a decorator: span(name)(func))
//   tfprof.span(func)            the bare decorator form
//   the function wrapper         what decorating returns: the span around each call
//   instant, counter, begin_step, end_step
// Each checks the C ABI's exported prof_session_active word first, so with no session running a
// call costs one load and a branch on top of the interpreter's own work.
#pragma once

#include <Python.h>

namespace tfprof_python {

// Readies the types and adds `span`, `SpanFunction`, `instant`, `counter`, `begin_step`,
// `end_step`, `_set_decorator` and `_set_thread_name_source` to `module`.
// Returns 0, or -1 with a Python exception set.
int AddHotPathToModule(PyObject *module);

}  // namespace tfprof_python
