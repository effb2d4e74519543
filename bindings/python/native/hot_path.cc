#include "hot_path.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include <structmember.h>

#include <initializer_list>
#include <new>
#include <utility>

#include "tfprof/tfprof.h"

namespace tfprof_python {

namespace {

// ---- session check and thread naming -------------------------------------------------------

// prof_session_active: 0 with no session, else a serial that changes with every session.
inline int ActiveSession() { return __atomic_load_n(&prof_session_active, __ATOMIC_RELAXED); }

// The session in which this thread's row last got its name. initial-exec, as the runtime's own
// thread state: read on every span, and the default model for a dlopen()ed module would call
// __tls_get_addr each time (a few bytes of glibc's static TLS reserve).
__thread int t_named_session __attribute__((tls_model("initial-exec"))) = 0;
// Set by set_thread_name(): the runtime keeps that name across sessions, so the threading name
// must not replace it.
__thread bool t_named_explicitly __attribute__((tls_model("initial-exec"))) = false;

// Set by the package: () -> str | None, this thread's Python name (None: keep the OS name).
PyObject *g_thread_name_source = nullptr;
// Set by the package: (name: str | None, func) -> the wrapper that records a span per call.
PyObject *g_decorator = nullptr;

// Holds the exception pending when it was made (none, usually) and puts it back on Restore();
// destroying it without Restore() drops it.
class PendingException {
 public:
#if PY_VERSION_HEX >= 0x030C0000
  PendingException() : exception_(PyErr_GetRaisedException()) {}
  ~PendingException() { Py_XDECREF(exception_); }
  void Restore() { PyErr_SetRaisedException(std::exchange(exception_, nullptr)); }

 private:
  PyObject *exception_;
#else
  PendingException() { PyErr_Fetch(&type_, &value_, &traceback_); }
  ~PendingException() {
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(traceback_);
  }
  void Restore() {
    PyErr_Restore(std::exchange(type_, nullptr), std::exchange(value_, nullptr),
                  std::exchange(traceback_, nullptr));
  }

 private:
  PyObject *type_, *value_, *traceback_;
#endif
  PendingException(const PendingException &) = delete;
  PendingException &operator=(const PendingException &) = delete;
};

// Gives this thread's row its Python name: once per thread per session, on its first event.
// Best effort: an ordinary exception from the name source is swallowed (naming must never break
// the user's code), and one already pending is kept. Returns -1 only when something that is not
// an Exception (KeyboardInterrupt, SystemExit) arrived meanwhile: it is left set, to propagate.
__attribute__((noinline)) int NameThisThread(int session) {
  t_named_session = session;
  if (g_thread_name_source == nullptr || t_named_explicitly) return 0;
  PendingException pending;
  PyObject *source = g_thread_name_source;
  Py_INCREF(source);  // the call may replace the installed source
  PyObject *name = PyObject_CallNoArgs(source);
  Py_DECREF(source);
  if (name != nullptr && PyUnicode_Check(name)) {
    const char *utf8 = PyUnicode_AsUTF8(name);
    if (utf8 != nullptr) prof_set_thread_name(utf8);
  }
  Py_XDECREF(name);
  if (PyErr_Occurred() != nullptr && !PyErr_ExceptionMatches(PyExc_Exception)) return -1;
  PyErr_Clear();
  pending.Restore();
  return 0;
}

// The running session's serial (0 if none), after naming this thread's row if it is new to the
// session; -1 with an exception set if naming was interrupted (see NameThisThread).
inline int ActiveNamedSession() {
  const int session = ActiveSession();
  if (__builtin_expect(session != 0 && session != t_named_session, 0)) {
    if (NameThisThread(session) < 0) return -1;
  }
  return session;
}

// The UTF-8 bytes of a str (cached inside the str object by CPython, so valid while it lives),
// or nullptr with TypeError/ValueError set. `what` names the caller in the message.
const char *NameUtf8(PyObject *name, const char *what) {
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "%s: the name must be a str, not %.100s", what,
                 Py_TYPE(name)->tp_name);
    return nullptr;
  }
  Py_ssize_t size = 0;
  const char *utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (utf8 == nullptr) return nullptr;
  if (memchr(utf8, 0, static_cast<size_t>(size)) != nullptr) {
    PyErr_Format(PyExc_ValueError, "%s: the name %R contains a NUL character", what, name);
    return nullptr;
  }
  return utf8;
}

