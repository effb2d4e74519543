// Text for the HTML report: escaping and the human-readable numbers its tables and charts show.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tfprof::cli {

// Escapes &, <, >, " and ' so that `text` is safe in element content and in quoted attribute
// values. Bytes that are not valid UTF-8 become U+FFFD, so that a damaged name cannot make the
// page invalid; control characters other than tab and newline become U+FFFD too.
std::string HtmlEscape(std::string_view text);

// "0 ns", "850 ns", "12.3 µs", "4.56 ms", "1.23 s", "2 min 5 s": three significant digits.
std::string FormatDuration(double ns);

// "+1.234 s": a time on the trace's clock as an offset from its beginning.
std::string FormatOffset(double ns);

// "40.1%" for 0.401; "0%" and "100%" without decimals; "<0.1%" for tiny non-zero shares.
std::string FormatPercent(double fraction);

// "1,234,567".
std::string FormatCount(uint64_t count);

// "512 B", "1.5 KiB", "12.3 MiB", "4.00 GiB".
std::string FormatBytes(uint64_t bytes);

// A number for SVG coordinates: at most two decimals, no trailing zeros, never "-0".
std::string SvgNumber(double value);

// "2024-05-01 12:34:56 UTC" for nanoseconds since the Unix epoch.
std::string FormatUtc(int64_t unix_ns);

}  // namespace tfprof::cli
