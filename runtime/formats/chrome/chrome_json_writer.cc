#include "runtime/formats/chrome/chrome_json_writer.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/model/event_args.h"
#include "runtime/model/gpu_names.h"
#include "runtime/model/trace_info_fields.h"
#include "runtime/formats/chrome/chrome_categories.h"
#include "runtime/formats/chrome/chrome_json_header.h"
#include "runtime/common/json_event_text.h"
#include "runtime/common/json_text.h"
#include "runtime/common/string_view_bridge.h"
#include "tfprof/tfprof.h"

namespace tfprof {

namespace {

// Rows no thread can have (Linux tids stay below 2^22): Steps rows at 2e9 (+ the marking
// track), and rows renumbered because another row of their process took their tid.
constexpr int64_t kStepsRowTid = 2000000000;
constexpr int64_t kRenumberedRowTidBase = 1000000000;


// The members of an "args" object, comma-separated as they are added.
class Args {
 public:
  explicit Args(EventText &text) : text_(text) {}
  ~Args() {
    if (open_) text_.Add('}');
  }
  Args(const Args &) = delete;
  Args &operator=(const Args &) = delete;

  void Int(std::string_view key, int64_t value) {
    Key(key);
    text_.Int(value);
  }
  void Uint(std::string_view key, uint64_t value) {
    Key(key);
    text_.Uint(value);
  }
  void Text(std::string_view key, std::string_view value) {
    Key(key);
    text_.JsonString(value);
  }
  void Raw(std::string_view key, std::string_view json) {
    Key(key);
    text_.Add(json);
  }
  // Kept file args (Trace::file_args): their members as they were.
  void FileMembers(std::string_view members) {
    ForEachFileArg(members, [&](std::string_view member, EventArg) {
      text_.Add(open_ ? std::string_view(",") : std::string_view(",\"args\":{"));
      open_ = true;
      text_.Add(member);
    });
  }
  void Triple(std::string_view key, const int32_t (&values)[3]) {
    Key(key);
    for (int axis = 0; axis < 3; ++axis) {
      text_.Add(axis == 0 ? '[' : ',');
      text_.Int(values[axis]);
    }
    text_.Add(']');
  }

 private:
  // "key": the caller adds the value right after.
  void Key(std::string_view key) {
    if (open_) {
      text_.Literal(",\"");
    } else {
      text_.Literal(",\"args\":{\"");
      open_ = true;
    }
    text_.AddShort(key);
    text_.Literal("\":");
  }

  EventText &text_;
  bool open_ = false;
};

// WriteActivityArgs()'s output (runtime/model/event_args.h): the args under the table's keys,
// less those the file's own args (written after them) hold.
class ActivityArgs {
 public:
  ActivityArgs(Args &args, const Trace &trace, uint64_t file_keys)
      : args_(args), trace_(trace), file_keys_(file_keys) {}

  void Int(EventArg arg, int64_t value) {
    if (Mine(arg)) args_.Int(KeyOf(arg), value);
  }
  void Uint(EventArg arg, uint64_t value) {
    if (Mine(arg)) args_.Uint(KeyOf(arg), value);
  }
  void Text(EventArg arg, std::string_view value) {
    if (Mine(arg)) args_.Text(KeyOf(arg), value);
  }
  void Triple(EventArg arg, const int32_t (&values)[3]) {
    if (Mine(arg)) args_.Triple(KeyOf(arg), values);
  }
  void Double(EventArg arg, double value) {
    if (!Mine(arg)) return;
    char number[32];
    args_.Raw(KeyOf(arg), std::string_view(number, FormatDouble(value, number)));
  }
  void Name(EventArg arg, uint32_t name) {
    if (Mine(arg)) args_.Text(KeyOf(arg), trace_.names.Get(name));
  }
  void True(EventArg arg) {
    if (Mine(arg)) args_.Raw(KeyOf(arg), "true");
  }

 private:
  bool Mine(EventArg arg) const {
    return (file_keys_ >> static_cast<unsigned>(arg) & 1) == 0;
  }