PyObject *Decorate(PyObject *name, PyObject *func) {
  if (g_decorator == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "tfprof.span: import the tfprof package, not tfprof._native");
    return nullptr;
  }
  PyObject *decorator = g_decorator;
  Py_INCREF(decorator);  // the call may replace the installed decorator
  PyObject *args[] = {name, func};
  PyObject *result = PyObject_Vectorcall(decorator, args, 2, nullptr);
  Py_DECREF(decorator);
  return result;
}

// ---- tfprof.span ------------------------------------------------------------------------------

struct SpanObject {
  PyObject_HEAD
  PyObject *name;    // str
  const char *utf8;  // owned by `name`
};

extern PyTypeObject g_span_type;

PyObject *NewSpan(PyObject *name_argument) {
  // An exact str: a str subclass could carry a reference back to this (untracked) object.
  PyObject *name = PyUnicode_CheckExact(name_argument) ? (Py_INCREF(name_argument), name_argument)
                                                       : PyUnicode_FromObject(name_argument);
  if (name == nullptr) return nullptr;
  const char *utf8 = NameUtf8(name, "tfprof.span");
  SpanObject *span = utf8 == nullptr ? nullptr : PyObject_New(SpanObject, &g_span_type);
  if (span == nullptr) {
    Py_DECREF(name);
    return nullptr;
  }
  span->name = name;
  span->utf8 = utf8;
  return reinterpret_cast<PyObject *>(span);
}

// What a span can decorate: callables, and the staticmethod and classmethod objects that are not
// callable themselves before Python 3.10 (classmethod never is).
bool Decoratable(PyObject *object) {
  return PyCallable_Check(object) || PyObject_TypeCheck(object, &PyStaticMethod_Type) ||
         PyObject_TypeCheck(object, &PyClassMethod_Type);
}

// span("name") is a span; span(func) is the bare decorator form.
PyObject *SpanFromArgument(PyObject *argument) {
  if (PyUnicode_Check(argument)) return NewSpan(argument);
  if (Decoratable(argument)) return Decorate(Py_None, argument);
  PyErr_Format(PyExc_TypeError,
               "tfprof.span() takes a name (str) or a function to decorate, not %.100s",
               Py_TYPE(argument)->tp_name);
  return nullptr;
}

// Calling the type: the fast path for `tfprof.span("x")` (no argument tuple is built).
PyObject *SpanTypeVectorcall(PyObject *, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  const Py_ssize_t positional = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (positional + keywords != 1 ||
      (keywords == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "name") != 0)) {
    PyErr_SetString(PyExc_TypeError,
                    "tfprof.span() takes one argument: a name (str) or a function to decorate");
    return nullptr;
  }
  return SpanFromArgument(args[0]);
}

PyObject *SpanTypeNew(PyTypeObject *, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"name", nullptr};
  PyObject *argument = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:span", const_cast<char **>(keywords),
                                   &argument)) {
    return nullptr;
  }
  return SpanFromArgument(argument);
}

void SpanDealloc(PyObject *self) {
  Py_DECREF(reinterpret_cast<SpanObject *>(self)->name);
  PyObject_Free(self);
}

// ---- spans across `await` ---------------------------------------------------------------------
//
// The runtime's spans nest per thread. asyncio tasks share a thread and interleave: task A opens
// "x" and awaits, task B opens "y", A resumes and closes... B's span, so both durations would be
// wrong. Each task runs in its own contextvars context, so the span's context tells tasks apart:
// a span is a runtime span only when the thread's innermost open span is a runtime span of the
// same context (or none is open); otherwise it is recorded as a range (prof_range_start), which
// needs no nesting and is closed by id, so every duration stays right. Synchronous code and a
// task's own spans between awaits stay ordinary nested spans.
//
// The thread's open spans, innermost last, on the heap: the thread-local slot is one pointer
// with the initial-exec model (one %fs-relative load, no __tls_get_addr call; a pointer fits
// glibc's static TLS reserve even in a dlopen()ed module). Freed at thread exit by a pthread key
// destructor, which cannot take the GIL: references to the contexts of spans a thread left open
// are leaked, never released without the GIL.
struct OpenSpan {
  PyObject *context;  // strong reference (or null: the thread's context was never created)
  uint64_t range_id;  // 0: a runtime span
  int session;
};
constexpr int kMostOpenSpans = 64;
struct OpenSpans {
  int count = 0;
  int untracked = 0;  // opened as runtime spans past kMostOpenSpans
  OpenSpan spans[kMostOpenSpans];
};
__thread OpenSpans *t_open __attribute__((tls_model("initial-exec"))) = nullptr;
pthread_key_t g_open_spans_key;
pthread_once_t g_open_spans_key_once = PTHREAD_ONCE_INIT;

