// Turns one track's raw begin/end records into closed items: spans with both ends, steps,
// instants and counters, with timestamps converted to nanoseconds. Exporters build on this.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/collector/clock.h"
#include "runtime/collector/event.h"
#include "runtime/session/session_log.h"
#include "runtime/session/step_marks.h"

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
  // Ranges (prof_range_start/end) may end on another track: the visitor pairs them by id.
  void OnRangeStart(uint32_t /*name*/, uint64_t /*range_id*/, int64_t /*ns*/) {}
  void OnRangeEnd(uint64_t /*range_id*/, int64_t /*ns*/) {}
};

// The walk's state, for readers that feed a track's events as they arrive rather than all at once.
class TrackWalkState {
 public:
  template <typename Visitor>
  void Feed(const Event &event, int64_t ns, Visitor &visitor) {
    switch (BaseKind(event.kind)) {
      case EventKind::kSpanBegin:
        open_spans_.push_back(OpenSpan{event.name, ns});
        break;
      case EventKind::kSpanEnd:
        // The recorder never writes an end without its begin, so the stack is never empty here.
        if (!open_spans_.empty()) {
          // Popped after the visitor took it: a visitor that runs out of memory leaves the span
          // open, not lost.
          const OpenSpan span = open_spans_.back();
          visitor.OnSpan(span.name, span.begin_ns, std::max(ns, span.begin_ns),
                         static_cast<uint32_t>(open_spans_.size() - 1), false);
          open_spans_.pop_back();
        }
        break;
      case EventKind::kInstant:
        visitor.OnInstant(event.name, ns);
        break;
      case EventKind::kCounter:
        visitor.OnCounter(event.name, ns, BitsToDouble(event.arg));
        break;
      case EventKind::kRangeStart:
        visitor.OnRangeStart(event.name, event.arg, ns);
        break;
      case EventKind::kRangeEnd:
        visitor.OnRangeEnd(event.arg, ns);
        break;
      case EventKind::kStepBegin: {
        StepMarks<int64_t>::Step ended;
        if (steps_.Begin(static_cast<int64_t>(event.arg), ns, &ended)) {
          visitor.OnStep(ended.number, ended.begin, ended.end, false);
        }
        break;
      }
      case EventKind::kStepEnd: {
        StepMarks<int64_t>::Step ended;
        if (IsCancelledStepEnd(event)) {
          steps_.Cancel(&ended);
        } else if (steps_.End(ns, &ended)) {
          visitor.OnStep(ended.number, ended.begin, ended.end, false);
        }
        break;
      }
      default:
        break;
    }
  }

  // Closes what is still open as incomplete items ending at `end_ns`.
  template <typename Visitor>
  void Finish(int64_t end_ns, Visitor &visitor) {
    while (!open_spans_.empty()) {
      const OpenSpan span = open_spans_.back();
      open_spans_.pop_back();
      visitor.OnSpan(span.name, span.begin_ns, std::max(end_ns, span.begin_ns),
                     static_cast<uint32_t>(open_spans_.size()), true);
    }
    StepMarks<int64_t>::Step ended;
    if (steps_.End(end_ns, &ended)) visitor.OnStep(ended.number, ended.begin, ended.end, true);
  }

  // The begin of the step open now, if any.
  bool open_step_begin(int64_t *begin_ns) const {
    if (steps_.open()) *begin_ns = steps_.begin();
    return steps_.open();
  }
  // The earliest begin among the spans open now, if any.
  bool oldest_open_span_begin(int64_t *begin_ns) const {
    if (!open_spans_.empty()) *begin_ns = open_spans_.front().begin_ns;
    return !open_spans_.empty();
  }

 private:
  struct OpenSpan {
    uint32_t name;
    int64_t begin_ns;
  };
  std::vector<OpenSpan> open_spans_;
  StepMarks<int64_t> steps_;
};

template <typename Visitor>
void WalkTrack(const ThreadLog &track, const TickConverter &converter, int64_t end_ns,
               Visitor &visitor) {
  TrackWalkState state;
  track.events.ForEach(
      [&](const Event &event) { state.Feed(event, converter.ToNs(event.ticks), visitor); });
  state.Finish(end_ns, visitor);
}

}  // namespace tfprof
