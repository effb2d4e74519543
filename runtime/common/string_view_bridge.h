// Debian's Abseil is built with its own absl::string_view (not an alias of std::string_view).
// These helpers cross between the two without copying.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace tfprof {

inline absl::string_view ToAbsl(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

inline std::string_view ToStd(absl::string_view text) {
  return std::string_view(text.data(), text.size());
}

}  // namespace tfprof
