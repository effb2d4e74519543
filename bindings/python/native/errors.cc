#include "errors.h"

#include <pybind11/pybind11.h>

#include "tfprof/tfprof.h"

namespace py = pybind11;

namespace tfprof_python {

namespace {

PyObject *ExceptionTypeFor(int code) {
  switch (code) {
    case PROF_EOPTION:
    case PROF_EINVAL:
    case PROF_EFORMAT:
    case PROF_EDATA: return PyExc_ValueError;
    case PROF_EIO: return PyExc_OSError;
    case PROF_ENOMEM: return PyExc_MemoryError;
    default: return PyExc_RuntimeError;
  }
}

}  // namespace

void ThrowForCode(int code, const std::string &path) {
  std::string message = prof_last_error();
  if (message.empty()) message = prof_strerror(code);
  if (code == PROF_EINTERNAL) message += " (a bug in tfprof; please report it with this message)";
  PyObject *type = ExceptionTypeFor(code);
  // Python callers never called prof_start & co. by name: drop the C function's "prof_x: " prefix.
  if (message.rfind("prof_", 0) == 0) {
    const size_t colon = message.find(": ");
    if (colon != std::string::npos) message.erase(0, colon + 2);
  }
  if (code == PROF_EIO && !path.empty() && message.find(path) == std::string::npos) {
    message = "cannot write '" + path + "': " + message;
  }
  // Paths in the message are the file system's bytes, not necessarily UTF-8.
  PyObject *text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()),
                                        "backslashreplace");
  if (text != nullptr) {
    PyErr_SetObject(type, text);
    Py_DECREF(text);
  }
  throw py::error_already_set();
}

}  // namespace tfprof_python
