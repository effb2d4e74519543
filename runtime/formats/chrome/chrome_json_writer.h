// The one Chrome trace JSON writer (docs/chrome-trace.md): the trace model as the file Perfetto
// UI, chrome://tracing, Holistic Trace Analysis and tfprof's own reader open. The runtime's export
// and stream, `tfprof convert`/`merge` and prof_convert() all write through it.
//
// The file is {"traceEvents":[EVENTS..., METADATA...], HEADER...}: the events as the model
// produced them, then every process's and row's names and sort indices, then the header members
// ("displayTimeUnit", the losses, "distributedInfo", "deviceProperties", the "tfprof" object).
// Everything after the events is the tail, which depends only on the model's tables and the
// totals so far: a streamed file is written as events plus the tail, and each later batch of
// events overwrites the old tail and writes a new one, so the file is complete JSON after every
// batch (viewers accept the metadata and header after the events).
//
// Layout: one process per process of the model (its pid, renumbered only where two share one;
// its name, GPU labels and sort index); a "Steps" row per process that has steps (one per marking
// thread, "Steps (NAME)", when several threads mark them); one row per track, named, with a tid
// renumbered to 1000000000 + its index where two rows of a process share one. Categories follow
// the PyTorch profiler: user_annotation, python_function, cuda_runtime/cuda_driver, kernel,
// gpu_memcpy, gpu_memset, gpu_user_annotation, cuda_sync, overhead; "step" rows; async ranges as
// "b"/"e" pairs (cat "range"); instants "i"; counters "C"; "ac2g" flows from each launch call to
// the first GPU work of its correlation id within the same batch. Times are microseconds with
// three decimals on the model's clock.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "runtime/common/json_text.h"
#include "runtime/formats/format_writer.h"
#include "runtime/model/trace.h"

namespace tfprof {

class ChromeJsonWriter final : public FormatWriter {
 public:
  Ending ending() const override { return Ending::kRewritten; }

  // The first bytes of every file.
  std::string Begin(int64_t /*start_wall_ns*/) override { return "{\"traceEvents\":[\n"; }

  // Appends to `out` the steps, activities and counters `trace` holds now, each event preceded by
  // ",\n" except the file's first. Flows join a launch call and its GPU work only when both are
  // in the same piece. `drain`, when given, is called whenever `out` holds more than kDrainBytes.
  static constexpr size_t kDrainBytes = size_t{1} << 20;
  void Append(const Trace &trace, bool last, int64_t end_ns, std::string &out,
              const Drain &drain) override;

  // The tail: the rest of the file after the events appended so far, as of `trace`'s tables now.
  std::string Finish(const Trace &trace, int64_t end_ns) override;

 private:
  struct StepRow {
    uint32_t process;
    uint32_t track;  // kNoTrack: the process's only Steps row
  };
  struct Totals {
    uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0;
    bool any_time = false;
    int64_t first_ns = 0, last_ns = 0;
  };

  // The output pid of each process and tid of each track: their own unless another took it.
  struct RowIds {
    std::vector<int64_t> pids;  // per process of the model
    std::vector<int64_t> tids;  // per track
    // Per track: ,"pid":P,"tid":T,"ts": (what every event of the row repeats).
    std::vector<std::string> row_heads;
    absl::flat_hash_map<int64_t, int64_t> pid_owner;                      // output pid -> process
    absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> row_owner;  // (pid, tid) -> track
    int64_t highest_pid = 0;

    // Gives the processes and tracks added to `trace` since the last call their ids.
    void Update(const Trace &trace);
  };

  int64_t Pid(uint32_t process) const { return ids_.pids[process]; }
  int64_t Tid(uint32_t track) const { return ids_.tids[track]; }
  int64_t StepRowTid(const Trace &trace, const Step &step);
  void NoteTime(int64_t begin_ns, int64_t end_ns);
  // `name` as a quoted JSON string, escaped once per name of the table.
  std::string_view QuotedName(const Trace &trace, uint32_t name);
  // {"ph":"X","cat":C,"name":N,"pid":P,"tid":T,"ts": for `activity`, composed once per name, row
  // and category (up to kMostSpanOpenings of them), since every event repeats it.
  std::string_view SpanOpening(const Trace &trace, const Activity &activity);

  RowIds ids_;
  std::vector<std::string> quoted_names_;  // per name id; empty until first used
  static constexpr size_t kMostSpanOpenings = 1 << 16;
  absl::node_hash_map<uint64_t, std::string> span_openings_;  // name << 32 | track << 6 | category
  struct RecentOpening {
    uint64_t key = 0;
    std::string_view opening;  // into span_openings_
  };
  static constexpr size_t kRecentOpenings = 256;
  RecentOpening recent_openings_[kRecentOpenings];
  std::string spare_opening_;  // SpanOpening's answer once span_openings_ is full
  MicrosFormatter timestamps_;
  std::vector<StepRow> step_rows_;  // in the order they first appeared
  absl::flat_hash_map<uint64_t, size_t> step_row_index_;  // (process << 32 | track) -> step_rows_
  uint64_t events_ = 0;
  uint64_t next_range_id_ = 1;
  Totals totals_;
};

}  // namespace tfprof
