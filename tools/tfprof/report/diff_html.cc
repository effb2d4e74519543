#include "tools/tfprof/report/diff_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/tfprof/report/html_report_assets.h"  // generated
#include "tools/tfprof/report/html_text.h"

namespace tfprof::cli {
namespace {

std::string Shown(DiffUnit unit, double value) {
  switch (unit) {
    case DiffUnit::kTime: return FormatDuration(value);
    case DiffUnit::kCount: return FormatCount(static_cast<uint64_t>(std::llround(std::abs(value))));
    case DiffUnit::kBytes: return FormatBytes(static_cast<uint64_t>(std::llround(std::abs(value))));
  }
  return "";
}

std::string NumberCell(const std::string &shown, double sort_value, const char *cls = "num") {
  return std::string("<td class=\"") + cls + "\" data-v=\"" + SvgNumber(sort_value) + "\">" +
         HtmlEscape(shown) + "</td>";
}

std::string ValueCell(DiffUnit unit, const std::optional<double> &value) {
  if (!value) return "<td class=\"num\" data-v=\"0\">-</td>";
  return NumberCell(Shown(unit, *value), *value);
}

std::string ChangeCell(const DiffRow &row) {
  const char *cls = row.change > 0 ? "num bad-text" : row.change < 0 ? "num ok-text" : "num";
  const std::string sign = row.change > 0 ? "+" : row.change < 0 ? "-" : "";
  return NumberCell(sign + Shown(row.unit, row.change), row.change, cls);
}

std::string RelativeCell(const DiffRow &row) {
  if (row.status == "new" || row.status == "gone") {
    return "<td class=\"num kind\" data-v=\"" + std::string(row.status == "new" ? "1e9" : "-1e9") +
           "\">" + row.status + "</td>";
  }
  if (row.change == 0) return NumberCell("0%", 0);
  if (!row.relative) return "<td class=\"num\" data-v=\"0\">-</td>";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", *row.relative * 100);
  return NumberCell(text, *row.relative);
}

// The change drawn as a bar against the section's largest: red where the figure grew.
std::string BarCell(const DiffRow &row, double largest) {
  const double fraction = largest > 0 ? std::abs(row.change) / largest : 0;
  return "<td class=\"barcell\" data-v=\"" + SvgNumber(row.change) +
         "\"><span class=\"bar\" style=\"width:" + SvgNumber(std::max(fraction * 100, 0.5)) +
         "%;background:" + (row.change > 0 ? "#cf222e" : row.change < 0 ? "#1a7f37" : "#d1d9e0") +
         "\"></span></td>";
}

void Section(const TraceDiff &diff, const DiffSection &section, const DiffHtmlOptions &options,
             std::string *out) {
  const std::string id = "diff-" + section.key;
  *out += "<section id=\"" + HtmlEscape(id) + "\"><h2>" + HtmlEscape(section.title) + "</h2>";
  if (section.per_step) {
    *out += std::string("<p class=\"note\">") +
            (diff.whole_trace ? "Over each whole trace." : "Per step: whole-trace totals divided "
                                                          "by each trace's step count.") +
            (section.has_calls ? " The most changed first; calls are over the whole trace." : "") +
            "</p>";
  }
  if (section.rows.empty()) {
    *out += "<p class=\"empty\">None in either trace.</p></section>\n";
    return;
  }
  const size_t shown =
      section.has_calls ? std::min(options.rows, section.rows.size()) : section.rows.size();
  double largest = 0;
  for (size_t index = 0; index < shown; ++index) {
    largest = std::max(largest, std::abs(section.rows[index].change));
  }
  *out += "<div class=\"table-wrap\"><table id=\"" + HtmlEscape(id) +
          "-table\" class=\"sortable\"><thead><tr><th>Name</th>";
  if (section.has_calls) *out += "<th class=\"num\">A calls</th><th class=\"num\">B calls</th>";
  *out += "<th class=\"num\">A</th><th class=\"num\">B</th><th class=\"num\">Change</th>"
          "<th class=\"num\">Change %</th><th>Moved</th></tr></thead><tbody>";
  for (size_t index = 0; index < shown; ++index) {
    const DiffRow &row = section.rows[index];
    const std::string name = HtmlEscape(row.name);
    *out += "<tr data-name=\"" + name + "\" data-status=\"" + row.status +
            "\"><td class=\"name\" title=\"" + name + "\">" + name + "</td>";
    if (section.has_calls) {
      for (const std::optional<uint64_t> &calls : {row.a_calls, row.b_calls}) {
        *out += calls ? NumberCell(FormatCount(*calls), static_cast<double>(*calls))
                      : "<td class=\"num\" data-v=\"0\">-</td>";
      }
    }
    *out += ValueCell(row.unit, row.a) + ValueCell(row.unit, row.b) + ChangeCell(row) +
            RelativeCell(row) + BarCell(row, largest) + "</tr>";
  }
  *out += "</tbody></table></div>";
  if (section.rows.size() > shown) {
    const size_t more = section.rows.size() - shown;
    *out += "<p class=\"note\">" + FormatCount(more) + (more == 1 ? " more row" : " more rows") +
            ": <code>--top N</code> shows more, <code>--json</code> lists all.</p>";
  }
  *out += "</section>\n";
}

void Side(const char *key, const DiffSide &side, std::string *out) {
  *out += std::string("<div data-side=\"") + key + "\"><dt>" + (key[0] == 'a' ? "A" : "B") +
          "</dt><dd><span class=\"mono\">" + HtmlEscape(side.path) + "</span> (" +
          HtmlEscape(side.format) + ", " + FormatCount(side.steps) +
          (side.steps == 1 ? " step)" : " steps)") + "</dd></div>";
}

}  // namespace

std::string RenderDiffHtml(const TraceDiff &diff, const DiffHtmlOptions &options) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      // Nothing may be fetched: inline style and script only, as on the report's page.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
      "<meta name=\"generator\" content=\"" +
      HtmlEscape(options.generator) + "\"><link rel=\"icon\" href=\"data:,\"><title>tfprof diff: " +
      HtmlEscape(diff.a.path) + " vs " + HtmlEscape(diff.b.path) + "</title><style>";
  out += kReportStyle;
  out += "</style></head>\n<body><main><section id=\"overview\"><h1>tfprof diff</h1>"
         "<dl class=\"facts\" id=\"sides\">";
  Side("a", diff.a, &out);
  Side("b", diff.b, &out);
  out += "</dl>";
  const double step_change = diff.sections.front().rows.front().change;
  out += std::string("<article class=\"finding") +
         (step_change > 0 ? " bad" : step_change < 0 ? " ok" : "") + "\"><h3 id=\"headline\">" +
         HtmlEscape(diff.headline) + "</h3></article>";
  if (diff.whole_trace) {
    out += "<p class=\"note\" id=\"whole-trace\">A trace has no steps: every figure is over each "
           "whole trace, not per step.</p>";
  }
  out += "<nav>";
  for (const DiffSection &section : diff.sections) {
    out += "<a href=\"#diff-" + HtmlEscape(section.key) + "\">" + HtmlEscape(section.title) +
           "</a>";
  }
  out += "</nav></section>\n";
  for (const DiffSection &section : diff.sections) Section(diff, section, options, &out);
  out += "<footer>Made by " + HtmlEscape(options.generator) +
         ". Change is B minus A; red where B's figure is larger. This page is self-contained: it "
         "loads nothing from anywhere. Click a column&#39;s heading to sort its table.</footer>"
         "</main><script>";
  out += kReportScript;
  out += "</script></body></html>\n";
  return out;
}

}  // namespace tfprof::cli
