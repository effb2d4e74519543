// libFuzzer target: the `tfprof` commands' trace loader (format detection, the streaming Chrome
// JSON scanner plain and gzip, Perfetto's protobuf trace, XPlane profiles, TensorFlow's formats)
// never crashes on any input, fails only with the documented errors naming the file, returns only
// consistent traces, and reads JSON the same through a tiny window (every event cut by a refill
// somewhere) as through the normal one.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_scratch.h"
#include "runtime/formats/chrome/chrome_json_reader.h"
#include "runtime/formats/trace_reader.h"

namespace {

void Require(bool condition) {
  if (!condition) __builtin_trap();
}

void CheckConsistent(const tfprof::Trace &trace) {
  using tfprof::Activity;
  using tfprof::Step;
  using tfprof::Track;
  for (const Track &track : trace.tracks) Require(track.process < trace.processes.size());
  for (const Activity &activity : trace.activities) {
    Require(activity.end_ns >= activity.begin_ns);
    Require(activity.track < trace.tracks.size());
    Require(activity.name < trace.names.size());
  }
  for (const Step &step : trace.steps) {
    Require(step.end_ns >= step.begin_ns);
    Require(step.process < trace.processes.size());
  }
  Require(std::is_sorted(trace.steps.begin(), trace.steps.end(),
                         [](const Step &a, const Step &b) { return a.begin_ns < b.begin_ns; }));
}

void CheckError(const absl::Status &status, const std::string &path) {
  Require(absl::IsInvalidArgument(status) || absl::IsDataLoss(status) ||
          absl::IsUnavailable(status));
  Require(status.message().substr(0, path.size() + 2) == path + ": ");
}

absl::Status ReadWindowed(const std::string &path, size_t window_bytes, tfprof::Trace *trace,
                          unsigned threads = 1) {
  trace->path = path;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError("cannot open the scratch file");
  const absl::Status status = tfprof::ReadChromeTrace(fd, false, 0, nullptr, trace, window_bytes,
                                                          threads);
  close(fd);
  return status;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string input = tfprof_fuzz::WriteScratchInput(data, size);
  if (input.empty()) return 0;

  for (const bool salvage : {false, true}) {
    tfprof::LoadOptions options;
    options.salvage = salvage;
    const absl::StatusOr<tfprof::Trace> trace = tfprof::LoadTrace(input, options);
    if (trace.ok()) {
      CheckConsistent(*trace);
      Require(salvage || trace->damage.empty());
    } else {
      CheckError(trace.status(), input);
      Require(!salvage || !absl::IsDataLoss(trace.status()));
    }
  }

  // The input as JSON, through the normal window and through one of 1 to 32 bytes.
  tfprof::Trace normal;
  const absl::Status normal_status =
      ReadWindowed(input, tfprof::kChromeReadWindowBytes, &normal);
  tfprof::Trace windowed;
  const size_t window = size == 0 ? 1 : 1 + data[size - 1] % 32;
  const absl::Status windowed_status = ReadWindowed(input, window, &windowed);
  Require(normal_status == windowed_status);
  Require(normal.activities.size() == windowed.activities.size());
  Require(normal.steps.size() == windowed.steps.size());
  Require(normal.events_in_file == windowed.events_in_file);
  // And on three threads, through a 4 KiB window: stretches of 1 KiB and more are cut into
  // slices at guessed boundaries (chrome_json_batch.h), which must change nothing.
  tfprof::Trace threaded;
  const absl::Status threaded_status = ReadWindowed(input, 4096, &threaded, 3);
  Require(normal_status == threaded_status);
  Require(normal.activities.size() == threaded.activities.size());
  Require(normal.steps.size() == threaded.steps.size());
  Require(normal.events_in_file == threaded.events_in_file);
  if (normal_status.ok() || absl::IsDataLoss(normal_status)) {
    CheckConsistent(normal);
    CheckConsistent(windowed);
    CheckConsistent(threaded);
  }
  return 0;
}
