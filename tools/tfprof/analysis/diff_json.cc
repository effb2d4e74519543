#include "tools/tfprof/analysis/diff_json.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "runtime/common/json_text.h"

namespace tfprof::cli {
namespace {

// An integral value as an integer ("10000000"), else at most three decimals ("3333333.333").
std::string Number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[64];
  if (value == std::trunc(value) && std::abs(value) < 9.007199254740992e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
    return text;
  }
  std::snprintf(text, sizeof text, "%.3f", value);
  std::string out = text;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out == "-0" ? "0" : out;
}

std::string Optional(const std::optional<double> &value) {
  return value ? Number(*value) : "null";
}

std::string Fraction(const std::optional<double> &value) {
  if (!value || !std::isfinite(*value)) return "null";
  char text[48];
  std::snprintf(text, sizeof text, "%.6g", *value);
  return text;
}

std::string Calls(const std::optional<uint64_t> &calls) {
  return calls ? absl::StrCat(*calls) : "null";
}

void AppendSide(const DiffSide &side, std::string *out) {
  absl::StrAppend(out, "{\"path\":", QuotedJson(side.path), ",\"format\":",
                  QuotedJson(side.format), ",\"steps\":", side.steps,
                  ",\"divisor\":", Number(side.divisor), "}");
}

void AppendRow(const DiffSection &section, const DiffRow &row, std::string *out) {
  absl::StrAppend(out, "{\"name\":", QuotedJson(row.name), ",\"unit\":\"",
                  DiffUnitName(row.unit), "\",\"a\":", Optional(row.a), ",\"b\":",
                  Optional(row.b), ",\"change\":", Number(row.change),
                  ",\"relative\":", Fraction(row.relative), ",\"status\":\"", row.status, "\"");
  if (section.has_calls) {
    absl::StrAppend(out, ",\"a_calls\":", Calls(row.a_calls), ",\"b_calls\":",
                    Calls(row.b_calls));
  }
  *out += '}';
}

}  // namespace

std::string DiffToJson(const TraceDiff &diff) {
  std::string out = "{\"tfprof_diff_version\":1,\"a\":";
  AppendSide(diff.a, &out);
  out += ",\"b\":";
  AppendSide(diff.b, &out);
  absl::StrAppend(&out, ",\"whole_trace\":", diff.whole_trace ? "true" : "false",
                  ",\"headline\":", QuotedJson(diff.headline), ",\"sections\":[");
  for (size_t index = 0; index < diff.sections.size(); ++index) {
    const DiffSection &section = diff.sections[index];
    if (index > 0) out += ',';
    absl::StrAppend(&out, "{\"key\":", QuotedJson(section.key), ",\"title\":",
                    QuotedJson(section.title), ",\"per_step\":",
                    section.per_step ? "true" : "false", ",\"rows\":[");
    for (size_t row = 0; row < section.rows.size(); ++row) {
      if (row > 0) out += ',';
      AppendRow(section, section.rows[row], &out);
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

}  // namespace tfprof::cli
