// Input quoted in an error message, cut to a readable length: a hostile or damaged file may hold
// a 100,000-digit number or a megabyte name, and the message must still fit a terminal line.
#pragma once

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

// `text` itself when it has at most `most` bytes, else its first `most` bytes, "..." and how
// long it was ("123456...(100000 bytes)"). Never cuts a UTF-8 sequence in two.
inline std::string TextExcerpt(std::string_view text, size_t most = 48) {
  if (text.size() <= most) return std::string(text);
  size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(ToAbsl(text.substr(0, cut)), "...(", text.size(), " bytes)");
}

}  // namespace tfprof
