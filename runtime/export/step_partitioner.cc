#include "runtime/export/step_partitioner.h"

#include <algorithm>
#include <limits>

namespace tfprof {

namespace {

void SortOuterFirst(std::vector<HostOp> &ops) {
  std::sort(ops.begin(), ops.end(), [](const HostOp &a, const HostOp &b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  });
}

}  // namespace

struct StepPartitioner::Collector : TrackVisitor {
  StepPartitioner *owner;
  size_t track;

  void OnSpan(uint32_t name, int64_t begin_ns, int64_t end_ns, uint32_t, bool incomplete) {
    owner->pending_.push_back(HostOp{track, name, begin_ns, end_ns, incomplete});
  }
  void OnStep(int64_t step, int64_t begin_ns, int64_t end_ns, bool incomplete) {
    owner->steps_.push_back(StepInterval{step, begin_ns, end_ns, track, incomplete});
  }
};

void StepPartitioner::Advance(const TraceModel &model, const TickConverter &converter) {
  if (cursors_.size() < model.tracks.size()) cursors_.resize(model.tracks.size());
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    TrackCursor &cursor = cursors_[track];
    Collector collector;
    collector.owner = this;
    collector.track = track;
    const EventLog &events = model.tracks[track].events;
    events.ForEachFrom(cursor.next_event, [&](const Event &event) {
      cursor.state.Feed(event, converter.ToNs(event.ticks), collector);
    });
    cursor.next_event = events.size();
  }
}

std::vector<StepRecord> StepPartitioner::TakeSettled(int64_t settled_ns) {
  std::vector<StepRecord> records;
  auto settled_end = std::stable_partition(
      steps_.begin(), steps_.end(), [&](const StepInterval &step) { return step.end_ns <= settled_ns; });
  for (auto step = steps_.begin(); step != settled_end; ++step) {
    records.push_back(StepRecord{true, *step, {}});
  }
  steps_.erase(steps_.begin(), settled_end);
  std::sort(records.begin(), records.end(), [](const StepRecord &a, const StepRecord &b) {
    return a.step.begin_ns < b.step.begin_ns;
  });

  // Spans that begin before every step still to come can only go to a settled step or nowhere.
  int64_t horizon = settled_ns;
  for (const StepInterval &step : steps_) horizon = std::min(horizon, step.begin_ns);
  for (const TrackCursor &cursor : cursors_) {
    int64_t begin_ns = 0;
    if (cursor.state.open_step_begin(&begin_ns)) horizon = std::min(horizon, begin_ns);
  }

  std::vector<HostOp> still_pending;
  for (const HostOp &op : pending_) {
    // The latest-begun settled step that holds the whole span.
    StepRecord *home = nullptr;
    auto after = std::upper_bound(records.begin(), records.end(), op.begin_ns,
                                  [](int64_t ns, const StepRecord &r) { return ns < r.step.begin_ns; });
    for (auto candidate = after; candidate != records.begin();) {
      --candidate;
      if (op.end_ns <= candidate->step.end_ns) {
        home = &*candidate;
        break;
      }
    }
    if (home != nullptr) {
      home->ops.push_back(op);
    } else if (op.begin_ns < horizon) {
      outside_.push_back(op);
    } else {
      still_pending.push_back(op);
    }
  }
  pending_.swap(still_pending);

  for (StepRecord &record : records) SortOuterFirst(record.ops);
  return records;
}

std::vector<StepRecord> StepPartitioner::TakeAll(int64_t end_ns) {
  for (size_t track = 0; track < cursors_.size(); ++track) {
    Collector collector;
    collector.owner = this;
    collector.track = track;
    cursors_[track].state.Finish(end_ns, collector);
  }
  std::vector<StepRecord> records = TakeSettled(std::numeric_limits<int64_t>::max());
  outside_.insert(outside_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  if (!outside_.empty()) {
    StepRecord rest;
    rest.has_step = false;
    rest.ops.swap(outside_);
    SortOuterFirst(rest.ops);
    records.push_back(std::move(rest));
  }
  return records;
}

}  // namespace tfprof
