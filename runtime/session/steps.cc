#include "runtime/session/steps.h"

#include <algorithm>

#include "runtime/session/track_walker.h"

namespace tfprof {

namespace {

struct StepCollector : TrackVisitor {
  std::vector<StepInterval> *steps;
  size_t track;

  void OnStep(int64_t step, int64_t begin_ns, int64_t end_ns, bool incomplete) {
    steps->push_back(StepInterval{step, begin_ns, end_ns, track, incomplete});
  }
};

}  // namespace

std::vector<StepInterval> CollectSteps(const SessionLog &model, const TickConverter &converter,
                                       int64_t end_ns) {
  std::vector<StepInterval> steps;
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    StepCollector collector;
    collector.steps = &steps;
    collector.track = track;
    WalkTrack(model.tracks[track], converter, end_ns, collector);
  }
  std::stable_sort(steps.begin(), steps.end(), [](const StepInterval &a, const StepInterval &b) {
    return a.begin_ns < b.begin_ns;
  });
  return steps;
}

StepLookup::StepLookup(const std::vector<StepInterval> &steps) : steps_(steps) {
  latest_end_.reserve(steps.size());
  int64_t latest = INT64_MIN;
  for (const StepInterval &step : steps) {
    latest = std::max(latest, step.end_ns);
    latest_end_.push_back(latest);
  }
}

const StepInterval *StepLookup::Find(int64_t ns) const {
  // First step that begins after `ns`; candidates are before it.
  auto after = std::upper_bound(steps_.begin(), steps_.end(), ns,
                                [](int64_t t, const StepInterval &step) { return t < step.begin_ns; });
  for (size_t index = static_cast<size_t>(after - steps_.begin()); index-- > 0;) {
    if (latest_end_[index] <= ns) return nullptr;  // nothing this early reaches `ns`
    if (steps_[index].end_ns > ns) return &steps_[index];
  }
  return nullptr;
}

}  // namespace tfprof
