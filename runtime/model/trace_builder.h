// Builds a Trace from what a reader saw, after the "trackers" of Perfetto's trace processor
// (process_tracker, track_tracker, slice_tracker): a reader says what the file holds, the builder
// decides which Process and which row (Track) it goes to, pairs begins with ends, keeps the steps
// and the time extent, and finishes the model the same way for every format.
//
// How a reader uses it:
//   TraceBuilder builder(trace);
//   const uint32_t process = builder.ProcessFor(pid);      // or NamedProcess("GPU 0") without pids
//   const uint32_t row = builder.ThreadRow(process, tid);  // NamedRow/CounterRow for other rows
//   builder.NoteTime(ts);                                  // every timestamp the file holds
//   builder.AddActivity(activity);                         // activity.track = row
//   builder.AddStep(step);                                 // in any order
//   spans.Begin(row, open) ... if (auto open = spans.End(row)) ...  // OpenSpans<T>, for B/E events
//   spans.EndAll([&](uint32_t row, const T &open) { ... builder.end_ns() ... });  // killed writers
//   builder.Finish();  // steps sorted, unknown categories, LinkLaunches, AssignSteps
// Rows and processes made by the builder start with only their keys set (pid; process and tid):
// the `added` out-parameter tells the reader when to fill the rest (names, kinds, sort indices).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/model/trace.h"

namespace tfprof {

class TraceBuilder {
 public:
  // `trace` must outlive the builder; what it already holds stays (its tables are not indexed).
  explicit TraceBuilder(Trace *trace) : trace_(trace) {}

  Trace &trace() { return *trace_; }

  // ---- processes ----

  // The process with id `pid`, made when new (Process::pid = pid). `added`: set to whether it was.
  uint32_t ProcessFor(int64_t pid, bool *added = nullptr);
  // The process ProcessFor(pid) made, if it made one (nothing is made).
  std::optional<uint32_t> FindProcess(int64_t pid) const;

  // For formats without pids: the process called `name` in recording `group`, made when new with
  // that name and group, and pid = its index + first_pid (set_first_pid; 0 by default).
  uint32_t NamedProcess(std::string_view name, uint32_t group = 0, bool *added = nullptr);
  void set_first_pid(int64_t pid) { first_pid_ = pid; }

  // ---- rows ----

  // The row of thread (or stream, or other id) `tid` of `process`, made when new.
  uint32_t ThreadRow(uint32_t process, int64_t tid, bool *added = nullptr);
  // ThreadRow(ProcessFor(pid), tid) in one lookup once made: for formats whose every event
  // names its pid and tid.
  uint32_t ThreadRowByPid(int64_t pid, int64_t tid, bool *added = nullptr);
  // The row ThreadRowByPid(pid, tid) made, if it made one (nothing is made): for an event that
  // only ends what its row began.
  std::optional<uint32_t> FindThreadRowByPid(int64_t pid, int64_t tid) const;

  // The row called `name` in `process` (rows a format names rather than numbers), made when new
  // with that name, `kind` and `tid`.
  uint32_t NamedRow(uint32_t process, std::string_view name, TrackKind kind, int64_t tid,
                    bool *added = nullptr);

  // The counters-only row of `process` (TrackKind::kCounters, tid 0), made when new.
  uint32_t CounterRow(uint32_t process, bool *added = nullptr);

  // A row no key finds again (a thread whose id was reused, a format's anonymous track).
  uint32_t NewRow(uint32_t process, int64_t tid, std::string_view name = {},
                  TrackKind kind = TrackKind::kHostThread);

  // ---- content ----

  void AddActivity(const Activity &activity) { trace_->activities.push_back(activity); }
  // Index into Trace::gpu_details, for the Activity::detail of an activity of `kind`.
  uint32_t AddGpuDetail(ActivityKind kind, const GpuDetail &detail) {
    return trace_->gpu_details.Add(kind, detail);
  }
  // Steps come in any order: Finish() sorts them by begin (ties keep their order).
  void AddStep(const Step &step) { trace_->steps.push_back(step); }

  // ---- what the file said beyond the model (Trace::categories, file_args, flows) ----