void FreeOpenSpans(void *open) { delete static_cast<OpenSpans *>(open); }

// The calling thread's open spans; null when there is no memory for them.
__attribute__((noinline)) OpenSpans *MakeOpenSpans() {
  pthread_once(&g_open_spans_key_once, [] { pthread_key_create(&g_open_spans_key, &FreeOpenSpans); });
  auto *open = new (std::nothrow) OpenSpans();
  if (open != nullptr) pthread_setspecific(g_open_spans_key, open);
  t_open = open;
  return open;
}

inline PyObject *CurrentContext() { return PyThreadState_Get()->context; }

void ForgetOpenSpan(OpenSpans &open, int index) {
  Py_XDECREF(open.spans[index].context);
  for (int at = index; at + 1 < open.count; ++at) open.spans[at] = open.spans[at + 1];
  --open.count;
}

void OpenSpanHere(const char *utf8, int session) {
  OpenSpans *open_or_null = t_open != nullptr ? t_open : MakeOpenSpans();
  if (open_or_null == nullptr) {  // out of memory: a plain runtime span, as before asyncio support
    (prof_span_begin)(utf8);
    return;
  }
  OpenSpans &open = *open_or_null;
  // Spans of an earlier session are over: forget them.
  while (open.count > 0 && open.spans[open.count - 1].session != session) {
    ForgetOpenSpan(open, open.count - 1);
  }
  if (open.count == kMostOpenSpans) {
    ++open.untracked;
    (prof_span_begin)(utf8);
    return;
  }
  PyObject *context = CurrentContext();
  const OpenSpan *inner = open.count > 0 ? &open.spans[open.count - 1] : nullptr;
  const bool nests = inner == nullptr || (inner->range_id == 0 && inner->context == context);
  uint64_t range_id = 0;
  if (nests) {
    (prof_span_begin)(utf8);
  } else {
    range_id = (prof_range_start)(utf8);
  }
  Py_XINCREF(context);
  open.spans[open.count++] = OpenSpan{context, range_id, session};
}

// With a session running (spans left after it ended are forgotten by the next session's first
// span, like the runtime's own).
void CloseSpanHere(int session) {
  if (t_open == nullptr) {
    (prof_span_end)();
    return;
  }
  OpenSpans &open = *t_open;
  if (open.untracked > 0) {
    --open.untracked;
    (prof_span_end)();
    return;
  }
  // This context's innermost span: within one task, `with` blocks nest.
  PyObject *context = CurrentContext();
  int index = open.count - 1;
  while (index >= 0 && open.spans[index].context != context) --index;
  if (index < 0) {
    (prof_span_end)();  // opened before the session: an unmatched end, counted
    return;
  }
  const OpenSpan span = open.spans[index];
  ForgetOpenSpan(open, index);  // span.context is not used past this point
  if (span.session != session) return;
  if (span.range_id != 0) {
    (prof_range_end)(span.range_id);
  } else {
    (prof_span_end)();
  }
}

PyObject *SpanEnter(PyObject *self, PyObject *) {
  const int session = ActiveNamedSession();
  if (session < 0) return nullptr;
  if (session != 0) OpenSpanHere(reinterpret_cast<SpanObject *>(self)->utf8, session);
  Py_INCREF(self);
  return self;
}

// Returns None, so an exception raised inside the span propagates unchanged.
PyObject *SpanExit(PyObject *, PyObject *const *, Py_ssize_t) {
  if (const int session = ActiveSession(); session != 0) CloseSpanHere(session);
  Py_RETURN_NONE;
}

// span("name")(func): the decorator form with an explicit name.
PyObject *SpanCall(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *func = nullptr;
  if (!PyArg_ParseTuple(args, "O:span.__call__", &func)) return nullptr;
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_SetString(PyExc_TypeError, "tfprof.span(name)(func) takes no keyword arguments");
    return nullptr;
  }
  if (!Decoratable(func)) {
    PyErr_Format(PyExc_TypeError, "tfprof.span(%R) decorates functions, not %.100s",
                 reinterpret_cast<SpanObject *>(self)->name, Py_TYPE(func)->tp_name);
    return nullptr;
  }
  return Decorate(reinterpret_cast<SpanObject *>(self)->name, func);
}

