#include "runtime/gpu/gpu_settling.h"

#include <algorithm>
#include <vector>

namespace tfprof {

void GpuSettling::Advance(const GpuTrace &trace, const TickConverter &converter) {
  for (; calls_seen_ < trace.api_calls.size(); ++calls_seen_) {
    const GpuApiCall &call = trace.api_calls[calls_seen_];
    if (!call.launches_work) continue;
    // A launch can fail or enqueue nothing (a zero-byte copy); the wait limit covers those.
    if (early_activities_.erase(call.correlation) == 0) {
      waiting_launches_.emplace(call.correlation, converter.ToNs(call.start_ticks));
    }
  }
  for (; activities_seen_ < trace.activities.size(); ++activities_seen_) {
    const GpuActivity &activity = trace.activities[activities_seen_];
    // A graph launch has many activities under one correlation: the first one settles the call.
    if (waiting_launches_.erase(activity.correlation) == 0) {
      early_activities_.emplace(activity.correlation, converter.ToNs(activity.start_ticks));
    }
  }
}

int64_t GpuSettling::CompleteThroughNs(int64_t flushed_through_ns, int64_t now_ns,
                                       int64_t wait_ns) {
  int64_t complete = flushed_through_ns;
  std::vector<uint32_t> expired;
  for (const auto &[correlation, start_ns] : waiting_launches_) {
    if (now_ns - start_ns > wait_ns) {
      expired.push_back(correlation);
    } else {
      complete = std::min(complete, start_ns);
    }
  }
  for (uint32_t correlation : expired) waiting_launches_.erase(correlation);
  absl::erase_if(early_activities_,
                 [&](const auto &entry) { return now_ns - entry.second > wait_ns; });
  return complete;
}

}  // namespace tfprof
