#include "bindings/c/last_error.h"

#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/string_view_bridge.h"

namespace tfprof_c {

namespace {
thread_local std::string t_last_error;
}  // namespace

void SetLastError(std::string_view function, const absl::Status &status) {
  try {
    t_last_error = absl::StrCat(tfprof::ToAbsl(function), ": ", status.message());
  } catch (const std::bad_alloc &) {
    t_last_error.clear();
  }
}

void ClearLastError() { t_last_error.clear(); }

const char *LastError() { return t_last_error.c_str(); }

}  // namespace tfprof_c