PyObject *SpanRepr(PyObject *self) {
  return PyUnicode_FromFormat("tfprof.span(%R)", reinterpret_cast<SpanObject *>(self)->name);
}

PyObject *SpanReduce(PyObject *self, PyObject *) {
  return Py_BuildValue("(O(O))", reinterpret_cast<PyObject *>(&g_span_type),
                       reinterpret_cast<SpanObject *>(self)->name);
}

PyMethodDef g_span_methods[] = {
    {"__enter__", SpanEnter, METH_NOARGS, "Opens the span on the calling thread."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(SpanExit)),
     METH_FASTCALL, "Closes the calling thread's innermost span; never suppresses an exception."},
    {"__reduce__", SpanReduce, METH_NOARGS, "Pickles as span(name)."},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef g_span_members[] = {
    {"name", T_OBJECT_EX, offsetof(SpanObject, name), READONLY, "The span's name."},
    {nullptr, 0, 0, 0, nullptr}};

PyTypeObject g_span_type = {
    .ob_base = PyVarObject_HEAD_INIT(nullptr, 0)
    .tp_name = "tfprof.span",
    .tp_basicsize = sizeof(SpanObject),
    .tp_dealloc = SpanDealloc,
    .tp_repr = SpanRepr,
    .tp_call = SpanCall,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "span(name) -> a context manager recording a host op span named `name`.\n\n"
              "`with tfprof.span(\"load\"): ...` records a span on the calling thread while a\n"
              "trace runs; with none running it costs almost nothing. The same object is also\n"
              "a decorator: `@tfprof.span(\"load\")`, and bare `@tfprof.span`, which names the\n"
              "span after the function's qualified name. An exception inside the span closes it\n"
              "and propagates unchanged. Span objects hold no state: one may be reused, nested\n"
              "and shared between threads.",
    .tp_methods = g_span_methods,
    .tp_members = g_span_members,
    .tp_new = SpanTypeNew,
    .tp_vectorcall = SpanTypeVectorcall,
};

// ---- the function wrapper made by @tfprof.span ------------------------------------------------

extern PyTypeObject g_span_function_type;
// SpanFunction's twin for callables that are not Python functions: no __get__, so it never binds.
PyTypeObject g_span_callable_type;

struct SpanFunctionObject {
  PyObject_HEAD
  PyObject *func;
  PyObject *name;  // str
  const char *utf8;
  PyObject *dict;      // __name__, __qualname__, __doc__, __wrapped__, ... (functools.wraps)
  PyObject *weakrefs;
  vectorcallfunc vectorcall;
};

PyObject *SpanFunctionVectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames) {
  auto *self = reinterpret_cast<SpanFunctionObject *>(callable);
  if (self->func == nullptr) {  // only after the garbage collector cleared a reference cycle
    PyErr_SetString(PyExc_RuntimeError, "tfprof.span: the wrapped function was garbage-collected");
    return nullptr;
  }
  const int session = ActiveNamedSession();
  if (session == 0) return PyObject_Vectorcall(self->func, args, nargsf, kwnames);
  if (session < 0) return nullptr;
  (prof_span_begin)(self->utf8);
  PyObject *result = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
  (prof_span_end)();  // also when the call raised: the span closes, the exception goes on
  return result;
}

// SpanFunction(name, func) and SpanCallable(name, func) both make whichever of the two fits func.
PyObject *SpanFunctionNew(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"name", "func", nullptr};
  PyObject *name = nullptr;
  PyObject *func = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UO:SpanFunction", const_cast<char **>(keywords),
                                   &name, &func)) {
    return nullptr;
  }
  if (!PyCallable_Check(func)) {
    PyErr_Format(PyExc_TypeError, "SpanFunction: %.100s is not callable", Py_TYPE(func)->tp_name);
    return nullptr;
  }
  const char *utf8 = NameUtf8(name, "tfprof.span");
  if (utf8 == nullptr) return nullptr;
  // Only a Python function binds as a method; a wrapped builtin, partial or callable object
  // must not suddenly receive `self` when stored on a class.
  type = PyFunction_Check(func) ? &g_span_function_type : &g_span_callable_type;
  auto *self = reinterpret_cast<SpanFunctionObject *>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(func);
  Py_INCREF(name);
  self->func = func;
  self->name = name;
  self->utf8 = utf8;
  self->vectorcall = SpanFunctionVectorcall;
  return reinterpret_cast<PyObject *>(self);
}

