// Turns one track's raw begin/end records into closed items: spans with both ends, steps,
// instants and counters, with timestamps converted to nanoseconds. Exporters build on this.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/clock.h"
#include "runtime/event.h"
#include "runtime/trace_model.h"

namespace tfprof {

// Visitor interface; override what you need. Spans arrive when they close (innermost first);
// `depth` is 0 for a top-level span. Items still open at `end_ns` arrive last with
// `incomplete` set and end at `end_ns`.
struct TrackVisitor {
  void OnSpan(uint32_t /*name*/, int64_t /*begin_ns*/, int64_t /*end_ns*/, uint32_t /*depth*/,
              bool /*incomplete*/) {}
  void OnInstant(uint32_t /*name*/, int64_t /*ns*/) {}
  void OnCounter(uint32_t /*name*/, int64_t /*ns*/, double /*value*/) {}
  void OnStep(int64_t /*step*/, int64_t /*begin_ns*/, int64_t /*end_ns*/, bool /*incomplete*/) {}
};

template <typename Visitor>
void WalkTrack(const Track &track, const TickConverter &converter, int64_t end_ns,
               Visitor &visitor) {
  struct OpenSpan {
    uint32_t name;
    int64_t begin_ns;
  };
  std::vector<OpenSpan> open_spans;
  bool step_open = false;
  int64_t step = 0;
  int64_t step_begin_ns = 0;
  track.events.ForEach([&](const Event &event) {
    const int64_t ns = converter.ToNs(event.ticks);
    switch (BaseKind(event.kind)) {
      case EventKind::kSpanBegin:
        open_spans.push_back(OpenSpan{event.name, ns});
        break;
      case EventKind::kSpanEnd:
        // The recorder never writes an end without its begin, so the stack is never empty here.
        if (!open_spans.empty()) {
          const OpenSpan span = open_spans.back();
          open_spans.pop_back();
          visitor.OnSpan(span.name, span.begin_ns, std::max(ns, span.begin_ns),
                         static_cast<uint32_t>(open_spans.size()), false);
        }
        break;
      case EventKind::kInstant:
        visitor.OnInstant(event.name, ns);
        break;
      case EventKind::kCounter:
        visitor.OnCounter(event.name, ns, BitsToDouble(event.arg));
        break;
      case EventKind::kStepBegin:
        // A begin while a step is open ends that step (prof_begin_step's documented rule).
        if (step_open) visitor.OnStep(step, step_begin_ns, std::max(ns, step_begin_ns), false);
        step_open = true;
        step = static_cast<int64_t>(event.arg);
        step_begin_ns = ns;
        break;
      case EventKind::kStepEnd:
        if (step_open) visitor.OnStep(step, step_begin_ns, std::max(ns, step_begin_ns), false);
        step_open = false;
        break;
      default:
        break;
    }
  });
  while (!open_spans.empty()) {
    const OpenSpan span = open_spans.back();
    open_spans.pop_back();
    visitor.OnSpan(span.name, span.begin_ns, std::max(end_ns, span.begin_ns),
                   static_cast<uint32_t>(open_spans.size()), true);
  }
  if (step_open) visitor.OnStep(step, step_begin_ns, std::max(end_ns, step_begin_ns), true);
}

}  // namespace tfprof