  Args &args_;
  const Trace &trace_;
  uint64_t file_keys_;
};

// The file args kept for `activity` (Trace::file_args): a host span's, or its GPU detail's.
std::string_view KeptFileArgs(const Trace &trace, const Activity &activity) {
  if (DetailIsFileArgs(activity.kind)) return FileArgsOf(trace, activity);
  if (trace.gpu_file_args.empty() || activity.kind == ActivityKind::kRange) return {};
  const auto found = trace.gpu_file_args.find(activity.detail);
  return found == trace.gpu_file_args.end() ? std::string_view()
                                            : trace.file_args.Get(found->second);
}

// Where the flow arrow of a correlation id ends: its earliest GPU work of the batch.
struct FlowEnd {
  int64_t ns;
  int64_t pid;
  int64_t tid;
};

}  // namespace

void ChromeJsonWriter::RowIds::Update(const Trace &trace) {
  for (size_t process = pids.size(); process < trace.processes.size(); ++process) {
    int64_t pid = trace.processes[process].pid;
    if (pid_owner.contains(pid)) pid = highest_pid + 1;
    pid_owner.emplace(pid, static_cast<int64_t>(process));
    highest_pid = std::max(highest_pid, pid);
    pids.push_back(pid);
  }
  for (size_t index = tids.size(); index < trace.tracks.size(); ++index) {
    const Track &track = trace.tracks[index];
    const int64_t pid = track.process < pids.size() ? pids[track.process] : 0;
    int64_t tid = track.tid;
    const bool reserved = tid >= kStepsRowTid;
    if (reserved || !row_owner.emplace(std::make_pair(pid, tid), static_cast<int64_t>(index)).second) {
      tid = kRenumberedRowTidBase + static_cast<int64_t>(index);
    }
    tids.push_back(tid);
    row_heads.push_back(absl::StrCat(",\"pid\":", pid, ",\"tid\":", tid, ",\"ts\":"));
  }
}

std::string_view ChromeJsonWriter::QuotedName(const Trace &trace, uint32_t name) {
  if (name >= quoted_names_.size()) quoted_names_.resize(trace.names.size());
  std::string &quoted = quoted_names_[name];
  if (quoted.empty()) AppendJsonString(quoted, trace.names.Get(name));
  return quoted;
}

std::string_view ChromeJsonWriter::SpanOpening(const Trace &trace, const Activity &activity) {
  const auto compose = [&]() {
    const std::string_view file_category = FileCategory(trace, activity.category);
    return absl::StrCat("{\"ph\":\"X\",\"cat\":",
                        file_category.empty()
                            ? absl::StrCat("\"", ToAbsl(CategoryOfActivity(activity.kind,
                                                                          activity.flags)), "\"")
                            : QuotedJson(file_category),
                        ",\"name\":", ToAbsl(QuotedName(trace, activity.name)),
                        ids_.row_heads[activity.track]);
  };
  // The key packs name, track and category (the kind's, or the file's); rare rows past its range
  // are composed each time.
  const uint32_t category_code = (uint32_t{activity.category} << 6) |
                                 (uint32_t{static_cast<uint8_t>(activity.kind)} * 2 +
                                  ((activity.flags & kActivityDriverApi) != 0 ? 1u : 0u));
  static_assert(static_cast<int>(ActivityKind::kOverhead) * 2 + 1 < 64, "kind codes fit 6 bits");
  if (activity.track >= (1u << 18)) {
    spare_opening_ = compose();
    return spare_opening_;
  }
  const uint64_t key =
      (uint64_t{activity.name} << 32) | (uint64_t{activity.track} << 14) | category_code;
  // Most events find their opening in a small direct-mapped table before the hash map.
  RecentOpening &recent = recent_openings_[(key ^ (key >> 29)) % kRecentOpenings];
  if (recent.key == key && !recent.opening.empty()) return recent.opening;
  auto found = span_openings_.find(key);
  if (found == span_openings_.end()) {
    if (span_openings_.size() >= kMostSpanOpenings) {
      spare_opening_ = compose();
      return spare_opening_;
    }
    found = span_openings_.emplace(key, compose()).first;
  }
  recent.key = key;
  recent.opening = found->second;  // node_hash_map: the text stays where it is
  return recent.opening;
}

int64_t ChromeJsonWriter::StepRowTid(const Trace &trace, const Step &step) {
  const uint32_t track = step.track < trace.tracks.size() ? step.track : kNoTrack;
  const uint64_t key = (uint64_t{step.process} << 32) | track;
  if (!step_row_index_.contains(key)) {
    step_row_index_.emplace(key, step_rows_.size());
    step_rows_.push_back(StepRow{step.process, track});
  }
  return track == kNoTrack ? kStepsRowTid : kStepsRowTid + static_cast<int64_t>(track);
}

void ChromeJsonWriter::NoteTime(int64_t begin_ns, int64_t end_ns) {
  if (!totals_.any_time) {
    totals_.first_ns = begin_ns;
    totals_.last_ns = end_ns;
    totals_.any_time = true;
    return;
  }
  totals_.first_ns = std::min(totals_.first_ns, begin_ns);
  totals_.last_ns = std::max(totals_.last_ns, end_ns);
}

void ChromeJsonWriter::Append(const Trace &trace, bool /*last*/, int64_t /*end_ns*/,
                              std::string &out, const Drain &drain) {
  ids_.Update(trace);
  // Every event starts here, in its fresh `text`: the output drained when full, then the comma.
  const auto begin_event = [&](EventText &text) {
    if (drain && out.size() >= kDrainBytes) drain(text.Flushed());
    if (events_++ != 0) text.Literal(",\n");
  };
  // Starts an event in `text` whose opening `{"ph":P,...,"ts":` is known: ts[, dur] follow.
  const auto head_with = [&](EventText &text, std::string_view opening, int64_t ns,
                             const int64_t *end_ns) {
    begin_event(text);
    text.Add(opening);
    text.Timestamp(ns, timestamps_);
    if (end_ns != nullptr) {
      text.Literal(",\"dur\":");
      text.Micros(std::max<int64_t>(*end_ns - ns, 0));
    }
  };
  // Starts an event in `text`: {"ph":P,"cat":C,"name":N,"pid":..,"tid":..,"ts":..[,"dur":..]
  const auto head = [&](EventText &text, std::string_view phase, std::string_view category,
                        std::string_view quoted_name, std::string_view row_head, int64_t ns,
                        const int64_t *end_ns = nullptr) {
    // A file's category is quoted as any string: it may hold a quote or a backslash.
    const std::string category_text =
        category.empty() ? "" : absl::StrCat(",\"cat\":", QuotedJson(category));
    head_with(text,
              absl::StrCat("{\"ph\":\"", ToAbsl(phase), "\"", category_text, ",\"name\":",
                           ToAbsl(quoted_name), ToAbsl(row_head)),
              ns, end_ns);
  };

  for (const Step &step : trace.steps) {
    if (step.process >= ids_.pids.size()) continue;
    NoteTime(step.begin_ns, step.end_ns);
    if (step.name < trace.names.size()) {
      // A step the file drew as its own span (PyTorch's ProfilerStep#N): as it was, on the row
      // that marked it, where tools that know the producer look for it.
      const std::string_view file_category = FileCategory(trace, step.category);
      const bool on_row = step.track < ids_.tids.size();
      EventText text(out);
      head(text, "X", file_category.empty() ? std::string_view("step") : file_category,
           QuotedName(trace, step.name),
           on_row ? std::string_view(ids_.row_heads[step.track])
                  : std::string_view(absl::StrCat(",\"pid\":", Pid(step.process), ",\"tid\":",
                                                  StepRowTid(trace, step), ",\"ts\":")),
           step.begin_ns, &step.end_ns);
      {
        Args args(text);
        if (file_category.empty()) {
          // Under tfprof's own category, the args that make it a step of its thread.
          args.Int(KeyOf(EventArg::kStep), step.number);
          if (on_row) args.Int(KeyOf(EventArg::kThread), ids_.tids[step.track]);
        }
        if (step.incomplete) args.Raw(KeyOf(EventArg::kIncomplete), "true");
        if (step.args < trace.file_args.size()) args.FileMembers(trace.file_args.Get(step.args));
      }
      text.Add('}');
      continue;
    }
    EventText text(out);
    head(text, "X", "step", QuotedJson(absl::StrCat("step ", step.number)),
         absl::StrCat(",\"pid\":", Pid(step.process), ",\"tid\":", StepRowTid(trace, step), ",\"ts\":"),
         step.begin_ns, &step.end_ns);
    {
      Args args(text);
      args.Int(KeyOf(EventArg::kStep), step.number);
      // The thread that marked it, which the summary judges input wait on.
      if (step.track < trace.tracks.size()) args.Int(KeyOf(EventArg::kThread), ids_.tids[step.track]);
      if (step.incomplete) args.Raw(KeyOf(EventArg::kIncomplete), "true");
    }
    text.Add('}');
  }

  // Each correlation id's earliest GPU work, where its launch's flow arrow ends; none when the
  // file's own launch arrows were kept (they are written as they were).
  const bool kept_launch_flows =
      trace.flows_as_read || std::any_of(trace.flows.begin(), trace.flows.end(), [](const Flow &flow) {
        return flow.category == kDefaultCategory;
      });
  absl::flat_hash_map<uint32_t, FlowEnd> flow_ends;
  for (const Activity &activity : trace.activities) {
    if (kept_launch_flows) break;
    const GpuDetail *work = IsGpuWork(activity.kind) ? trace.gpu_details.Work(activity.detail)
                                                     : nullptr;
    if (work == nullptr) continue;
    const GpuDetail &detail = *work;
    if ((detail.fields & kGpuHasCorrelation) == 0 || activity.track >= ids_.tids.size()) continue;
    const FlowEnd end{activity.begin_ns, Pid(trace.tracks[activity.track].process), Tid(activity.track)};
    auto [found, added] = flow_ends.try_emplace(detail.correlation, end);
    if (!added && end.ns < found->second.ns) found->second = end;
  }

  for (const Activity &activity : trace.activities) {
    if (activity.track >= ids_.tids.size()) continue;
    const Track &track = trace.tracks[activity.track];
    if (track.process >= ids_.pids.size()) continue;
    const std::optional<GpuDetail> gpu_detail = ActivityGpuDetail(trace, activity);
    const GpuDetail *detail = gpu_detail ? &*gpu_detail : nullptr;
    const bool incomplete = (activity.flags & kActivityIncomplete) != 0;
    NoteTime(activity.begin_ns, activity.end_ns);
    switch (activity.kind) {
      case ActivityKind::kInstant: {
        const std::string_view name = QuotedName(trace, activity.name);
        EventText text(out);
        begin_event(text);
        text.Add("{\"ph\":\"i\",\"s\":\"t\",\"cat\":");
        const std::string_view file_category = FileCategory(trace, activity.category);
        text.Add(file_category.empty() ? std::string_view("\"user_annotation\"")
                                       : std::string_view(QuotedJson(file_category)));
        text.Add(",\"name\":");
        text.Add(name);
        text.Add(ids_.row_heads[activity.track]);
        text.Micros(activity.begin_ns);
        {
          Args args(text);
          if (activity.step != kNoStep) args.Int(KeyOf(EventArg::kStep), activity.step);
          args.FileMembers(FileArgsOf(trace, activity));
        }
        text.Add('}');
        continue;
      }
      case ActivityKind::kRange: {
        const std::string_view name = QuotedName(trace, activity.name);
        const uint64_t id = next_range_id_++;
        // Its end goes on the row that recorded it (a range may end on another thread).
        const uint32_t end_track =
            activity.detail < trace.tracks.size() ? activity.detail : activity.track;
        for (const bool start : {true, false}) {
          const uint32_t row = start ? activity.track : end_track;
          EventText text(out);
          head(text, start ? "b" : "e", "range", name, ids_.row_heads[row],
               start ? activity.begin_ns : activity.end_ns);
          text.Add(",\"id\":");
          text.Uint(id);
          {
            Args args(text);
            if (activity.step != kNoStep) args.Int(KeyOf(EventArg::kStep), activity.step);
            if (!start && incomplete) args.Raw(KeyOf(EventArg::kIncomplete), "true");
          }
          text.Add('}');
        }
        continue;
      }
      default:
        break;
    }
    {
      EventText text(out);
      head_with(text, SpanOpening(trace, activity), activity.begin_ns, &activity.end_ns);
      {
        Args args(text);
        const std::string_view file_args = KeptFileArgs(trace, activity);
        uint64_t file_keys = file_args.empty() ? 0 : FileArgKeys(file_args);
        // A file's "shared memory" came without its parts: tfprof's would be zeros it made up.
        if ((file_keys >> static_cast<unsigned>(EventArg::kSharedMemory) & 1) != 0) {
          file_keys |= uint64_t{1} << static_cast<unsigned>(EventArg::kStaticShared) |
                       uint64_t{1} << static_cast<unsigned>(EventArg::kDynamicShared);
        }
        ActivityArgs activity_args(args, trace, file_keys);
        WriteActivityArgs(trace, activity, track, detail, activity_args);
        args.FileMembers(file_args);
      }
      text.Add('}');
    }

    switch (activity.kind) {
      case ActivityKind::kKernel: ++totals_.kernels; break;
      case ActivityKind::kMemcpy: ++totals_.memcpys; break;
      case ActivityKind::kMemset: ++totals_.memsets; break;
      case ActivityKind::kRuntimeApi: ++totals_.api_calls; break;
      default: break;
    }
    if (activity.kind != ActivityKind::kRuntimeApi || detail == nullptr ||
        (detail->fields & (kGpuLaunchesWork | kGpuHasCorrelation)) !=
            (kGpuLaunchesWork | kGpuHasCorrelation)) {
      continue;
    }
    auto flow = flow_ends.find(detail->correlation);
    if (flow == flow_ends.end()) continue;
    {
      EventText text(out);
      begin_event(text);
      text.Literal("{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
      text.Uint(detail->correlation);
      text.Add(ids_.row_heads[activity.track]);
      text.Micros(activity.begin_ns);
      text.Add('}');
    }
    EventText text(out);
    begin_event(text);
    text.Literal("{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
    text.Uint(detail->correlation);
    text.Literal(",\"pid\":");
    text.Int(flow->second.pid);
    text.Literal(",\"tid\":");
    text.Int(flow->second.tid);
    text.Literal(",\"ts\":");
    text.Micros(flow->second.ns);
    text.Literal(",\"bp\":\"e\"}");
  }

  // The file's own flows, as they were (Trace::flows).
  for (const Flow &flow : trace.flows) {
    if (flow.track >= ids_.tids.size() || trace.tracks[flow.track].process >= ids_.pids.size()) {
      continue;
    }
    // "id" before "cat", as Kineto writes them: the reader tells them from tfprof's own arrows.
    EventText text(out);
    begin_event(text);
    text.Literal("{\"ph\":\"");
    text.Add(flow.phase);
    text.Literal("\",\"id\":");
    if ((flow.flags & kFlowIdIsText) != 0 && flow.id < trace.names.size()) {
      text.Add(QuotedName(trace, static_cast<uint32_t>(flow.id)));
    } else {
      text.Uint(flow.id);
    }
    text.Add(ids_.row_heads[flow.track]);
    text.Timestamp(flow.ns, timestamps_);
    text.Literal(",\"cat\":");
    const std::string_view category = FileCategory(trace, flow.category);
    text.Add(QuotedJson(category.empty() ? std::string_view("ac2g") : category));
    text.Literal(",\"name\":");
    text.Add(QuotedName(trace, flow.name));
    if ((flow.flags & kFlowBindsEnclosing) != 0) text.Literal(",\"bp\":\"e\"");
    text.Add('}');
  }

  for (const std::string &event : trace.verbatim_events) {
    EventText text(out);
    begin_event(text);
    text.Add(event);
  }

  for (const CounterSample &sample : trace.counters) {
    if (sample.track >= ids_.tids.size()) continue;
    const uint32_t process = trace.tracks[sample.track].process;
    if (process >= ids_.pids.size()) continue;
    NoteTime(sample.ns, sample.ns);
    EventText text(out);
    head(text, "C", "counter", QuotedName(trace, sample.name), ids_.row_heads[sample.track],
         sample.ns);
    text.Add(",\"args\":{");
    text.JsonString(trace.names.Get(sample.series));
    char value[32];
    text.Add(':');
    text.Add(std::string_view(value, FormatDouble(sample.value, value)));
    text.Add("}}");
  }
}

std::string ChromeJsonWriter::Finish(const Trace &trace, int64_t /*end_ns*/) {
  std::string out;
  bool first = events_ == 0;
  const auto metadata = [&](std::string_view kind, int64_t pid, int64_t tid, std::string_view key,
                            std::string_view json_value) {
    out += first ? "" : ",\n";
    first = false;
    absl::StrAppend(&out, "{\"ph\":\"M\",\"pid\":", pid, ",\"tid\":", tid, ",\"name\":\"",
                    ToAbsl(kind), "\",\"args\":{\"", ToAbsl(key), "\":", ToAbsl(json_value), "}}");
  };
  // Processes and rows seen by no Append() yet are named too (an empty trace still names its
  // process): their ids follow the same rules.
  RowIds ids = ids_;
  ids.Update(trace);
  std::vector<size_t> step_rows_of(trace.processes.size(), 0);
  for (const StepRow &row : step_rows_) ++step_rows_of[row.process];
  std::vector<int64_t> next_sort_index(trace.processes.size(), 0);
  const bool merged = std::any_of(trace.processes.begin(), trace.processes.end(),
                                  [](const Process &process) { return process.group != 0; });
  for (size_t process = 0; process < trace.processes.size(); ++process) {
    const Process &info = trace.processes[process];
    const int64_t pid = ids.pids[process];
    if (!info.name.empty()) metadata("process_name", pid, 0, "name", QuotedJson(info.name));
    if (!info.labels.empty()) metadata("process_labels", pid, 0, "labels", QuotedJson(info.labels));
    metadata("process_sort_index", pid, 0, "sort_index",
             absl::StrCat(info.sort_index.value_or(static_cast<int64_t>(process))));
    if (merged) {
      // Which input of a merge the process came from, for tfprof's own reader (viewers skip
      // metadata they do not know).
      metadata("tfprof_process_group", pid, 0, "group",
               info.rank ? absl::StrCat(info.group, ",\"rank\":", *info.rank)
                         : absl::StrCat(info.group));
    }
  }
  for (const StepRow &row : step_rows_) {
    const int64_t pid = ids.pids[row.process];
    const bool alone = step_rows_of[row.process] == 1 || row.track == kNoTrack;
    const int64_t tid = row.track == kNoTrack ? kStepsRowTid : kStepsRowTid + row.track;
    metadata("thread_name", pid, tid, "name",
             QuotedJson(alone ? std::string("Steps")
                              : absl::StrCat("Steps (", RowName(trace.tracks[row.track]), ")")));
    metadata("thread_sort_index", pid, tid, "sort_index",
             absl::StrCat(next_sort_index[row.process]++));
  }
  for (size_t index = 0; index < trace.tracks.size(); ++index) {
    const Track &track = trace.tracks[index];
    if (track.process >= trace.processes.size() || track.kind == TrackKind::kCounters) continue;
    const int64_t pid = ids.pids[track.process];
    const int64_t tid = ids.tids[index];
    metadata("thread_name", pid, tid, "name", QuotedJson(RowName(track)));
    const int64_t sort_index = track.sort_index ? *track.sort_index : next_sort_index[track.process]++;
    metadata("thread_sort_index", pid, tid, "sort_index", absl::StrCat(sort_index));
  }

  out += "\n],\n\"displayTimeUnit\":\"ns\",\n";
  // `BEFORE"KEY":`, the keys being runtime/model/trace_info_fields.h's.
  const auto key = [&out](std::string_view before, std::string_view name) {
    absl::StrAppend(&out, ToAbsl(before), "\"", ToAbsl(name), "\":");
  };
  const TraceLosses &losses = trace.losses;
  if (losses.reported) {
    for (const LossField &field : kLossFields) {
      if (field.chrome_place != LossPlace::kTopLevel) continue;
      key("", field.key);
      absl::StrAppend(&out, losses.*field.member, ",\n");
    }
  }
  // Kineto's spelling, with the space after the colon that Holistic Trace Analysis looks for.
  if (trace.rank) {
    key("", info_key::kDistributedInfo);
    key("{", info_key::kRank);
    absl::StrAppend(&out, " ", *trace.rank, "},\n");
  }
  if (!trace.devices.empty()) {
    key("", info_key::kDeviceProperties);
    out += "[";
    for (size_t index = 0; index < trace.devices.size(); ++index) {
      const DeviceProperties &device = trace.devices[index];
      key(index == 0 ? "{" : ",{", kDeviceId);
      absl::StrAppend(&out, device.id);
      key(",", kDeviceName);
      out += QuotedJson(device.name);
      key(",", kDeviceGlobalMemory);
      absl::StrAppend(&out, device.global_memory_bytes);
      for (const DeviceIntegerField &field : kDeviceIntegerFields) {
        key(",", field.key);
        absl::StrAppend(&out, device.*field.member);
      }
      out += "}";
    }
    out += "],\n";
  }
  const int64_t start_ns = trace.start_ns.value_or(totals_.any_time ? totals_.first_ns : 0);
  const int64_t end_ns = trace.end_ns.value_or(totals_.any_time ? totals_.last_ns : 0);
  key("", info_key::kTfprof);
  key("{", info_key::kVersion);
  out += QuotedJson(prof_version_string());
  if (!trace.clock.empty()) {
    key(",", info_key::kClock);
    out += QuotedJson(trace.clock);
  }
  if (trace.pid) {
    key(",", info_key::kPid);
    absl::StrAppend(&out, *trace.pid);
  }
  if (!trace.hostname.empty()) {
    key(",", info_key::kHostname);
    out += QuotedJson(trace.hostname);
  }
  if (!trace.command_line.empty()) {
    key(",", info_key::kCommandLine);
    out += "[";
    for (size_t index = 0; index < trace.command_line.size(); ++index) {
      absl::StrAppend(&out, index == 0 ? "" : ",", QuotedJson(trace.command_line[index]));
    }
    out += "]";
  }
  if (trace.wall_offset_ns) {
    key(",", info_key::kStartUnixNs);
    absl::StrAppend(&out, start_ns + *trace.wall_offset_ns);
    key(",", info_key::kStartMonotonicNs);
    absl::StrAppend(&out, start_ns);
  }
  key(",", info_key::kEndMonotonicNs);
  absl::StrAppend(&out, end_ns);
  if (trace.events_recorded) {
    key(",", info_key::kEventsRecorded);
    absl::StrAppend(&out, *trace.events_recorded);
  }
  if (losses.reported) {
    for (const LossField &field : kLossFields) {
      if (field.chrome_place != LossPlace::kTfprof) continue;
      key(",", field.key);
      absl::StrAppend(&out, losses.*field.member);
    }
    if (losses.unreported_inputs != 0) {
      key(",", info_key::kUnreportedInputs);
      absl::StrAppend(&out, losses.unreported_inputs);
    }
  }
  if (trace.gpu.reported) {
    key(",", info_key::kGpu);
    const char *before = "{";
    for (const GpuStatusText &field : kGpuStatusTexts) {
      key(before, field.key);
      out += QuotedJson(trace.gpu.*field.member);
      before = ",";
    }
    for (const GpuLossField &field : kGpuLossFields) {
      key(",", field.key);
      absl::StrAppend(&out, losses.*field.member);
    }
    // What the trace holds, for people.
    const std::pair<std::string_view, uint64_t> counts[] = {
        {info_key::kGpuKernels, totals_.kernels},
        {info_key::kGpuMemcpys, totals_.memcpys},
        {info_key::kGpuMemsets, totals_.memsets},
        {info_key::kGpuApiCalls, totals_.api_calls}};
    for (const auto &[name, count] : counts) {
      key(",", name);
      absl::StrAppend(&out, count);
    }
    out += "}";
  }
  key(",", info_key::kTimestamps);
  out += !trace.wall_offset_ns ? "\"microseconds on the recording's clock, which recorded no "
                                 "wall-clock time\""
         : !trace.clock.empty()
             ? "\"CLOCK_MONOTONIC microseconds; add start_time_unix_ns - start_time_monotonic_ns "
               "(in ns) for wall-clock time\""
             : "\"microseconds on the recording's clock; add start_time_unix_ns - "
               "start_time_monotonic_ns (in ns) for wall-clock time\"";
  if (!trace.sources_json.empty()) {
    key(",", info_key::kSources);
    out += trace.sources_json;
  }
  // The flows and args are another producer's (a PyTorch trace converted): read them again so.
  if (trace.flows_as_read) {
    key(",", kFlowsAsReadKey);
    out += "true";
  }
  out += "}}\n";
  return out;
}

}  // namespace tfprof