int SpanFunctionTraverse(PyObject *self_object, visitproc visit, void *arg) {
  auto *self = reinterpret_cast<SpanFunctionObject *>(self_object);
  Py_VISIT(self->func);
  Py_VISIT(self->name);
  Py_VISIT(self->dict);
  return 0;
}

int SpanFunctionClear(PyObject *self_object) {
  auto *self = reinterpret_cast<SpanFunctionObject *>(self_object);
  Py_CLEAR(self->func);
  Py_CLEAR(self->dict);
  return 0;
}

void SpanFunctionDealloc(PyObject *self_object) {
  auto *self = reinterpret_cast<SpanFunctionObject *>(self_object);
  PyObject_GC_UnTrack(self_object);
  if (self->weakrefs != nullptr) PyObject_ClearWeakRefs(self_object);
  SpanFunctionClear(self_object);
  Py_CLEAR(self->name);
  Py_TYPE(self_object)->tp_free(self_object);
}

// Bound like a plain function, so decorated methods receive `self`.
PyObject *SpanFunctionGet(PyObject *self, PyObject *instance, PyObject *) {
  if (instance == nullptr || instance == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, instance);
}

// Pickled by reference, like the function it wraps (multiprocessing needs this).
PyObject *SpanFunctionReduce(PyObject *self, PyObject *) {
  return PyObject_GetAttrString(self, "__qualname__");
}

PyObject *SpanFunctionRepr(PyObject *self_object) {
  auto *self = reinterpret_cast<SpanFunctionObject *>(self_object);
  return PyUnicode_FromFormat("<tfprof.span(%R) around %R>", self->name, self->func);
}

