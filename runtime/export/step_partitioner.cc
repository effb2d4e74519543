#include "runtime/export/step_partitioner.h"

#include <algorithm>
#include <array>
#include <limits>
#include <new>

#include "runtime/common/insert_or_reset.h"
#include "runtime/common/mostly_in_order_sort.h"
#include "runtime/model/trace.h"

namespace tfprof {

namespace {

// Past this many runs of one thread's spans in a step, SortOuterFirst sorts the list whole.
constexpr size_t kMostMergedRuns = 64;

// A step's spans are listed a thread at a time (the partitioner walks one track, then the
// next), each thread's as they ended: a parent after its children. Each thread's run is put in
// order by insertion (a parent moves back past its descendants), then the runs are merged. A
// list of several busy threads' spans sorted whole would be far from begin order: the
// insertion sort would give up, and std::sort would compare each span log n times.
void SortOuterFirst(std::vector<HostOp> &ops) {
  const auto less = [](const HostOp &a, const HostOp &b) { return EnclosingFirst(a, b); };
  std::array<size_t, kMostMergedRuns + 1> bounds;  // run k is [bounds[k], bounds[k + 1])
  size_t runs = 0;
  for (size_t index = 0; index < ops.size(); ++index) {
    if (index > 0 && ops[index].track == ops[index - 1].track) continue;
    if (runs == kMostMergedRuns) {
      SortMostlyInOrder(ops.begin(), ops.end(), less);
      return;
    }
    bounds[runs++] = index;
  }
  bounds[runs] = ops.size();
  const auto at = [&](size_t run) { return ops.begin() + static_cast<ptrdiff_t>(bounds[run]); };
  for (size_t run = 0; run < runs; ++run) SortMostlyInOrder(at(run), at(run + 1), less);
  // Neighbouring runs merged pairwise, in rounds (std::inplace_merge merges in place, slower,
  // when it gets no buffer); runs already in order (threads that took turns) are left as they are.
  for (size_t width = 1; width < runs; width *= 2) {
    for (size_t first = 0; first + width < runs; first += 2 * width) {
      const auto middle = at(first + width);
      if (!less(*middle, *(middle - 1))) continue;
      std::inplace_merge(at(first), middle, at(std::min(first + 2 * width, runs)), less);
    }
  }
}

}  // namespace

struct StepPartitioner::Collector : TrackVisitor {
  StepPartitioner *owner;
  size_t track;

  void OnSpan(uint32_t name, int64_t begin_ns, int64_t end_ns, uint32_t, bool incomplete) {
    owner->pending_.push_back(HostOp{track, name, begin_ns, end_ns, incomplete, false, track});
  }
  void OnStep(int64_t step, int64_t begin_ns, int64_t end_ns, bool incomplete) {
    owner->steps_.push_back(StepInterval{step, begin_ns, end_ns, track, incomplete});
  }
  void OnInstant(uint32_t name, int64_t ns) {
    owner->points_.push_back(HostPoint{track, name, ns, false, 0});
  }
  void OnCounter(uint32_t name, int64_t ns, double value) {
    owner->points_.push_back(HostPoint{track, name, ns, true, value});
  }
  void OnRangeStart(uint32_t name, uint64_t range_id, int64_t ns) {
    HostOp op{track, name, ns, ns, false, true, track};
    if (auto end = owner->early_range_ends_.find(range_id); end != owner->early_range_ends_.end()) {
      op.end_ns = std::max(ns, end->second.ns);
      op.end_track = end->second.track;
      owner->early_range_ends_.erase(end);
      owner->pending_.push_back(op);
    } else {
      InsertOrReset(owner->open_ranges_, [&] { return owner->open_ranges_.emplace(range_id, op); });
    }
  }
  void OnRangeEnd(uint64_t range_id, int64_t ns) {
    auto start = owner->open_ranges_.find(range_id);
    if (start == owner->open_ranges_.end()) {
      // Its start is on a track not walked yet, or was never recorded (then it is ignored).
      InsertOrReset(owner->early_range_ends_,
                    [&] { return owner->early_range_ends_.emplace(range_id, EarlyEnd{ns, track}); });
      return;
    }
    HostOp op = start->second;
    owner->open_ranges_.erase(start);
    op.end_ns = std::max(ns, op.begin_ns);
    op.end_track = track;
    owner->pending_.push_back(op);
  }
};

void StepPartitioner::Advance(const SessionLog &model, const TickConverter &converter,
                              int64_t until_ns) {
  if (cursors_.size() < model.tracks.size()) cursors_.resize(model.tracks.size());
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    TrackCursor &cursor = cursors_[track];
    Collector collector;
    collector.owner = this;
    collector.track = track;
    const EventLog &events = model.tracks[track].events;
    size_t fed = cursor.next_event;
    try {
      cursor.next_event = events.VisitWhile(cursor.next_event, [&](const Event &event) {
        const int64_t ns = converter.ToNs(event.ticks);
        if (ns >= until_ns) return false;
        cursor.state.Feed(event, ns, collector);
        ++fed;
        return true;
      });
    } catch (const std::bad_alloc &) {
      // No memory to take the event in: it is skipped and counted, so that the next call goes on
      // after it rather than feeding the events before it a second time.
      cursor.next_event = fed + 1;
      ++lost_records_;
      throw;
    }
  }
  model_ = &model;
  converter_ = &converter;
  launches_.Advance(model, converter);
  for (; next_activity_ < model.gpu.activities.size(); ++next_activity_) {
    pending_gpu_.push_back(next_activity_);
  }
  for (; next_call_ < model.gpu.api_calls.size(); ++next_call_) pending_calls_.push_back(next_call_);
  for (; next_sync_ < model.gpu.syncs.size(); ++next_sync_) pending_syncs_.push_back(next_sync_);
}

