#include "tools/tfprof/analysis/diff_text.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tfprof::cli {
namespace {

std::string Cut(const std::string &name, size_t width) {
  if (name.size() <= width) return name;
  return name.substr(0, width - 3) + "...";
}

// A figure in its unit: ms with three decimals, a count, bytes in kB/MB/GB; "-" when absent.
std::string Value(DiffUnit unit, const std::optional<double> &value) {
  if (!value) return "-";
  switch (unit) {
    case DiffUnit::kTime: return absl::StrFormat("%.3f", *value / 1e6);
    case DiffUnit::kCount: return absl::StrFormat("%.0f", *value);
    case DiffUnit::kBytes: {
      const double b = *value;
      if (std::abs(b) >= 1e9) return absl::StrFormat("%.2f GB", b / 1e9);
      if (std::abs(b) >= 1e6) return absl::StrFormat("%.2f MB", b / 1e6);
      if (std::abs(b) >= 1e3) return absl::StrFormat("%.2f kB", b / 1e3);
      return absl::StrFormat("%.0f B", b);
    }
  }
  return "-";
}

std::string Change(const DiffRow &row) {
  const std::string value = Value(row.unit, row.change);
  return row.change > 0 ? "+" + value : value;
}

// "+100.0%", "new", "gone"; "-" when A's figure is 0 and B's is not.
std::string Relative(const DiffRow &row) {
  if (row.status == "new" || row.status == "gone") return row.status;
  if (row.change == 0) return "0.0%";
  return row.relative ? absl::StrFormat("%+.1f%%", 100 * *row.relative) : "-";
}

// Rows of cells; the first column is left-aligned, the rest right.
void AppendTable(const std::vector<std::vector<std::string>> &rows, std::string *out) {
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto &row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto &row : rows) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - row[i].size(), ' ');
      line += i == 0 ? " " + row[i] + pad : "  " + pad + row[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(out, line, "\n");
  }
}

const char *FirstColumn(const DiffSection &section) {
  if (section.key == "categories") return "category";
  if (section.key == "kernels") return "kernel";
  if (section.key == "memory_peak") return "memory";
  if (section.key == "layer_gpu") return "layer";
  if (section.has_calls) return "op";
  return "figure";
}

void Section(const TraceDiff &diff, const DiffSection &section, const DiffTextOptions &options,
             std::string *out) {
  const bool ranked = section.has_calls;  // op and kernel lists: cut at --top
  std::string title = section.title;
  if (section.per_step) title += diff.whole_trace ? " (ms over the trace" : " (ms per step";
  if (section.per_step && ranked) title += ", most changed first";
  if (section.per_step) title += ")";
  absl::StrAppend(out, "\n", title, "\n");
  if (section.rows.empty()) {
    absl::StrAppend(out, "  none in either trace\n");
    return;
  }
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = {FirstColumn(section)};
  if (section.has_calls) header.insert(header.end(), {"A calls", "B calls"});
  if (ranked) {
    header.insert(header.end(), {"A ms", "B ms", "change ms", "change %"});
  } else {
    header.insert(header.end(), {"A", "B", "change", "change %"});
  }
  table.push_back(std::move(header));
  const size_t shown = ranked ? std::min(options.rows, section.rows.size()) : section.rows.size();
  for (size_t index = 0; index < shown; ++index) {
    const DiffRow &row = section.rows[index];
    std::vector<std::string> cells = {Cut(row.name, options.name_width)};
    if (section.has_calls) {
      cells.push_back(row.a_calls ? absl::StrCat(*row.a_calls) : "-");
      cells.push_back(row.b_calls ? absl::StrCat(*row.b_calls) : "-");
    }
    // Ranked tables say "ms" in their header; the others mix units, so their cells say it.
    const std::string unit = row.unit == DiffUnit::kTime && !ranked ? " ms" : "";
    cells.insert(cells.end(), {Value(row.unit, row.a) + unit, Value(row.unit, row.b) + unit,
                               Change(row) + unit, Relative(row)});
    table.push_back(std::move(cells));
  }
  AppendTable(table, out);
  if (section.rows.size() > shown) {
    const size_t changed = static_cast<size_t>(std::count_if(
        section.rows.begin() + static_cast<std::ptrdiff_t>(shown), section.rows.end(),
        [](const DiffRow &row) { return row.change != 0; }));
    absl::StrAppend(out, "  (", section.rows.size() - shown, " more, ", changed,
                    " of them changed; --top N shows more, --json lists all)\n");
  }
}

std::string SideLine(const char *label, const DiffSide &side) {
  return absl::StrCat("  ", label, ": ", side.path, " (", side.format, ", ", side.steps,
                      side.steps == 1 ? " step)\n" : " steps)\n");
}

}  // namespace

std::string DiffToText(const TraceDiff &diff, const DiffTextOptions &options) {
  std::string out = absl::StrCat(diff.headline, "\n", SideLine("A", diff.a), SideLine("B", diff.b));
  if (diff.whole_trace) {
    const char *who = diff.a.steps == 0 && diff.b.steps == 0 ? "Neither trace has steps"
                      : diff.a.steps == 0                       ? "A has no steps"
                                                                : "B has no steps";
    absl::StrAppend(&out, "  ", who, ": the figures are over each whole trace, not per step.\n");
  }
  for (const DiffSection &section : diff.sections) Section(diff, section, options, &out);
  return out;
}

}  // namespace tfprof::cli
