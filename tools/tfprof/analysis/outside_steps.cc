#include "tools/tfprof/analysis/outside_steps.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace tfprof::cli {

const char *OutsideWhereName(OutsideWhere where) {
  switch (where) {
    case OutsideWhere::kBeforeFirstStep: return "before_first_step";
    case OutsideWhere::kBetweenSteps: return "between_steps";
    case OutsideWhere::kAfterLastStep: return "after_last_step";
  }
  return "before_first_step";
}

std::vector<OutsideStretch> OutsideStretches(const Trace &trace, const std::vector<size_t> &steps,
                                             Interval extent) {
  std::vector<OutsideStretch> stretches;
  if (steps.empty()) return stretches;
  const int64_t first = trace.steps[steps.front()].begin_ns;
  if (extent.begin < first) {
    stretches.push_back({{extent.begin, first}, OutsideWhere::kBeforeFirstStep});
  }
  // Steps may overlap (a rank's nested marks): a gap opens only after the latest end so far.
  int64_t covered_until = trace.steps[steps.front()].end_ns;
  for (size_t index : steps) {
    const Step &step = trace.steps[index];
    if (step.begin_ns > covered_until) {
      stretches.push_back({{covered_until, step.begin_ns}, OutsideWhere::kBetweenSteps});
    }
    covered_until = std::max(covered_until, step.end_ns);
  }
  if (extent.end > covered_until) {
    stretches.push_back({{covered_until, extent.end}, OutsideWhere::kAfterLastStep});
  }
  return stretches;
}

namespace {

// Adds the part of [begin, end) inside each stretch to `into[where]`, times `sign`.
void AddOverlaps(const std::vector<OutsideStretch> &stretches, int64_t begin, int64_t end,
                 int64_t sign, uint32_t name,
                 std::array<absl::flat_hash_map<uint32_t, int64_t>, kOutsideWheres> &into) {
  auto it = std::upper_bound(stretches.begin(), stretches.end(), begin,
                             [](int64_t t, const OutsideStretch &s) { return t < s.interval.end; });
  for (; it != stretches.end() && it->interval.begin < end; ++it) {
    const int64_t overlap = std::min(end, it->interval.end) - std::max(begin, it->interval.begin);
    if (overlap > 0) into[static_cast<size_t>(it->where)][name] += sign * overlap;
  }
}

bool Overlaps(const std::vector<OutsideStretch> &stretches, const Activity &span) {
  const auto it = std::upper_bound(
      stretches.begin(), stretches.end(), span.begin_ns,
      [](int64_t t, const OutsideStretch &s) { return t < s.interval.end; });
  return it != stretches.end() && it->interval.begin < span.end_ns;
}

}  // namespace

std::array<std::vector<std::pair<std::string, int64_t>>, kOutsideWheres> OpsOutsideSteps(
    const Trace &trace, const std::vector<uint32_t> &group_of_track,
    const std::vector<std::vector<OutsideStretch>> &stretches_by_group, size_t top) {
  std::array<std::vector<std::pair<std::string, int64_t>>, kOutsideWheres> result;
  // The host ops that overlap a stretch, by thread. A span's parents enclose it, so they are
  // among them too: each thread's walk with a stack sees every parent of what it counts.
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t index = 0; index < trace.activities.size(); ++index) {
    const Activity &span = trace.activities[index];
    if (span.kind != ActivityKind::kHostOp && span.kind != ActivityKind::kRuntimeApi) continue;
    const uint32_t group = group_of_track[span.track];
    if (group >= stretches_by_group.size() || !Overlaps(stretches_by_group[group], span)) continue;
    by_track[span.track].push_back(index);
  }
  std::array<absl::flat_hash_map<uint32_t, int64_t>, kOutsideWheres> self;  // by name
  std::vector<uint32_t> stack;
  for (auto &[track, spans] : by_track) {
    SortEnclosingFirst(trace.activities, spans);
    const std::vector<OutsideStretch> &stretches = stretches_by_group[group_of_track[track]];
    stack.clear();
    for (uint32_t index : spans) {
      const Activity &span = trace.activities[index];
      while (!stack.empty() && trace.activities[stack.back()].end_ns <= span.begin_ns) {
        stack.pop_back();
      }
      AddOverlaps(stretches, span.begin_ns, span.end_ns, 1, span.name, self);
      if (!stack.empty()) {  // the parent's self time loses what this child covers
        const Activity &parent = trace.activities[stack.back()];
        AddOverlaps(stretches, span.begin_ns, std::min(span.end_ns, parent.end_ns), -1,
                    parent.name, self);
      }
      stack.push_back(index);
    }
  }
  for (size_t where = 0; where < kOutsideWheres; ++where) {
    std::vector<std::pair<uint32_t, int64_t>> ranked(self[where].begin(), self[where].end());
    std::sort(ranked.begin(), ranked.end(), [&](const auto &a, const auto &b) {
      return a.second != b.second ? a.second > b.second
                                  : trace.names.Get(a.first) < trace.names.Get(b.first);
    });
    for (const auto &[name, ns] : ranked) {
      if (result[where].size() >= top || ns <= 0) break;
      result[where].emplace_back(trace.names.Get(name), ns);
    }
  }
  return result;
}

}  // namespace tfprof::cli