bool StepPartitioner::ResolveLaunch(size_t activity, int64_t gpu_complete_through_ns,
                                    GpuWork *work) const {
  const GpuActivity &record = model_->gpu.activities[activity];
  const GpuApiCall *call = launches_.CallOf(*model_, record.correlation);
  // The call started before its work: once the GPU side is complete past the work's start, a
  // call that is still missing was never collected.
  if (call == nullptr && converter_->ToNs(record.start_ticks) >= gpu_complete_through_ns) {
    return false;
  }
  const uint64_t external_id = launches_.ExternalIdOf(record.correlation);
  const LaunchingOp *op = launches_.OpOfExternal(external_id);
  work->activity = activity;
  // The launch: the call's start, else the launching span's begin, else the work's own start.
  work->launch_ns = call != nullptr ? converter_->ToNs(call->start_ticks)
                    : op != nullptr ? op->begin_ns
                                    : converter_->ToNs(record.start_ticks);
  work->has_op = op != nullptr;
  if (work->has_op) work->op = *op;
  work->thread_id = call != nullptr ? call->os_tid
                    : work->has_op  ? model_->tracks[op->track].os_tid
                                    : 0;
  work->external_id = external_id;
  return true;
}

const StepInterval *StepPartitioner::LatestTakenHolding(int64_t ns) const {
  auto after = std::upper_bound(taken_.begin(), taken_.end(), ns,
                                [](int64_t t, const StepInterval &step) { return t < step.begin_ns; });
  for (auto step = after; step != taken_.begin();) {
    --step;
    if (step->begin_ns < ns - longest_taken_ns_) break;  // no earlier step reaches `ns`
    if (step->end_ns > ns) return &*step;
  }
  return nullptr;
}

