#include "runtime/export/chrome_trace_writer.h"

#include <charconv>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/gpu_chrome_rows.h"
#include "runtime/export/json_text.h"
#include "runtime/steps.h"
#include "runtime/string_view_bridge.h"
#include "runtime/track_walker.h"
#include "tfprof/tfprof.h"

namespace tfprof {

namespace {

// Step rows, and threads whose OS id an earlier thread of the session already had, get row ids no
// OS thread can have (Linux tids stay below 2^22), so no two threads ever share a row.
constexpr int64_t kStepRowTidBase = 2000000000;
constexpr int64_t kReusedTidRowBase = 1000000000;

std::vector<int64_t> RowTids(const SessionLog &model) {
  std::vector<int64_t> tids;
  absl::flat_hash_set<int64_t> seen;
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    const int64_t os_tid = model.tracks[track].os_tid;
    tids.push_back(seen.insert(os_tid).second ? os_tid
                                              : kReusedTidRowBase + static_cast<int64_t>(track));
  }
  return tids;
}

// Writes events as JSON objects separated by commas, formatting straight into the sink's buffer.
class EventWriter {
 public:
  EventWriter(OutputSink &sink, int64_t pid, const std::vector<std::string> &quoted_names)
      : sink_(sink), quoted_names_(quoted_names) {
    pid_text_ = absl::StrCat(pid);
  }

  void Metadata(std::string_view kind, int64_t tid, std::string_view arg_key,
                std::string_view json_value) {
    Begin();
    std::string text = absl::StrCat("{\"ph\":\"M\",\"pid\":", pid_text_, ",\"tid\":", tid,
                                    ",\"name\":\"", ToAbsl(kind), "\",\"args\":{\"",
                                    ToAbsl(arg_key), "\":", ToAbsl(json_value), "}}");
    sink_.Write(text);
  }

  // A complete span. `step` < 0 means "in no step"; `quoted_name` is already JSON-quoted.
  void Complete(std::string_view category, std::string_view quoted_name, int64_t tid,
                int64_t begin_ns, int64_t end_ns, const StepInterval *step, bool incomplete,
                std::string_view extra_args = {}) {
    Begin();
    sink_.Write("{\"ph\":\"X\",\"cat\":\"");
    sink_.Write(category);
    sink_.Write("\",\"name\":");
    sink_.Write(quoted_name);
    char *out = sink_.Reserve(256);
    char *cursor = AppendPidTidTs(out, tid, begin_ns);
    cursor = Append(cursor, ",\"dur\":");
    cursor += FormatMicros(end_ns - begin_ns, cursor);
    cursor = AppendArgs(cursor, step, incomplete, extra_args);
    *cursor++ = '}';
    sink_.Commit(static_cast<size_t>(cursor - out));
  }

  void Instant(uint32_t name, int64_t tid, int64_t ns, const StepInterval *step) {
    Begin();
    sink_.Write("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
    sink_.Write(quoted_names_[name]);
    char *out = sink_.Reserve(256);
    char *cursor = AppendPidTidTs(out, tid, ns);
    cursor = AppendArgs(cursor, step, false, {});
    *cursor++ = '}';
    sink_.Commit(static_cast<size_t>(cursor - out));
  }

  // One end of a range as an async slice: "b" at its start, "e" at its end (possibly on another
  // thread; the viewers pair them by category and id).
  void RangeEdge(bool start, uint32_t name, uint64_t range_id, int64_t tid, int64_t ns,
                 const StepInterval *step, bool incomplete) {
    Begin();
    sink_.Write(start ? "{\"ph\":\"b\"" : "{\"ph\":\"e\"");
    sink_.Write(",\"cat\":\"range\",\"name\":");
    sink_.Write(quoted_names_[name]);
    char *out = sink_.Reserve(256);
    char *cursor = Append(out, ",\"id\":");
    cursor = std::to_chars(cursor, cursor + 24, range_id).ptr;
    cursor = AppendPidTidTs(cursor, tid, ns);
    cursor = AppendArgs(cursor, step, incomplete, {});
    *cursor++ = '}';
    sink_.Commit(static_cast<size_t>(cursor - out));
  }

  void Counter(uint32_t name, int64_t tid, int64_t ns, double value) {
    Begin();
    sink_.Write("{\"ph\":\"C\",\"cat\":\"counter\",\"name\":");
    sink_.Write(quoted_names_[name]);
    char *out = sink_.Reserve(256);
    char *cursor = AppendPidTidTs(out, tid, ns);
    cursor = Append(cursor, ",\"args\":{\"value\":");
    cursor += FormatDouble(value, cursor);
    cursor = Append(cursor, "}}");
    sink_.Commit(static_cast<size_t>(cursor - out));
  }

 private:
  // `,"pid":P,"tid":T,"ts":US` into the sink's reserved room.
  char *AppendPidTidTs(char *cursor, int64_t tid, int64_t ns) const {
    cursor = Append(cursor, ",\"pid\":");
    cursor = Append(cursor, pid_text_);
    cursor = Append(cursor, ",\"tid\":");
    cursor = std::to_chars(cursor, cursor + 24, tid).ptr;
    cursor = Append(cursor, ",\"ts\":");
    return cursor + FormatMicros(ns, cursor);
  }

  static char *Append(char *cursor, std::string_view text) {
    std::memcpy(cursor, text.data(), text.size());
    return cursor + text.size();
  }

  static char *AppendArgs(char *cursor, const StepInterval *step, bool incomplete,
                          std::string_view extra_args) {
    if (step == nullptr && !incomplete && extra_args.empty()) return cursor;
    cursor = Append(cursor, ",\"args\":{");
    bool first = true;
    if (step != nullptr) {
      cursor = Append(cursor, "\"step\":");
      cursor = std::to_chars(cursor, cursor + 24, step->step).ptr;
      first = false;
    }
    if (incomplete) {
      cursor = Append(cursor, first ? "\"incomplete\":true" : ",\"incomplete\":true");
      first = false;
    }
    if (!extra_args.empty()) {
      if (!first) *cursor++ = ',';
      cursor = Append(cursor, extra_args);
    }
    *cursor++ = '}';
    return cursor;
  }

  void Begin() {
    if (!first_) sink_.Write(",\n");
    first_ = false;
  }

  OutputSink &sink_;
  const std::vector<std::string> &quoted_names_;
  std::string pid_text_;
  bool first_ = true;
};

// Every range's start: its name and row, found before the rows are written because an end may
// be recorded on a thread written before the thread that started it.
struct RangeStarts : TrackVisitor {
  struct Start {
    uint32_t name;
    int64_t tid;
    bool ended = false;
  };
  absl::flat_hash_map<uint64_t, Start> by_id;
  int64_t tid = 0;

