// One step drawn as a timeline for the report: a row per host thread and per GPU stream with
// activity in the step, nested host spans stacked by depth (host ops, API calls and module
// spans; Python's other frames are left out), kernels, copies and memsets on their
// streams, each kernel's tooltip naming the host op that launched it. Drawn from the Trace, not
// the summary: `tfprof report` hands both to the page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof::cli {

struct StepTimelineOptions {
  double width = 1100;      // the SVG's width in px; the plot is this less the labels' column
  double label_width = 190;
  double lane_height = 14;  // one depth of a host row, or a stream row
  size_t max_depth = 12;    // host spans nested deeper are not drawn (the page says how many)
  size_t max_rows = 48;     // threads and streams beyond this are not drawn (the page says so)
};

// What was drawn, for the page's caption and for tests.
struct StepTimelineFacts {
  size_t host_rows = 0;
  size_t stream_rows = 0;
  uint64_t spans_drawn = 0;     // spans drawn as rectangles of their own
  uint64_t spans_merged = 0;    // spans narrower than a pixel, drawn inside "N spans" blocks
  uint64_t blocks = 0;          // those blocks
  uint64_t too_deep = 0;        // host spans below max_depth, not drawn
  size_t rows_not_drawn = 0;    // threads and streams past max_rows
  uint64_t gpu_work = 0;        // kernels, copies and memsets drawn (alone or in blocks)
};

// The SVG of [begin_ns, end_ns) of recording `group` (Process::group: one rank of a merge), or ""
// when nothing of it ran then. Rows: host threads in track order, then GPU streams by device
// and stream. Each drawn span has a <title>; GPU work's gives its launching op and launch delay.
// Every rectangle or block is at least a pixel wide, and spans narrower than one merge with
// their neighbours, so a row holds at most about one rectangle per pixel however many events
// the step has: the SVG is bounded by rows x depth x plot width.
std::string RenderStepTimeline(const Trace &trace, int64_t begin_ns, int64_t end_ns,
                               uint32_t group, const StepTimelineOptions &options,
                               StepTimelineFacts *facts);

}  // namespace tfprof::cli