void StepPartitioner::PlaceGpuSide(std::vector<StepRecord> &records, int64_t settled_ns,
                                   int64_t gpu_complete_through_ns) {
  // Steps that may still take work: ended but held back, or still open.
  std::vector<StepInterval> untaken = steps_;
  for (const TrackCursor &cursor : cursors_) {
    int64_t begin_ns = 0;
    if (cursor.state.open_step_begin(&begin_ns)) {
      untaken.push_back(StepInterval{0, begin_ns, std::numeric_limits<int64_t>::max(), 0, true});
    }
  }
  enum class Placement { kWait, kRecord, kOutside };
  // Where an item launched at `ns` goes: the latest-begun step of this batch holding `ns`, unless
  // a later-begun step taken earlier or not taken yet holds it too (then it belongs there, or
  // waits for it). `*late`: its step's record was taken by an earlier call.
  const auto place = [&](int64_t ns, StepRecord **home, bool *late) {
    StepRecord *batch_home = nullptr;
    for (StepRecord &record : records) {
      if (record.step.begin_ns <= ns && ns < record.step.end_ns) batch_home = &record;
    }
    const StepInterval *earlier_home = LatestTakenHolding(ns);
    if (batch_home != nullptr && earlier_home != nullptr &&
        earlier_home->begin_ns > batch_home->step.begin_ns) {
      batch_home = nullptr;
    }
    const int64_t home_begin = batch_home != nullptr    ? batch_home->step.begin_ns
                               : earlier_home != nullptr ? earlier_home->begin_ns
                                                         : std::numeric_limits<int64_t>::min();
    const bool later_untaken_home = std::any_of(untaken.begin(), untaken.end(), [&](const StepInterval &step) {
      return step.begin_ns <= ns && ns < step.end_ns && step.begin_ns > home_begin;
    });
    if (later_untaken_home) return Placement::kWait;
    *home = batch_home;
    *late = batch_home == nullptr && earlier_home != nullptr;
    return batch_home != nullptr ? Placement::kRecord : Placement::kOutside;
  };

  std::vector<size_t> still_pending;
  for (const size_t activity : pending_gpu_) {
    GpuWork work;
    StepRecord *home = nullptr;
    bool late = false;
    // A launch at or after `settled_ns` may belong to a step whose begin is not drained yet.
    if (!ResolveLaunch(activity, gpu_complete_through_ns, &work) || work.launch_ns >= settled_ns ||
        place(work.launch_ns, &home, &late) == Placement::kWait) {
      still_pending.push_back(activity);
    } else if (home != nullptr) {
      home->gpu.push_back(work);
    } else {
      if (late) ++late_gpu_records_;  // its step's record is already out
      outside_.gpu.push_back(work);
    }
  }
  pending_gpu_.swap(still_pending);

  // API calls and synchronisations go with the step their start falls in.
  const auto place_by_start = [&](std::vector<size_t> &pending, auto start_of,
                                  std::vector<size_t> StepRecord::*list) {
    std::vector<size_t> waiting;
    for (const size_t index : pending) {
      const int64_t ns = start_of(index);
      StepRecord *home = nullptr;
      bool late = false;
      if (ns >= settled_ns || ns >= gpu_complete_through_ns ||
          place(ns, &home, &late) == Placement::kWait) {
        waiting.push_back(index);
      } else {
        ((home != nullptr ? *home : outside_).*list).push_back(index);
      }
    }
    pending.swap(waiting);
  };
  place_by_start(
      pending_calls_,
      [&](size_t index) { return converter_->ToNs(model_->gpu.api_calls[index].start_ticks); },
      &StepRecord::api_calls);
  place_by_start(
      pending_syncs_,
      [&](size_t index) { return converter_->ToNs(model_->gpu.syncs[index].start_ticks); },
      &StepRecord::syncs);

  for (const StepRecord &record : records) {
    auto at = std::upper_bound(taken_.begin(), taken_.end(), record.step.begin_ns,
                               [](int64_t t, const StepInterval &step) { return t < step.begin_ns; });
    taken_.insert(at, record.step);
    longest_taken_ns_ = std::max(longest_taken_ns_, record.step.end_ns - record.step.begin_ns);
  }
  for (StepRecord &record : records) SortByStart(record.gpu);
  if (settled_ns != std::numeric_limits<int64_t>::max()) {
    ForgetTakenBefore(std::min(settled_ns, gpu_complete_through_ns) - kTakenStepMemoryNs);
  }
}

void StepPartitioner::TakenIn(bool gpu_tracing, LogPositions *positions) const {
  positions->host_events.resize(cursors_.size());
  for (size_t track = 0; track < cursors_.size(); ++track) {
    const size_t fed = cursors_[track].next_event;
    positions->host_events[track] =
        gpu_tracing ? std::min(fed, launches_.IndexedEvents(track)) : fed;
  }
  // The pending lists keep their records' order: the first is the oldest still needed.
  const auto first_needed = [](const std::vector<size_t> &pending, size_t next) {
    return pending.empty() ? next : pending.front();
  };
  positions->gpu_activities = first_needed(pending_gpu_, next_activity_);
  positions->gpu_api_calls = first_needed(pending_calls_, next_call_);
  positions->gpu_syncs = first_needed(pending_syncs_, next_sync_);
  positions->gpu_external_correlations = launches_.IndexedLinks();
}