  void OnRangeStart(uint32_t name, uint64_t range_id, int64_t) {
    by_id.emplace(range_id, Start{name, tid});
  }
};

// Streams one thread's spans, instants, counters and range edges, tagging each with its step.
struct ThreadRowWriter : TrackVisitor {
  EventWriter *writer;
  const StepLookup *steps;
  const std::vector<std::string> *quoted_names;
  RangeStarts *ranges;
  int64_t tid;

  void OnRangeStart(uint32_t name, uint64_t range_id, int64_t ns) {
    writer->RangeEdge(true, name, range_id, tid, ns, steps->Find(ns), false);
  }
  void OnRangeEnd(uint64_t range_id, int64_t ns) {
    auto start = ranges->by_id.find(range_id);
    if (start == ranges->by_id.end() || start->second.ended) return;  // started before the session
    start->second.ended = true;
    writer->RangeEdge(false, start->second.name, range_id, tid, ns, steps->Find(ns), false);
  }

  void OnSpan(uint32_t name, int64_t begin_ns, int64_t end_ns, uint32_t, bool incomplete) {
    writer->Complete("user_annotation", (*quoted_names)[name], tid, begin_ns, end_ns,
                     steps->Find(begin_ns), incomplete);
  }
  void OnInstant(uint32_t name, int64_t ns) { writer->Instant(name, tid, ns, steps->Find(ns)); }
  void OnCounter(uint32_t name, int64_t ns, double value) {
    writer->Counter(name, tid, ns, value);
  }
};

// "dropped_events" counts host events only; the GPU's losses sit beside it and in "tfprof.gpu".
std::string CommandLineJson(const std::vector<std::string> &arguments) {
  std::string json = "[";
  for (const std::string &argument : arguments) {
    if (json.size() > 1) json += ',';
    json += QuotedJson(argument);
  }
  return json + "]";
}

// The process's rank in a distributed job, from the variables launchers set (the ones the preload
// library's %r reads): the first one set; none set means a single process, rank 0. Empty when
// that variable is not a whole number.
std::string RankFromEnvironment() {
  for (const char *name : {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"}) {
    const char *value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    const std::string_view text(value);
    uint32_t rank = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (error != std::errc() || end != text.data() + text.size()) return {};
    return absl::StrCat(rank);
  }
  return "0";
}

// Kineto's "distributedInfo". Holistic Trace Analysis finds each file's rank with the pattern
// `"rank":\s+(\d+)`, so the space after the colon is needed.
std::string DistributedInfoJson() {
  const std::string rank = RankFromEnvironment();
  if (rank.empty()) return {};
  return absl::StrCat("\"distributedInfo\":{\"rank\": ", rank, "},\n");
}

void WriteHeader(const SessionLog &model, const ExportContext &context, OutputSink &sink) {
  const LossCounters &losses = context.losses;
  sink.Write(absl::StrCat(
      "{\"displayTimeUnit\":\"ns\",\n\"dropped_events\":", losses.dropped,
      ",\n\"gpu_records_dropped\":", model.gpu.losses.records_dropped, ",\n",
      DistributedInfoJson(), GpuDevicePropertiesJson(model.gpu), "\"tfprof\":{\"version\":", QuotedJson(prof_version_string()),
      ",\"clock\":", QuotedJson(ClockSourceName(context.clock)),
      ",\"pid\":", context.pid, ",\"command_line\":", CommandLineJson(context.command_line),
      ",\"start_time_unix_ns\":", context.start_wall_ns,
      ",\"start_time_monotonic_ns\":", context.start_monotonic_ns,
      ",\"end_time_monotonic_ns\":", context.end_ns,
      ",\"events_recorded\":", context.events_recorded,
      ",\"unmatched_span_ends\":", losses.unmatched_span_ends,
      ",\"unmatched_step_ends\":", losses.unmatched_step_ends,
      ",\"memory_dropped_events\":", losses.memory_dropped,
      ",\"discarded_events\":", losses.discarded,
      ",\"gpu\":", GpuSummaryJson(model.gpu),
      ",\"timestamps\":\"CLOCK_MONOTONIC microseconds; add start_time_unix_ns - "
      "start_time_monotonic_ns (in ns) for wall-clock time\"},\n\"traceEvents\":[\n"));
}

}  // namespace

absl::Status WriteChromeTrace(const SessionLog &model, const ExportContext &context,
                              OutputSink &sink) {
  std::vector<std::string> quoted_names;
  quoted_names.reserve(model.names.size());
  for (uint32_t id = 0; id < model.names.size(); ++id) {
    quoted_names.push_back(QuotedJson(model.names.Get(id)));
  }
  const std::vector<StepInterval> steps = CollectSteps(model, context.converter, context.end_ns);
  const StepLookup step_lookup(steps);

  WriteHeader(model, context, sink);
  EventWriter writer(sink, context.pid, quoted_names);
  writer.Metadata("process_name", 0, "name", QuotedJson(context.process_name));
  writer.Metadata("process_sort_index", 0, "sort_index", "0");

  // Step rows first (sort index 0..), then threads in the order they first recorded.
  std::vector<bool> marks_steps(model.tracks.size(), false);
  for (const StepInterval &step : steps) marks_steps[step.track] = true;
  const size_t step_rows = static_cast<size_t>(std::count(marks_steps.begin(), marks_steps.end(), true));
  int64_t sort_index = 0;
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    if (!marks_steps[track]) continue;
    const int64_t tid = kStepRowTidBase + static_cast<int64_t>(track);
    const std::string label =
        step_rows == 1 ? "Steps" : absl::StrCat("Steps (", TrackLabel(model.tracks[track]), ")");
    writer.Metadata("thread_name", tid, "name", QuotedJson(label));
    writer.Metadata("thread_sort_index", tid, "sort_index", absl::StrCat(sort_index++));
  }
  const std::vector<int64_t> row_tids = RowTids(model);
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    writer.Metadata("thread_name", row_tids[track], "name", QuotedJson(TrackLabel(model.tracks[track])));
    writer.Metadata("thread_sort_index", row_tids[track], "sort_index", absl::StrCat(sort_index++));
  }

