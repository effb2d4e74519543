#include "tools/tfprof/report/step_timeline_svg.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "tools/tfprof/analysis/op_classes.h"
#include "tools/tfprof/analysis/op_gpu_time.h"
#include "tools/tfprof/report/html_text.h"
#include "tools/tfprof/report/svg_charts.h"

namespace tfprof::cli {
namespace {

// Host ops and API calls, and of the Python frames (with_stack) only the module spans: a step's
// dozens of nested frames would push its ops out of sight (the GPU time by op skips them too).
bool OnHostRow(const Trace &trace, const Activity &activity) {
  switch (activity.kind) {
    case ActivityKind::kHostOp:
    case ActivityKind::kRuntimeApi:
      return true;
    case ActivityKind::kPythonFunction:
      return IsLayerSpanName(trace.names.Get(activity.name));
    default:
      return false;
  }
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// One lane: the spans of one depth of a host row, or of a stream, in begin order.
struct Lane {
  std::vector<uint32_t> spans;
};

struct Row {
  uint32_t track = 0;
  std::string label;
  std::vector<Lane> lanes;
};

class TimelineWriter {
 public:
  TimelineWriter(const Trace &trace, int64_t begin_ns, int64_t end_ns,
                 const StepTimelineOptions &options, StepTimelineFacts *facts)
      : trace_(trace), begin_ns_(begin_ns), end_ns_(end_ns), options_(options), facts_(*facts) {}

  // The step's host spans by depth, and each launch call's innermost host op.
  Row HostRow(uint32_t track, std::vector<uint32_t> &spans) {
    SortEnclosingFirst(trace_.activities, spans);
    Row row{track, RowLabel(track), {}};
    std::vector<uint32_t> open;  // the enclosing spans of the current one
    for (uint32_t index : spans) {
      const Activity &span = trace_.activities[index];
      while (!open.empty() && trace_.activities[open.back()].end_ns <= span.begin_ns) {
        open.pop_back();
      }
      if (span.kind == ActivityKind::kRuntimeApi && trace_.gpu_details.Has(span.detail)) {
        const GpuDetail detail = trace_.gpu_details.Get(span.detail);
        if ((detail.fields & kGpuHasCorrelation) && detail.correlation != 0 && !open.empty()) {
          launcher_.emplace(detail.correlation, trace_.activities[open.back()].name);
        }
      }
      const size_t depth = open.size();
      open.push_back(index);
      if (depth >= options_.max_depth) {
        ++facts_.too_deep;
        continue;
      }
      if (row.lanes.size() <= depth) row.lanes.resize(depth + 1);
      row.lanes[depth].spans.push_back(index);
    }
    return row;
  }

  Row StreamRow(uint32_t track, std::vector<uint32_t> &work) {
    std::sort(work.begin(), work.end(), [&](uint32_t a, uint32_t b) {
      return trace_.activities[a].begin_ns < trace_.activities[b].begin_ns;
    });
    Row row{track, RowLabel(track), {Lane{work}}};
    facts_.gpu_work += work.size();
    return row;
  }

  std::string Render(const std::vector<Row> &rows) {
    const double plot = options_.width - options_.label_width - 10;
    const double axis = 22;
    double height = axis;
    for (const Row &row : rows) {
      height += static_cast<double>(row.lanes.size()) * options_.lane_height + 6;
    }
    std::string svg = "<svg class=\"step-timeline\" width=\"" +
                      Number(options_.width) + "\" height=\"" + Number(height) +
                      "\" viewBox=\"0 0 " + Number(options_.width) + " " + Number(height) +
                      "\" role=\"img\">";
    // The time axis: ticks from the step's start.
    const double span_ns = static_cast<double>(std::max<int64_t>(end_ns_ - begin_ns_, 1));
    const TimeUnit unit = AxisTimeUnit(span_ns);
    for (double tick : NiceTicks(span_ns, 8)) {
      if (tick > span_ns) break;
      const double x = options_.label_width + tick / span_ns * plot;
      svg += "<line class=\"tl-tick\" x1=\"" + Number(x) + "\" x2=\"" + Number(x) +
             "\" y1=\"" + Number(axis - 4) + "\" y2=\"" + Number(height) + "\"/>";
      svg += "<text class=\"tl-axis\" x=\"" + Number(x) + "\" y=\"12\" text-anchor=\"middle\">" +
             HtmlEscape(AxisTimeLabel(tick, unit)) + "</text>";
    }
    double y = axis;
    for (const Row &row : rows) {
      const bool stream = trace_.tracks[row.track].kind == TrackKind::kGpuStream;
      svg += "<g class=\"tl-row " + std::string(stream ? "tl-stream" : "tl-thread") +
             "\" data-track=\"" + std::to_string(row.track) + "\"><text class=\"tl-label\" x=\"" +
             Number(options_.label_width - 6) + "\" y=\"" + Number(y + options_.lane_height - 3) +
             "\" text-anchor=\"end\">" + HtmlEscape(row.label) + "</text>";
      for (const Lane &lane : row.lanes) {
        svg += DrawLane(lane, y, plot);
        y += options_.lane_height;
      }
      svg += "</g>";
      y += 6;
    }
    svg += "</svg>";
    return svg;
  }

 private:
  std::string RowLabel(uint32_t track) const {
    const Track &row = trace_.tracks[track];
    if (row.kind == TrackKind::kGpuStream) {
      return "GPU " + std::to_string(row.device) + " stream " + std::to_string(row.stream);
    }
    return row.name.empty() ? "thread " + std::to_string(row.tid) : row.name;
  }

  // The class and tooltip of one span.
  std::string Classes(const Activity &a) const {
    switch (a.kind) {
      case ActivityKind::kKernel:
        return NamesCollectiveKernel(trace_.names.Get(a.name)) ? "tl-comm" : "tl-kernel";
      case ActivityKind::kMemcpy: return "tl-copy";
      case ActivityKind::kMemset: return "tl-memset";
      case ActivityKind::kRuntimeApi: return "tl-api";
      case ActivityKind::kPythonFunction: return "tl-layer";
      default: return "tl-op";
    }
  }
  std::string Title(const Activity &a) const {
    std::string title = trace_.names.Get(a.name) + ", " +
                        FormatDuration(static_cast<double>(a.end_ns - a.begin_ns)) + " at +" +
                        FormatDuration(static_cast<double>(a.begin_ns - begin_ns_));
    const GpuDetail *work = IsGpuWork(a.kind) ? trace_.gpu_details.Work(a.detail) : nullptr;
    if (work == nullptr) return title;
    const GpuDetail &detail = *work;
    uint32_t op = detail.op;
    if ((detail.fields & kGpuHasCorrelation) && detail.correlation != 0) {
      const auto found = launcher_.find(detail.correlation);
      if (found != launcher_.end()) op = found->second;
    }
    if (op < trace_.names.size()) title += "; launched by " + trace_.names.Get(op);
    if (detail.launch_ns != kNoStep && detail.launch_ns <= a.begin_ns) {
      title += ", " + FormatDuration(static_cast<double>(a.begin_ns - detail.launch_ns)) +
               " after its launch";
    }
    return title;
  }

  std::string Rect(double x, double y, double width, const std::string &classes,
                   const std::string &title, const std::string &extra) const {
    return "<rect class=\"" + classes + "\" x=\"" + Number(x) + "\" y=\"" + Number(y + 1) +
           "\" width=\"" + Number(width) + "\" height=\"" + Number(options_.lane_height - 2) +
           "\"" + extra + "><title>" + HtmlEscape(title) + "</title></rect>";
  }

  // A span wide enough for a few characters shows its name inside (cut to fit), so the timeline
  // reads without hovering; the tooltip has the whole name.
  std::string Label(const Activity &a, double x0, double x1, double y) const {
    constexpr double kCharWidth = 6.2;  // 10px text, about this wide per character
    const double room = x1 - x0 - 4;
    if (room < 6 * kCharWidth || IsGpuWork(a.kind)) return "";
    const std::string &name = trace_.names.Get(a.name);
    const auto fits = static_cast<size_t>(room / kCharWidth);
    size_t cut = std::min(name.size(), fits - 1);
    // Cut at a character's start, not inside a UTF-8 sequence.
    while (cut > 0 && cut < name.size() && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) {
      --cut;
    }
    const std::string shown = name.size() <= fits ? name : name.substr(0, cut) + "\u2026";
    return "<text class=\"tl-name\" x=\"" + Number(x0 + 2) + "\" y=\"" +
           Number(y + options_.lane_height - 4) + "\">" + HtmlEscape(shown) + "</text>";
  }

  // Spans wider than a pixel are drawn alone; narrower ones join the block before them when it
  // ends within a pixel, else start one.
  std::string DrawLane(const Lane &lane, double y, double plot) {
    std::string out;
    const double span_ns = static_cast<double>(std::max<int64_t>(end_ns_ - begin_ns_, 1));
    const auto x_of = [&](int64_t ns) {
      const double clamped = static_cast<double>(std::clamp(ns, begin_ns_, end_ns_) - begin_ns_);
      return options_.label_width + clamped / span_ns * plot;
    };
    struct Block {
      double x0 = 0, x1 = 0;
      uint64_t count = 0;
      uint32_t first = 0;
    } block;
    const auto flush = [&] {
      if (block.count == 0) return;
      if (block.count == 1) {
        const Activity &a = trace_.activities[block.first];
        out += Rect(block.x0, y, block.x1 - block.x0, Classes(a), Title(a), "");
        ++facts_.spans_drawn;
      } else {
        out += Rect(block.x0, y, block.x1 - block.x0, "tl-block",
                    std::to_string(block.count) + " spans, each under a pixel, from " +
                        trace_.names.Get(trace_.activities[block.first].name),
                    " data-count=\"" + std::to_string(block.count) + "\"");
        ++facts_.blocks;
        facts_.spans_merged += block.count;
      }
      block = Block{};
    };
    for (uint32_t index : lane.spans) {
      const Activity &a = trace_.activities[index];
      const double x0 = x_of(a.begin_ns);
      const double x1 = x_of(a.end_ns);
      if (x1 - x0 >= 1) {
        flush();
        out += Rect(x0, y, x1 - x0, Classes(a), Title(a), "");
        out += Label(a, x0, x1, y);
        ++facts_.spans_drawn;
        continue;
      }
      if (block.count > 0 && x0 <= block.x1 + 1) {
        block.x1 = std::max(block.x1, x0 + 1);
        ++block.count;
      } else {
        flush();
        block = Block{x0, x0 + 1, 1, index};
      }
    }
    flush();
    return out;
  }

  const Trace &trace_;
  int64_t begin_ns_, end_ns_;
  const StepTimelineOptions &options_;
  StepTimelineFacts &facts_;
  absl::flat_hash_map<uint32_t, uint32_t> launcher_;  // correlation id -> innermost host op
};

}  // namespace

std::string RenderStepTimeline(const Trace &trace, int64_t begin_ns, int64_t end_ns,
                               uint32_t group, const StepTimelineOptions &options,
                               StepTimelineFacts *facts) {
  StepTimelineFacts local;
  StepTimelineFacts &out = facts != nullptr ? *facts : local;
  out = StepTimelineFacts{};
  // The step's activities by row, in one pass.
  std::vector<std::vector<uint32_t>> by_track(trace.tracks.size());
  for (uint32_t index = 0; index < trace.activities.size(); ++index) {
    const Activity &a = trace.activities[index];
    if (a.end_ns <= begin_ns || a.begin_ns >= end_ns || a.track >= trace.tracks.size()) continue;
    const Track &track = trace.tracks[a.track];
    if (track.process >= trace.processes.size() || trace.processes[track.process].group != group) {
      continue;
    }
    const bool fits = track.kind == TrackKind::kGpuStream ? IsGpuWork(a.kind)
                      : track.kind == TrackKind::kHostThread ? OnHostRow(trace, a)
                                                             : false;
    if (fits) by_track[a.track].push_back(index);
  }
  std::vector<uint32_t> hosts, streams;
  for (uint32_t track = 0; track < by_track.size(); ++track) {
    if (by_track[track].empty()) continue;
    (trace.tracks[track].kind == TrackKind::kGpuStream ? streams : hosts).push_back(track);
  }
  std::sort(streams.begin(), streams.end(), [&](uint32_t a, uint32_t b) {
    const Track &x = trace.tracks[a], &y = trace.tracks[b];
    return std::tie(x.device, x.stream, a) < std::tie(y.device, y.stream, b);
  });
  if (hosts.empty() && streams.empty()) return "";
  TimelineWriter writer(trace, begin_ns, end_ns, options, &out);
  std::vector<Row> rows;
  // Host rows first: their launch calls name the kernels' launchers.
  for (uint32_t track : hosts) {
    if (rows.size() >= options.max_rows) {
      ++out.rows_not_drawn;
      continue;
    }
    rows.push_back(writer.HostRow(track, by_track[track]));
    ++out.host_rows;
  }
  for (uint32_t track : streams) {
    if (rows.size() >= options.max_rows) {
      ++out.rows_not_drawn;
      continue;
    }
    rows.push_back(writer.StreamRow(track, by_track[track]));
    ++out.stream_rows;
  }
  return writer.Render(rows);
}

}  // namespace tfprof::cli