void StepPartitioner::ForgetTakenBefore(int64_t cutoff_ns) {
  // Sorted by begin: a step that began before cutoff - longest ended before the cutoff.
  size_t forgotten = 0;
  if (cutoff_ns >= std::numeric_limits<int64_t>::min() + longest_taken_ns_) {
    const auto keep_from =
        std::lower_bound(taken_.begin(), taken_.end(), cutoff_ns - longest_taken_ns_,
                         [](const StepInterval &step, int64_t ns) { return step.begin_ns < ns; });
    forgotten = static_cast<size_t>(keep_from - taken_.begin());
  }
  // Bounded in steps too: a fast step rate must not hold a minute of them.
  if (taken_.size() >= kMaxRememberedSteps + kForgetBatch) {
    forgotten = std::max(forgotten, taken_.size() - kMaxRememberedSteps);
  }
  // In batches, so erasing from the front costs O(1) per step.
  if (forgotten >= kForgetBatch || (forgotten > 0 && forgotten * 2 >= taken_.size())) {
    taken_.erase(taken_.begin(), taken_.begin() + static_cast<std::ptrdiff_t>(forgotten));
  }
}

void StepPartitioner::SortByStart(std::vector<GpuWork> &work) const {
  std::stable_sort(work.begin(), work.end(), [&](const GpuWork &a, const GpuWork &b) {
    return model_->gpu.activities[a.activity].start_ticks <
           model_->gpu.activities[b.activity].start_ticks;
  });
}

std::vector<StepRecord> StepPartitioner::TakeSettled(int64_t settled_ns,
                                                     int64_t gpu_complete_through_ns) {
  std::vector<StepRecord> records;
  auto settled_end = std::stable_partition(steps_.begin(), steps_.end(), [&](const StepInterval &step) {
    return step.end_ns <= settled_ns && step.end_ns <= gpu_complete_through_ns;
  });
  for (auto step = steps_.begin(); step != settled_end; ++step) {
    StepRecord record;
    record.step = *step;
    records.push_back(std::move(record));
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
  points_horizon_ = std::max(points_horizon_, horizon);

  // Spans placed now leave pending_, compacted in place: a long export reuses its memory.
  size_t kept = 0;
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
      outside_.ops.push_back(op);
    } else {
      pending_[kept++] = op;
    }
  }
  pending_.resize(kept);

  for (StepRecord &record : records) SortOuterFirst(record.ops);
  if (model_ != nullptr) PlaceGpuSide(records, settled_ns, gpu_complete_through_ns);
  return records;
}

void StepPartitioner::TakeOutside(StepRecord *rest) {
  // The two records trade their vectors, so each keeps the memory it grew.
  rest->has_step = false;
  rest->ops.clear();
  rest->gpu.clear();
  rest->api_calls.clear();
  rest->syncs.clear();
  rest->ops.swap(outside_.ops);
  rest->gpu.swap(outside_.gpu);
  rest->api_calls.swap(outside_.api_calls);
  rest->syncs.swap(outside_.syncs);
  if (model_ != nullptr) SortByStart(rest->gpu);
}

std::vector<HostPoint> StepPartitioner::TakePoints() {
  std::vector<HostPoint> taken;
  std::vector<HostPoint> kept;
  for (const HostPoint &point : points_) {
    (point.ns < points_horizon_ ? taken : kept).push_back(point);
  }
  points_.swap(kept);
  return taken;
}

std::vector<StepRecord> StepPartitioner::TakeAll(int64_t end_ns) {
  for (size_t track = 0; track < cursors_.size(); ++track) {
    Collector collector;
    collector.owner = this;
    collector.track = track;
    cursors_[track].state.Finish(end_ns, collector);
  }
  for (auto &[range_id, op] : open_ranges_) {
    op.end_ns = std::max(end_ns, op.begin_ns);
    op.incomplete = true;
    pending_.push_back(op);
  }
  open_ranges_.clear();
  early_range_ends_.clear();
  constexpr int64_t kEverything = std::numeric_limits<int64_t>::max();
  std::vector<StepRecord> records = TakeSettled(kEverything, kEverything);
  outside_.ops.insert(outside_.ops.end(), pending_.begin(), pending_.end());
  pending_.clear();
  StepRecord rest;
  TakeOutside(&rest);
  if (!rest.ops.empty() || !rest.gpu.empty() || !rest.api_calls.empty() || !rest.syncs.empty()) {
    records.push_back(std::move(rest));
  }
  return records;
}

}  // namespace tfprof