  // The Activity::category for a category the file spelled `category`, where `kind`'s own is
  // `own` (kDefaultCategory when they agree, or past 255 categories).
  uint8_t Category(std::string_view category, std::string_view own);
  // Index into Trace::file_args (for Activity::detail, Step::args) of `members`.
  uint32_t AddFileArgs(std::string_view members) { return trace_->file_args.Add(members); }
  void AddFlow(const Flow &flow) { trace_->flows.push_back(flow); }

  // A Chrome trace category no known tool writes: counted per event, listed in
  // Trace::unknown_categories (sorted) by Finish(). Forget: events that turned out to be known.
  void NoteUnknownCategory(std::string_view category) {
    ++unknown_categories_[std::string(category)];
  }
  void ForgetUnknownCategory(std::string_view category) {
    unknown_categories_.erase(std::string(category));
  }

  // ---- time extent ----

  // Every timestamp the file holds: spans still open at its end end at the latest (end_ns()).
  void NoteTime(int64_t ns) {
    if (!has_time_ || ns > max_ns_) max_ns_ = ns;
    if (!has_time_ || ns < min_ns_) min_ns_ = ns;
    has_time_ = true;
  }
  bool has_time() const { return has_time_; }
  int64_t begin_ns() const { return min_ns_; }  // 0 when no time was noted
  int64_t end_ns() const { return max_ns_; }

  // ---- the end ----

  // Sorts the steps by begin, lists the unknown categories, links launch calls to the GPU work
  // they launched (launch_links.h), then gives every activity its step (step_index.h). Call once,
  // after the last activity and step, also when reading stopped early at damage.
  void Finish();

 private:
  uint32_t MakeProcess(Process process);
  uint32_t MakeRow(Track row);

  Trace *trace_;
  int64_t first_pid_ = 0;
  absl::flat_hash_map<int64_t, uint32_t> process_by_pid_;
  absl::flat_hash_map<std::pair<uint32_t, std::string>, uint32_t> process_by_name_;
  absl::flat_hash_map<std::pair<uint32_t, int64_t>, uint32_t> row_by_tid_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> row_by_pid_tid_;  // ThreadRowByPid's
  absl::flat_hash_map<std::pair<uint32_t, std::string>, uint32_t> row_by_name_;
  absl::flat_hash_map<uint32_t, uint32_t> counter_rows_;
  std::map<std::string, uint64_t> unknown_categories_;  // events each
  absl::flat_hash_map<std::string, uint8_t> category_index_;  // Trace::categories, + 1
  bool has_time_ = false;
  int64_t min_ns_ = 0;
  int64_t max_ns_ = 0;
};

// Begins waiting for their ends, one stack per row: an end closes the row's innermost open span
// (Perfetto's SliceTracker). `Span` is whatever the reader keeps of a begin.
template <typename Span>
class OpenSpans {
 public:
  void Begin(uint32_t row, Span span) {
    if (row >= open_.size()) open_.resize(row + 1);
    open_[row].push_back(std::move(span));
  }

  // The innermost span open on `row`, no longer open; nullopt for an end whose begin the file
  // does not hold.
  std::optional<Span> End(uint32_t row) {
    if (row >= open_.size() || open_[row].empty()) return std::nullopt;
    std::optional<Span> span(std::move(open_[row].back()));
    open_[row].pop_back();
    return span;
  }

  size_t open_on(uint32_t row) const { return row < open_.size() ? open_[row].size() : 0; }

  // The spans open on `row`, outermost first, no longer open (a reader that must set a row's
  // events aside, e.g. to sort them before pairing).
  std::vector<Span> Take(uint32_t row) {
    std::vector<Span> spans;
    if (row < open_.size()) spans.swap(open_[row]);
    return spans;
  }

  // Spans never ended (a writer killed mid-trace), row by row, outermost first:
  // `emit(row, span)` for each; none is open afterwards.
  template <typename Emit>
  void EndAll(Emit &&emit) {
    for (uint32_t row = 0; row < open_.size(); ++row) {
      for (const Span &span : open_[row]) emit(row, span);
      open_[row].clear();
    }
  }

 private:
  std::vector<std::vector<Span>> open_;  // per row
};

}  // namespace tfprof
