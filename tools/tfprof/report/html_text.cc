#include "tools/tfprof/report/html_text.h"

#include <time.h>

#include <cmath>
#include <ctime>
#include <cstdio>

#include "runtime/common/utf8.h"

namespace tfprof::cli {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Printf(const char *format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Three significant digits of `value` (>= 1), then the unit.
std::string ThreeDigits(double value, const char *unit) {
  const char *format = value >= 99.95 ? "%.0f %s" : value >= 9.995 ? "%.1f %s" : "%.2f %s";
  char text[64];
  std::snprintf(text, sizeof text, format, value, unit);
  return text;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t':
        case '\n': out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7F) {
            out += kReplacement;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const size_t length = ValidUtf8Length(text.substr(i));
    if (length == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string FormatDuration(double ns) {
  if (!std::isfinite(ns)) return "?";
  if (ns < 0) return std::string("-").append(FormatDuration(-ns));
  if (ns < 999.5) return Printf("%.0f ns", ns);
  if (ns < 999.5e3) return ThreeDigits(ns / 1e3, "\xC2\xB5s");  // µs
  if (ns < 999.5e6) return ThreeDigits(ns / 1e6, "ms");
  if (ns < 59.95e9) return ThreeDigits(ns / 1e9, "s");
  const auto seconds = static_cast<int64_t>(std::llround(ns / 1e9));
  char text[64];
  if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%lld min %lld s", static_cast<long long>(seconds / 60),
                  static_cast<long long>(seconds % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld h %lld min", static_cast<long long>(seconds / 3600),
                  static_cast<long long>(seconds / 60 % 60));
  }
  return text;
}

std::string FormatOffset(double ns) {
  if (!std::isfinite(ns)) return "?";
  return Printf(ns < 0 ? "%.3f s" : "+%.3f s", ns / 1e9);
}

std::string FormatPercent(double fraction) {
  if (!std::isfinite(fraction)) return "?";
  const double percent = fraction * 100;
  if (percent <= 0) return "0%";
  if (percent < 0.05) return "<0.1%";
  if (percent >= 99.95 && percent <= 100) return "100%";
  return Printf("%.1f%%", percent);
}

std::string FormatCount(uint64_t count) {
  const std::string digits = std::to_string(count);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1023.95 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return ThreeDigits(value, units[unit]);
}

std::string SvgNumber(double value) {
  if (!std::isfinite(value)) return "0";
  const double rounded = std::round(value * 100) / 100;
  if (rounded == 0) return "0";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", rounded);
  std::string out = text;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out;
}

std::string FormatUtc(int64_t unix_ns) {
  const time_t seconds = static_cast<time_t>(unix_ns / 1'000'000'000);
  tm parts{};
  if (gmtime_r(&seconds, &parts) == nullptr) return "?";
  char text[64];
  if (std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &parts) == 0) return "?";
  return text;
}

}  // namespace tfprof::cli
