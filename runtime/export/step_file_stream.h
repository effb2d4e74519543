// A .tfrecord or TensorBoard event file that grows while the session runs: each step's record is
// appended once the step has ended and its events are drained, so a crash loses at most the
// steps still in progress. The spans that fit in no step are appended when the session stops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/export/export_context.h"
#include "runtime/export/step_file_encoder.h"
#include "runtime/export/step_partitioner.h"
#include "runtime/session_log.h"

namespace tfprof {

class StepFileStream {
 public:
  // Creates (or truncates) the file and writes its header. For kEventFile, `path` is the
  // TensorBoard log directory and the file is a new events.out.tfevents.* inside it.
  static absl::StatusOr<std::unique_ptr<StepFileStream>> Open(Format kind,
                                                              const std::string &path,
                                                              const ExportContext &context);
  ~StepFileStream();
  StepFileStream(const StepFileStream &) = delete;
  StepFileStream &operator=(const StepFileStream &) = delete;

  // Appends the steps settled by `settled_ns` (every host event before it is drained) and
  // `gpu_complete_through_ns` (StepPartitioner::TakeSettled() says what both promise).
  void Append(const SessionLog &model, const ExportContext &context, int64_t settled_ns,
              int64_t gpu_complete_through_ns = kGpuCompleteAlways);

  // Appends everything left (incomplete steps, spans and GPU work outside steps, the losses node
  // with this file's late GPU records) and closes the file. Returns the first write failure of
  // the stream's whole life, naming the file.
  absl::Status Finish(const SessionLog &model, const ExportContext &context);

  // GPU activities that arrived after their step's record was written (they are in the last
  // record); the profiler copies this into GpuLossCounters::late_records.
  uint64_t late_gpu_records() const { return partitioner_.late_gpu_records(); }

  const std::string &path() const { return path_; }

 private:
  StepFileStream(Format kind, std::string path, int fd)
      : path_(std::move(path)), fd_(fd), encoder_(kind) {}
  void Write(std::string_view bytes);

  std::string path_;
  int fd_;
  StepPartitioner partitioner_;
  StepFileEncoder encoder_;
  absl::Status status_;  // the first failure; later writes are skipped
};

}  // namespace tfprof
