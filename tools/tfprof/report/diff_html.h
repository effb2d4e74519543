// `tfprof diff --html`'s page: a TraceDiff as one self-contained HTML file, styled like
// `tfprof report`'s page (its CSS and table-sorting script, inline; nothing loaded from anywhere).
//
// Stable hooks for tests and scripts: <h3 id="headline">; <dl id="sides"> with <div data-side="a">
// and <div data-side="b">; <section id="diff-KEY"> per comparison (KEY as TraceDiff's section
// keys: step_time, categories, op_self, op_total, kernels, ...) holding <table id="diff-KEY-table">
// whose <tr> carry data-name and data-status ("same", "changed", "new", "gone") and whose number
// cells carry data-v (the figure in ns, bytes or calls; per step where the section is); <p
// id="whole-trace"> when a side has no steps.
#pragma once

#include <cstddef>
#include <string>

#include "tools/tfprof/analysis/trace_diff.h"

namespace tfprof::cli {

struct DiffHtmlOptions {
  size_t rows = 10;  // rows per op and kernel table (--top)
  std::string generator = "tfprof";  // the footer's "Made by"
};

std::string RenderDiffHtml(const TraceDiff &diff, const DiffHtmlOptions &options);

}  // namespace tfprof::cli
