// Turning the C ABI's PROF_E* codes into Python exceptions.
#pragma once

#include <string>

namespace tfprof_python {

// Throws pybind11::error_already_set carrying the Python exception for `code` (a PROF_E* value
// returned by a control function on this thread), with prof_last_error()'s text as the message
// (which names the path for file errors; OSError gets no errno, the C ABI does not report one):
//   PROF_EOPTION, PROF_EINVAL, PROF_EFORMAT, PROF_EDATA  -> ValueError
//   PROF_EALREADY, PROF_ENOTSTARTED, PROF_ENODATA    -> RuntimeError
//   PROF_EIO                                         -> OSError
//   PROF_ENOMEM                                      -> MemoryError
//   anything else                                    -> RuntimeError
// `path` is the file the call was writing ("" when none).
[[noreturn]] void ThrowForCode(int code, const std::string &path);

// Calls ThrowForCode when `code` is negative.
inline void CheckCode(int code, const std::string &path = std::string()) {
  if (code < 0) ThrowForCode(code, path);
}

}  // namespace tfprof_python
