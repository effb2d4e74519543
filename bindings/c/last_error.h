// The per-thread text behind prof_last_error(), shared by the C ABI's implementation files.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace tfprof_c {

// Remembers "function: message" for the calling thread (cleared if memory runs out).
void SetLastError(std::string_view function, const absl::Status &status);
// The same from a plain message, allocating nothing (for out-of-memory paths).
void SetLastErrorText(std::string_view function, std::string_view message) noexcept;
void ClearLastError();
// The calling thread's text; "" when its last control call succeeded.
const char *LastError();

}  // namespace tfprof_c