  for (const StepInterval &step : steps) {
    const std::string step_arg = absl::StrCat("\"step\":", step.step);
    writer.Complete("step", QuotedJson(absl::StrCat("step ", step.step)),
                    kStepRowTidBase + static_cast<int64_t>(step.track), step.begin_ns, step.end_ns,
                    nullptr, step.incomplete, step_arg);
  }
  RangeStarts ranges;
  if (model.has_ranges) {
    for (size_t track = 0; track < model.tracks.size(); ++track) {
      ranges.tid = row_tids[track];
      WalkTrack(model.tracks[track], context.converter, context.end_ns, ranges);
    }
  }
  for (size_t track = 0; track < model.tracks.size(); ++track) {
    ThreadRowWriter row;
    row.writer = &writer;
    row.steps = &step_lookup;
    row.quoted_names = &quoted_names;
    row.ranges = &ranges;
    row.tid = row_tids[track];
    WalkTrack(model.tracks[track], context.converter, context.end_ns, row);
  }
  for (const auto &[range_id, start] : ranges.by_id) {
    if (start.ended) continue;
    writer.RangeEdge(false, start.name, range_id, start.tid, context.end_ns,
                     step_lookup.Find(context.end_ns), true);
  }
  HostRowLayout host;
  host.track_tids = &row_tids;
  host.quoted_names = &quoted_names;
  host.next_sort_index = sort_index;
  WriteGpuChromeRows(model, context, steps, host, sink);
  sink.Write("\n]}\n");
  return absl::OkStatus();
}

}  // namespace tfprof