PyMethodDef g_span_function_methods[] = {
    {"__reduce__", SpanFunctionReduce, METH_NOARGS, "Pickles by qualified name."},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef g_span_function_members[] = {
    {"span_name", T_OBJECT_EX, offsetof(SpanFunctionObject, name), READONLY,
     "The name each call's span gets."},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef g_span_function_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_span_function_type = {
    .ob_base = PyVarObject_HEAD_INIT(nullptr, 0)
    .tp_name = "tfprof.SpanFunction",
    .tp_basicsize = sizeof(SpanFunctionObject),
    .tp_dealloc = SpanFunctionDealloc,
    .tp_vectorcall_offset = offsetof(SpanFunctionObject, vectorcall),
    .tp_repr = SpanFunctionRepr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "SpanFunction(name, func): calls func inside tfprof.span(name).\n\n"
              "What @tfprof.span returns; it carries func's __name__, __qualname__, __doc__ and\n"
              "__wrapped__, binds as a method, and pickles by reference.",
    .tp_traverse = SpanFunctionTraverse,
    .tp_clear = SpanFunctionClear,
    .tp_weaklistoffset = offsetof(SpanFunctionObject, weakrefs),
    .tp_methods = g_span_function_methods,
    .tp_members = g_span_function_members,
    .tp_getset = g_span_function_getset,
    .tp_descr_get = SpanFunctionGet,
    .tp_dictoffset = offsetof(SpanFunctionObject, dict),
    .tp_new = SpanFunctionNew,
};

// ---- instants, counters, steps, thread names --------------------------------------------------

PyObject *Instant(PyObject *, PyObject *name) {
  const char *utf8 = NameUtf8(name, "tfprof.instant");
  if (utf8 == nullptr) return nullptr;
  const int session = ActiveNamedSession();
  if (session < 0) return nullptr;
  if (session != 0) (prof_instant)(utf8);
  Py_RETURN_NONE;
}

PyObject *Counter(PyObject *, PyObject *const *args, Py_ssize_t count) {
  if (count != 2) {
    PyErr_Format(PyExc_TypeError, "tfprof.counter() takes 2 arguments (name, value), %zd given",
                 count);
    return nullptr;
  }
  const char *utf8 = NameUtf8(args[0], "tfprof.counter");
  if (utf8 == nullptr) return nullptr;
  const double value = PyFloat_AsDouble(args[1]);
  if (value == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return nullptr;  // e.g. OverflowError: keep it
    PyErr_Format(PyExc_TypeError, "tfprof.counter(%R, ...): the value must be a number, not %.100s",
                 args[0], Py_TYPE(args[1])->tp_name);
    return nullptr;
  }
  const int session = ActiveNamedSession();
  if (session < 0) return nullptr;
  if (session != 0) (prof_counter)(utf8, value);
  Py_RETURN_NONE;
}

PyObject *BeginStep(PyObject *, PyObject *number) {
  if (!PyLong_Check(number)) {
    PyErr_Format(PyExc_TypeError, "tfprof.step: the step number must be an int, not %.100s",
                 Py_TYPE(number)->tp_name);
    return nullptr;
  }
  const long long step = PyLong_AsLongLong(number);
  if (step == -1 && PyErr_Occurred()) return nullptr;
  const int session = ActiveNamedSession();
  if (session < 0) return nullptr;
  if (session != 0) (prof_begin_step)(step);
  Py_RETURN_NONE;
}

PyObject *EndStep(PyObject *, PyObject *) {
  if (ActiveSession() != 0) (prof_end_step)();
  Py_RETURN_NONE;
}

PyObject *CancelStep(PyObject *, PyObject *) {
  if (ActiveSession() != 0) (prof_cancel_step)();
  Py_RETURN_NONE;
}

PyObject *SetThreadName(PyObject *, PyObject *name) {
  if (name == Py_None) {
    prof_set_thread_name(nullptr);
  } else {
    const char *utf8 = NameUtf8(name, "tfprof.set_thread_name");
    if (utf8 == nullptr) return nullptr;
    prof_set_thread_name(utf8);
  }
  // An explicit name outlives sessions in the runtime; stop replacing it with the threading name
  // (None hands the row back to the threading name from the next session on).
  t_named_explicitly = name != Py_None;
  t_named_session = t_named_explicitly ? ActiveSession() : 0;
  Py_RETURN_NONE;
}

// Replaces *slot with `value` (a callable), keeping a reference.
PyObject *SetCallable(PyObject **slot, PyObject *value, const char *what) {
  if (!PyCallable_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a callable", what);
    return nullptr;
  }
  Py_INCREF(value);
  Py_XSETREF(*slot, value);
  Py_RETURN_NONE;
}

PyObject *SetDecorator(PyObject *, PyObject *value) {
  return SetCallable(&g_decorator, value, "_set_decorator");
}

PyObject *SetThreadNameSource(PyObject *, PyObject *value) {
  return SetCallable(&g_thread_name_source, value, "_set_thread_name_source");
}

PyMethodDef g_functions[] = {
    {"instant", Instant, METH_O, "instant(name) -> None: records a point event on this thread."},
    {"counter", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Counter)),
     METH_FASTCALL, "counter(name, value) -> None: records the value of a process-wide counter."},
    {"begin_step", BeginStep, METH_O,
     "begin_step(number) -> None: marks the start of training step `number` (prof_begin_step)."},
    {"end_step", EndStep, METH_NOARGS, "end_step() -> None: ends this thread's open step."},
    {"cancel_step", CancelStep, METH_NOARGS,
     "cancel_step() -> None: withdraws this thread's open step (not counted; its events stay)."},
    {"set_thread_name", SetThreadName, METH_O,
     "set_thread_name(name) -> None: names this thread's row, in this and later sessions (like "
     "prof_set_thread_name); None hands it back to its threading name."},
    {"_set_decorator", SetDecorator, METH_O, "Internal: installs the decorator factory."},
    {"_set_thread_name_source", SetThreadNameSource, METH_O,
     "Internal: installs the function giving the calling thread's name."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

int AddHotPathToModule(PyObject *module) {
  g_span_callable_type = g_span_function_type;
  g_span_callable_type.tp_name = "tfprof.SpanCallable";
  g_span_callable_type.tp_flags &= ~Py_TPFLAGS_METHOD_DESCRIPTOR;
  g_span_callable_type.tp_descr_get = nullptr;
  if (PyType_Ready(&g_span_type) < 0 || PyType_Ready(&g_span_function_type) < 0 ||
      PyType_Ready(&g_span_callable_type) < 0) {
    return -1;
  }
  if (PyModule_AddFunctions(module, g_functions) < 0) return -1;
  Py_INCREF(&g_span_type);
  if (PyModule_AddObject(module, "span", reinterpret_cast<PyObject *>(&g_span_type)) < 0) {
    Py_DECREF(&g_span_type);
    return -1;
  }
  for (PyTypeObject *type : {&g_span_function_type, &g_span_callable_type}) {
    Py_INCREF(type);
    const char *name = type == &g_span_function_type ? "SpanFunction" : "SpanCallable";
    if (PyModule_AddObject(module, name, reinterpret_cast<PyObject *>(type)) < 0) {
      Py_DECREF(type);
      return -1;
    }
  }
  return 0;
}

}  // namespace tfprof_python
