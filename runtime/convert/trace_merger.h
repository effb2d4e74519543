// Merges traces (runs, steps, processes, ranks) into one Trace on one wall-clock timeline:
// each input's processes become a group named for the input ("rank R · HOST · pid P" with what it
// knows, else its file name), its pids renumbered only where they would collide, its steps kept.
// Losses are summed over the inputs that state them; TraceLosses::unreported_inputs counts the
// others.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "runtime/model/trace.h"

namespace tfprof {

enum class MergeAlignment {
  // Wall-clock time (Trace::wall_offset_ns). An input without it has its first event put at
  // the first event of the earliest input that has it (Add() returns a note saying so).
  kWallClock,
  // Every input's first event at the same instant: runs recorded at different times side by side.
  kFirstEvent,
};

// "rank 3 · node-7 · pid 4242" from what the trace knows (the parts it does not know are left
// out; a Chrome trace without tfprof's header gives its host process's pid), else the file name
// of its path.
std::string InputLabel(const Trace &trace);

class TraceMerger {
 public:
  // With `fold`, the inputs after the first are more of the first input's recording (TensorFlow's
  // profile of the same process, taken beside tfprof's session): their host process's threads
  // join the first input's main process (a thread of the same id is the same row), their other
  // processes (GPUs) join its group, and their steps are kept only when the first input marked
  // none.
  explicit TraceMerger(MergeAlignment alignment, bool fold = false)
      : alignment_(alignment), fold_(fold) {}

  // Moves `input` in. Returns a note for the user when it had to be aligned by its first event
  // although wall-clock alignment was asked for.
  std::optional<std::string> Add(Trace input);

  // The merged trace: timestamps are nanoseconds since the earliest input's first event, and
  // wall_offset_ns says which Unix time that is (unset when no input knew wall-clock time, or
  // with kFirstEvent). Process names carry the group labels.
  Trace Finish();

  // After Finish(): a note for the user when wall-clock alignment left an hour or more between
  // inputs (runs recorded at different times, which --align start compares side by side).
  std::optional<std::string> FarApartNote() const;

  // JSON array describing each input: path, format, label, what it knew, how it was aligned and
  // the shift applied to its timestamps (ns).
  std::string SourcesJson() const;

 private:
  struct Group {
    std::string path;
    std::string format_name;  // InputFormatName()
    std::string label;
    std::optional<int64_t> pid;
    std::string hostname;
    std::optional<int64_t> rank;
    std::optional<int64_t> wall_offset_ns;
    bool wall_aligned = false;
    int64_t first_ns = 0;  // its first event, on its own clock
    int64_t last_ns = 0;   // its last event's end, on its own clock
    int64_t shift_ns = 0;  // added to its timestamps, final after Finish()
    size_t activities_begin = 0, activities_end = 0;
    size_t steps_begin = 0, steps_end = 0;
    size_t details_begin = 0, details_end = 0;
    size_t counters_begin = 0, counters_end = 0;
    size_t flows_begin = 0, flows_end = 0;
  };
  struct ProcessOrigin {
    size_t group = 0;
    bool main = false;  // the recording process: named by the label alone
    std::string name;   // its own name in the input
    int64_t pid = 0;    // its pid in the input
  };

  MergeAlignment alignment_;
  bool fold_ = false;
  std::optional<uint32_t> first_main_;  // fold: the first input's main process in merged_
  Trace merged_;
  std::vector<Group> groups_;
  std::vector<ProcessOrigin> process_origins_;
  absl::flat_hash_set<int64_t> pids_taken_;
  int64_t highest_pid_ = 0;
  uint32_t next_group_ = 0;  // Process::group of the next input's processes
};

}  // namespace tfprof
