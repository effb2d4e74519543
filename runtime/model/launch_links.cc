#include "runtime/model/launch_links.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace tfprof {
namespace {

// Id 0 is no id: CUPTI counts correlation ids up from 1, and Kineto (and the files of tools
// built on it) write 0 where an event has none; linking by it would tie every such copy or
// kernel to one launch call.
bool HasCorrelation(const GpuDetail &detail) {
  return (detail.fields & kGpuHasCorrelation) != 0 && detail.correlation != 0;
}

}  // namespace

namespace {

constexpr uint32_t kNoCall = UINT32_MAX;

// The launch calls by correlation id, for ids CUPTI counts up from 1: a table indexed by each
// recording's ids (4 bytes an id), when they are that dense; else the calls sorted by key (16
// bytes a call). A hash map of the same took about 90 bytes a call at its last growth, and a
// PyTorch trace holds a call per kernel: millions.
class LaunchCalls {
 public:
  // `calls`: (group << 32 | correlation, activity index), in file order.
  explicit LaunchCalls(std::vector<std::pair<uint64_t, uint32_t>> calls) {
    // The recordings (groups) that have calls, each a stretch of the table as long as its
    // highest id: a group number comes from the file, so the table is sized by the groups that
    // occur, never by their numbers.
    // (A run of calls of one group is listed once: a trace of one recording sorts one entry,
    // not millions.)
    for (const auto &[key, activity] : calls) {
      const auto group = static_cast<uint32_t>(key >> 32);
      if (groups_.empty() || groups_.back() != group) groups_.push_back(group);
    }
    std::sort(groups_.begin(), groups_.end());
    groups_.erase(std::unique(groups_.begin(), groups_.end()), groups_.end());
    std::vector<uint64_t> highest(groups_.size(), 0);
    for (const auto &[key, activity] : calls) {
      uint64_t &high = highest[GroupIndex(key)];
      high = std::max(high, key & 0xFFFFFFFFu);
    }
    uint64_t slots = 0;
    offsets_.resize(groups_.size() + 1);
    for (size_t group = 0; group < groups_.size(); ++group) {
      offsets_[group] = slots;
      slots += highest[group] + 1;
    }
    offsets_[groups_.size()] = slots;
    if (slots <= 4 * uint64_t{calls.size()} + 65536) {
      table_.assign(slots, kNoCall);
      for (const auto &[key, activity] : calls) {
        uint32_t &slot = table_[offsets_[GroupIndex(key)] + (key & 0xFFFFFFFFu)];
        if (slot == kNoCall) slot = activity;  // of two calls with one id, the first is the launch
      }
      return;
    }
    offsets_.clear();
    sorted_ = std::move(calls);
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
  }

  // The activity index of the call with `key`, kNoCall when none.
  uint32_t Find(uint64_t key) const {
    if (!offsets_.empty()) {
      const size_t group = GroupIndex(key);
      if (group == groups_.size()) return kNoCall;  // a recording with no launch calls
      const uint64_t slot = offsets_[group] + (key & 0xFFFFFFFFu);
      return slot < offsets_[group + 1] ? table_[slot] : kNoCall;
    }
    const auto found = std::lower_bound(
        sorted_.begin(), sorted_.end(), key,
        [](const std::pair<uint64_t, uint32_t> &entry, uint64_t value) {
          return entry.first < value;
        });
    return found != sorted_.end() && found->first == key ? found->second : kNoCall;
  }

 private:
  // The index of the key's group in groups_ (groups_.size() when it has no calls).
  size_t GroupIndex(uint64_t key) const {
    const auto group = static_cast<uint32_t>(key >> 32);
    const auto found = std::lower_bound(groups_.begin(), groups_.end(), group);
    return found != groups_.end() && *found == group ? static_cast<size_t>(found - groups_.begin())
                                                    : groups_.size();
  }

  std::vector<uint32_t> groups_;   // the groups that have calls, sorted
  std::vector<uint64_t> offsets_;  // the table: each group's first slot, then its end (empty:
                                   // sorted_)
  std::vector<uint32_t> table_;
  std::vector<std::pair<uint64_t, uint32_t>> sorted_;
};

}  // namespace

void LinkLaunches(Trace &trace) {
  // Correlation ids are unique within one recording only: a merged trace's ranks, or an XPlane
  // profile's hosts, each count from 1 (Process::group tells them apart).
  const auto key = [&trace](const Activity &activity, uint32_t correlation) {
    return (static_cast<uint64_t>(trace.processes[trace.tracks[activity.track].process].group)
            << 32) |
           correlation;
  };
  const auto is_call = [&trace](const Activity &activity) {
    return activity.kind == ActivityKind::kRuntimeApi &&
           HasCorrelation(trace.gpu_details.Get(activity.detail));
  };
  size_t count = 0;
  for (const Activity &activity : trace.activities) count += is_call(activity) ? 1 : 0;
  if (count == 0) return;
  std::vector<std::pair<uint64_t, uint32_t>> list;
  list.reserve(count);
  for (uint32_t index = 0; index < trace.activities.size(); ++index) {
    const Activity &activity = trace.activities[index];
    if (is_call(activity)) {
      list.emplace_back(key(activity, trace.gpu_details.Get(activity.detail).correlation), index);
    }
  }
  const LaunchCalls calls(std::move(list));
  for (const Activity &activity : trace.activities) {
    // GPU work's details are whole ones (GpuDetails::Add).
    GpuDetail *work = IsGpuWork(activity.kind) ? trace.gpu_details.Work(activity.detail) : nullptr;
    if (work == nullptr || !HasCorrelation(*work)) continue;
    GpuDetail &detail = *work;
    const uint32_t call = calls.Find(key(activity, detail.correlation));
    if (call == kNoCall) continue;
    const Activity &launch = trace.activities[call];
    if (detail.launch_ns == kNoStep) detail.launch_ns = launch.begin_ns;
    if (detail.thread_id == 0) detail.thread_id = trace.tracks[launch.track].tid;
    trace.gpu_details.AddFields(launch.detail, kGpuLaunchesWork);
  }
}

}  // namespace tfprof
