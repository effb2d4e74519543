// A session's recording as the trace model, produced in pieces as steps settle: the producer
// the runtime's export and its streamed outputs share. Each Take*() call fills the model's
// steps, activities, GPU details and counter samples with one piece (replacing the last one)
// and keeps the tables (names, processes, rows) that pieces share, so a writer can write piece
// after piece (chrome_json_writer.h, step_stats_trace_writer.h) with memory bounded by a piece.
//
// What becomes what: the host process is process 0 (the session's pid and name), each GPU a
// process "GPU N" (pid N, or 1000000 + N for every GPU when the host's pid is a device's id;
// sort index 5000000 + N);
// each thread a row (its OS tid), each stream a row, each stream's synchronisations a row
// beside it (tid 1000000 + stream; 999999 for a context), API calls on their thread's row (a
// thread known only from its API calls gets a row "thread T"), CUPTI's overhead on a row of the
// host process (tid 1999999999). Spans, ranges and instants are activities; counters and each
// GPU's memory in use are counter samples; every step gets per stream a "step N"
// gpu_user_annotation span over the work it launched. Activity::step is set by the
// partitioner's placement (step_partitioner.h), which follows the model's rule.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/export/export_context.h"
#include "runtime/export/gpu_display_names.h"
#include "runtime/model/gpu_names.h"
#include "runtime/export/step_partitioner.h"
#include "runtime/model/trace.h"
#include "runtime/model/trace_builder.h"
#include "runtime/session/session_log.h"

namespace tfprof {

class SessionTrace {
 public:
  explicit SessionTrace(const ExportContext &context);
  SessionTrace(const SessionTrace &) = delete;  // builder_ points at trace_
  SessionTrace &operator=(const SessionTrace &) = delete;

  // The model: the tables, and the last piece taken.
  const Trace &trace() const { return trace_; }

  // Reads what `log` gained since the last call (host events stamped before `until_ns`).
  // `log` and `context` must stay alive until the next Take*() call.
  void Advance(const SessionLog &log, const ExportContext &context, int64_t until_ns = INT64_MAX);

  // The next piece: the steps settled by `settled_ns` and `gpu_complete_through_ns`
  // (StepPartitioner::TakeSettled() says what both promise), what fits in no step and can be
  // written now, and the GPU's overheads and memory changes stamped before both. False when the
  // piece is empty.
  bool TakeSettled(int64_t settled_ns, int64_t gpu_complete_through_ns);

  // The last piece: everything left, as of the session's end (context.end_ns).
  void TakeAll();

  // Copies the header facts (end, events recorded, losses, GPU state and devices) from the
  // session as of `context`; `gpu_losses` are the GPU's, late records included.
  void UpdateInfo(const SessionLog &log, const ExportContext &context,
                  const GpuLossCounters &gpu_losses);

  // GPU activities that arrived after their step had been taken (in a later piece).
  uint64_t late_gpu_records() const { return partitioner_.late_gpu_records(); }
  // Session records skipped for want of memory while reading them in.
  uint64_t lost_records() const { return partitioner_.lost_records(); }

  // The session's records behind the current piece, counted as the session counts them (a span,
  // range or step: its begin and its end; anything else: one), for the losses of a piece that is
  // not written.
  uint64_t piece_records() const;

  // What of the session's records, from the first of each list, is no longer needed here: the
  // partitioner's (StepPartitioner::TakenIn()), and the overheads and memory changes read.
  LogPositions TakenIn(bool gpu_tracing) const;

  // The records the last Take*() took from the session for its piece, counted as piece_records()
  // counts them: what a piece that could not be built (no memory) loses.
  uint64_t taken_records() const { return taken_records_; }

 private:
  void ClearPiece();
  void SyncThreadRows();
  uint32_t HostName(uint32_t session_id);
  uint32_t GpuName(uint32_t gpu_id);
  uint32_t Intern(std::string_view text) { return trace_.names.Intern(text); }
  uint32_t GpuProcess(uint32_t device);
  uint32_t StreamRow(uint32_t device, uint32_t stream);
  uint32_t SyncRow(uint32_t device, uint32_t stream);
  uint32_t ApiRow(int64_t os_tid);
  uint32_t OverheadRow();
  uint32_t MemoryRow(uint32_t device);
  uint32_t SyncDevice(const GpuSync &sync) const;
  int64_t Ns(uint64_t ticks) const { return context_->converter.ToNs(ticks); }
  int64_t StepNumberAt(int64_t ns) const;

  void AddRecord(const StepRecord &record);
  void AddHostOp(const HostOp &op, int64_t step);
  void AddGpuWork(const GpuWork &work, int64_t step);
  void AddApiCall(size_t index, int64_t step);
  // `activity` with `detail` as its GPU detail.
  void AddWithDetail(Activity activity, const GpuDetail &detail);
  void AddSync(size_t index, int64_t step);
  void AddPoints();
  void AddLooseGpuRecords(int64_t through_ns);

  Trace trace_;
  TraceBuilder builder_{&trace_};  // processes and rows; the pieces' content goes in directly
  const SessionLog *log_ = nullptr;
  const ExportContext *context_ = nullptr;
  StepPartitioner partitioner_;
  uint64_t taken_records_ = 0;  // see taken_records()
  StepRecord outside_;  // the last piece's record of what fits in no step (its memory reused)
  std::vector<uint32_t> host_names_;  // session name id -> model name id (UINT32_MAX: not yet)
  std::vector<uint32_t> gpu_names_;   // GpuTrace name id -> model name id
  std::optional<KernelNames> kernel_names_;  // demangled once per name
  std::vector<uint32_t> thread_rows_;  // ThreadLog index -> model track
  absl::flat_hash_map<int64_t, uint32_t> rows_by_os_tid_;  // the latest thread row of an OS tid
  std::map<uint32_t, uint32_t> gpu_processes_;              // device -> process
  int64_t gpu_pid_base_ = 0;  // 1000000 when the host's pid is a device id
  absl::flat_hash_map<uint32_t, uint32_t> context_devices_;  // CUDA context -> device
  std::map<uint32_t, int64_t> memory_in_use_;                 // device -> bytes
  size_t next_overhead_ = 0;
  size_t next_memory_change_ = 0;
  uint32_t value_series_ = 0;
  uint32_t bytes_in_use_series_ = 0;
  uint32_t gpu_memory_name_ = 0;
};

}  // namespace tfprof
