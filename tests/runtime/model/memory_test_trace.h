// Traces with known memory answers: PyTorch [memory] events (args as the Chrome reader keeps
// them), host ops around them, counters and steps. Track 0 is thread 1 of process 0 ("python").
#pragma once

#include <string>

#include "runtime/model/event_args.h"
#include "runtime/model/trace.h"
#include "support/model_builders.h"

namespace tfprof_test {

class MemoryTestTrace {
 public:
  MemoryTestTrace() {
    trace_.processes.push_back(ProcessOf(4242, "python"));
    trace_.tracks.push_back(TrackOf(0, 1, "main", tfprof::TrackKind::kHostThread, -1, -1));
  }
  uint32_t AddTrack(tfprof::Track track) {
    trace_.tracks.push_back(std::move(track));
    return static_cast<uint32_t>(trace_.tracks.size() - 1);
  }
  MemoryTestTrace &Op(const std::string &name, int64_t begin, int64_t end, uint32_t track = 0) {
    tfprof::Activity activity;
    activity.begin_ns = begin;
    activity.end_ns = end;
    activity.name = trace_.names.Intern(name);
    activity.track = track;
    activity.kind = tfprof::ActivityKind::kHostOp;
    trace_.activities.push_back(activity);
    return *this;
  }
  // A [memory] event: `device_type` 0 is the CPU (its id -1), 1 CUDA. `total` < 0: no "Total
  // Allocated" (PyTorch before 1.10); `address` 0: no "Addr".
  MemoryTestTrace &Memory(int64_t ns, int64_t device_type, int64_t device_id, int64_t bytes,
                          int64_t total = -1, uint64_t address = 0, uint32_t track = 0) {
    std::string args = "\"Device Type\":" + std::to_string(device_type) +
                       tfprof::kFileArgsSeparator + "\"Device Id\":" + std::to_string(device_id) +
                       tfprof::kFileArgsSeparator + "\"Bytes\":" + std::to_string(bytes);
    if (total >= 0) {
      args += tfprof::kFileArgsSeparator + std::string("\"Total Allocated\":") +
              std::to_string(total);
    }
    if (address != 0) {
      args += tfprof::kFileArgsSeparator + std::string("\"Addr\":") + std::to_string(address);
    }
    tfprof::Activity activity;
    activity.begin_ns = activity.end_ns = ns;
    activity.name = trace_.names.Intern("[memory]");
    activity.track = track;
    activity.kind = tfprof::ActivityKind::kInstant;
    activity.detail = trace_.file_args.Add(args);
    trace_.activities.push_back(activity);
    return *this;
  }
  MemoryTestTrace &Counter(int64_t ns, double value, const std::string &name,
                           const std::string &series, uint32_t track) {
    trace_.counters.push_back(tfprof::CounterSample{ns, value, trace_.names.Intern(name), track,
                                                    trace_.names.Intern(series)});
    return *this;
  }
  MemoryTestTrace &StepAt(int64_t number, int64_t begin, int64_t end) {
    trace_.steps.push_back(StepOf(number, begin, end, 0));
    return *this;
  }
  tfprof::Trace &trace() { return trace_; }

 private:
  tfprof::Trace trace_;
};

}  // namespace tfprof_test
