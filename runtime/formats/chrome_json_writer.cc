#include "runtime/formats/chrome_json_writer.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/json_text.h"
#include "runtime/string_view_bridge.h"
#include "tfprof/tfprof.h"
#include "runtime/model/step_index.h"

namespace tfprof {

namespace {

// The Chrome category the runtime (or, for python_function, the PyTorch profiler) writes for
// each kind; the trace loader maps them back.
std::string_view CategoryOf(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kHostOp: return "user_annotation";
    case ActivityKind::kPythonFunction: return "python_function";
    case ActivityKind::kRuntimeApi: return "cuda_runtime";
    case ActivityKind::kKernel: return "kernel";
    case ActivityKind::kMemcpy: return "gpu_memcpy";
    case ActivityKind::kMemset: return "gpu_memset";
    case ActivityKind::kGpuAnnotation: return "gpu_user_annotation";
    case ActivityKind::kRange: return "range";
  }
  return "user_annotation";
}

std::string_view CopyKindText(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return "HtoD";
    case CopyKind::kDeviceToHost: return "DtoH";
    case CopyKind::kDeviceToDevice: return "DtoD";
    case CopyKind::kOther: return "Unknown";
    case CopyKind::kNone: break;
  }
  return "";
}

// Output pids: the file's own, except where two processes of the trace share one (then the
// later gets a free number above every pid in the trace).
std::vector<int64_t> ProcessPids(const Trace &trace) {
  std::vector<int64_t> pids;
  absl::flat_hash_set<int64_t> taken;
  int64_t highest = 0;
  for (const Process &process : trace.processes) highest = std::max(highest, process.pid);
  for (const Process &process : trace.processes) {
    pids.push_back(taken.insert(process.pid).second ? process.pid : ++highest);
    taken.insert(pids.back());
  }
  return pids;
}

std::vector<int64_t> RowTids(const Trace &trace) {
  std::vector<int64_t> tids;
  absl::flat_hash_set<std::pair<uint32_t, int64_t>> taken;
  for (size_t index = 0; index < trace.tracks.size(); ++index) {
    const Track &track = trace.tracks[index];
    const bool reserved = track.tid == kStepsRowTid;
    const int64_t tid = !reserved && taken.insert({track.process, track.tid}).second
                            ? track.tid
                            : kRenumberedRowTidBase + static_cast<int64_t>(index);
    tids.push_back(tid);
  }
  return tids;
}

std::string RowName(const Track &track) {
  if (!track.name.empty()) return track.name;
  if (track.kind == TrackKind::kGpuStream) {
    return absl::StrCat("stream ", track.stream >= 0 ? track.stream : track.tid);
  }
  return absl::StrCat("thread ", track.tid);
}

class ChromeWriter {
 public:
  ChromeWriter(const Trace &trace, CountingSink &out)
      : trace_(trace),
        out_(out),
        steps_(trace),
        pids_(ProcessPids(trace)),
        tids_(RowTids(trace)) {}

  void Write(const std::string &sources_json) {
    WriteHeader(sources_json);
    WriteRows();
    for (const Step &step : trace_.steps) WriteStep(step);
    uint64_t range_id = 0;
    for (const Activity &activity : trace_.activities) {
      if (activity.kind == ActivityKind::kRange) {
        WriteRange(activity, ++range_id);
      } else {
        WriteComplete(activity);
      }
    }
    out_.Write("\n]}\n");
  }

 private:
  void WriteHeader(const std::string &sources_json) {
    int64_t first_ns = std::numeric_limits<int64_t>::max();
    int64_t last_ns = std::numeric_limits<int64_t>::min();
    for (const Activity &activity : trace_.activities) {
      first_ns = std::min(first_ns, activity.begin_ns);
      last_ns = std::max(last_ns, activity.end_ns);
    }
    for (const Step &step : trace_.steps) {
      first_ns = std::min(first_ns, step.begin_ns);
      last_ns = std::max(last_ns, step.end_ns);
    }
    if (first_ns > last_ns) first_ns = last_ns = 0;  // no events

    const TraceLosses &losses = trace_.losses;
    std::string text = "{\"displayTimeUnit\":\"ns\",\n";
    if (losses.reported) {
      absl::StrAppend(&text, "\"dropped_events\":", losses.dropped_events,
                      ",\n\"gpu_records_dropped\":", losses.gpu_records_dropped, ",\n");
    }
    // Kineto's spelling, with the space after the colon that Holistic Trace Analysis looks for.
    if (trace_.rank) absl::StrAppend(&text, "\"distributedInfo\":{\"rank\": ", *trace_.rank, "},\n");
    absl::StrAppend(&text, "\"tfprof\":{\"version\":", QuotedJson(prof_version_string()));
    if (trace_.pid) absl::StrAppend(&text, ",\"pid\":", *trace_.pid);
    if (!trace_.hostname.empty()) absl::StrAppend(&text, ",\"hostname\":", QuotedJson(trace_.hostname));
    if (trace_.wall_offset_ns) {
      // Any pair whose difference is the offset says it; the first event's time is the natural one.
      absl::StrAppend(&text, ",\"start_time_unix_ns\":", first_ns + *trace_.wall_offset_ns,
                      ",\"start_time_monotonic_ns\":", first_ns);
    }
    absl::StrAppend(&text, ",\"end_time_monotonic_ns\":", last_ns);
    if (losses.reported) {
      absl::StrAppend(&text, ",\"unmatched_span_ends\":", losses.unmatched_span_ends,
                      ",\"unmatched_step_ends\":", losses.unmatched_step_ends,
                      ",\"memory_dropped_events\":", losses.memory_dropped_events,
                      ",\"discarded_events\":", losses.discarded_events);
    }
    absl::StrAppend(&text, ",\"timestamps\":",
                    trace_.wall_offset_ns
                        ? "\"microseconds on the recording's clock; add start_time_unix_ns - "
                          "start_time_monotonic_ns (in ns) for wall-clock time\""
                        : "\"microseconds on the recording's clock, which recorded no "
                          "wall-clock time\"");
    if (!sources_json.empty()) absl::StrAppend(&text, ",\"sources\":", sources_json);
    text += "},\n\"traceEvents\":[\n";
    out_.Write(text);
  }

  void Begin() {
    if (!first_event_) out_.Write(",\n");
    first_event_ = false;
  }

  void Metadata(std::string_view kind, int64_t pid, int64_t tid, std::string_view arg_key,
                std::string_view json_value) {
    Begin();
    out_.Write(absl::StrCat("{\"ph\":\"M\",\"pid\":", pid, ",\"tid\":", tid, ",\"name\":\"",
                            ToAbsl(kind), "\",\"args\":{\"", ToAbsl(arg_key),
                            "\":", ToAbsl(json_value), "}}"));
  }

  void WriteRows() {
    std::vector<bool> has_steps(trace_.processes.size(), false);
    for (const Step &step : trace_.steps) {
      if (step.process < has_steps.size()) has_steps[step.process] = true;
    }
    std::vector<int64_t> next_sort_index(trace_.processes.size(), 0);
    for (size_t process = 0; process < trace_.processes.size(); ++process) {
      const int64_t pid = pids_[process];
      if (!trace_.processes[process].name.empty()) {
        Metadata("process_name", pid, 0, "name", QuotedJson(trace_.processes[process].name));
      }
      Metadata("process_sort_index", pid, 0, "sort_index", absl::StrCat(process));
      if (has_steps[process]) {
        Metadata("thread_name", pid, kStepsRowTid, "name", "\"Steps\"");
        Metadata("thread_sort_index", pid, kStepsRowTid, "sort_index",
                 absl::StrCat(next_sort_index[process]++));
      }
    }
    for (size_t index = 0; index < trace_.tracks.size(); ++index) {
      const Track &track = trace_.tracks[index];
      if (track.process >= pids_.size()) continue;
      const int64_t pid = pids_[track.process];
      Metadata("thread_name", pid, tids_[index], "name", QuotedJson(RowName(track)));
      Metadata("thread_sort_index", pid, tids_[index], "sort_index",
               absl::StrCat(next_sort_index[track.process]++));
    }
  }

  // {"ph":P,"cat":C,"name":N,"pid":..,"tid":..,"ts":..   into event_
  void Head(std::string_view phase, std::string_view category, std::string_view name, int64_t pid,
            int64_t tid, int64_t ns) {
    event_.clear();
    absl::StrAppend(&event_, "{\"ph\":\"", ToAbsl(phase), "\",\"cat\":\"", ToAbsl(category),
                    "\",\"name\":");
    AppendJsonString(event_, name);
    absl::StrAppend(&event_, ",\"pid\":", pid, ",\"tid\":", tid, ",\"ts\":");
    AppendMicros(ns);
  }

  void AppendMicros(int64_t ns) {
    char text[32];
    event_.append(text, FormatMicros(ns, text));
  }

  void Emit() {
    Begin();
    out_.Write(event_);
  }

  void WriteStep(const Step &step) {
    if (step.process >= pids_.size()) return;
    Head("X", "step", absl::StrCat("step ", step.number), pids_[step.process], kStepsRowTid,
         step.begin_ns);
    event_ += ",\"dur\":";
    AppendMicros(step.end_ns - step.begin_ns);
    absl::StrAppend(&event_, ",\"args\":{\"step\":", step.number, "}}");
    Emit();
  }

  // ,"args":{...} with the activity's step and GPU fields, when it has any.
  void AppendArgs(const Activity &activity, const Track &track) {
    std::string args;
    const auto add = [&](std::string_view key, const std::string &json) {
      absl::StrAppend(&args, args.empty() ? "" : ",", "\"", ToAbsl(key), "\":", json);
    };
    if (track.kind == TrackKind::kGpuStream) {
      if (track.device >= 0) add("device", absl::StrCat(track.device));
      add("stream", absl::StrCat(track.stream >= 0 ? track.stream : track.tid));
    }
    if (activity.kind == ActivityKind::kMemcpy || activity.kind == ActivityKind::kMemset) {
      add("bytes", absl::StrCat(activity.bytes));
    }
    if (activity.kind == ActivityKind::kMemcpy && activity.copy != CopyKind::kNone) {
      add("kind", QuotedJson(CopyKindText(activity.copy)));
    }
    if (const std::optional<size_t> step = steps_.Find(track.process, activity.begin_ns)) {
      add("step", absl::StrCat(trace_.steps[*step].number));
    }
    if (!args.empty()) absl::StrAppend(&event_, ",\"args\":{", args, "}");
  }

  void WriteComplete(const Activity &activity) {
    if (activity.track >= trace_.tracks.size()) return;
    const Track &track = trace_.tracks[activity.track];
    if (track.process >= pids_.size()) return;
    Head("X", CategoryOf(activity.kind), trace_.names.Get(activity.name), pids_[track.process],
         tids_[activity.track], activity.begin_ns);
    event_ += ",\"dur\":";
    AppendMicros(activity.end_ns - activity.begin_ns);
    AppendArgs(activity, track);
    event_ += "}";
    Emit();
  }

  // An async range: "b" at its start and "e" at its end, on its row, paired by id.
  void WriteRange(const Activity &activity, uint64_t id) {
    if (activity.track >= trace_.tracks.size()) return;
    const Track &track = trace_.tracks[activity.track];
    if (track.process >= pids_.size()) return;
    const std::string_view name = trace_.names.Get(activity.name);
    for (const bool start : {true, false}) {
      Head(start ? "b" : "e", "range", name, pids_[track.process], tids_[activity.track],
           start ? activity.begin_ns : activity.end_ns);
      absl::StrAppend(&event_, ",\"id\":", id);
      if (start) AppendArgs(activity, track);
      event_ += "}";
      Emit();
    }
  }

  const Trace &trace_;
  CountingSink &out_;
  StepIndex steps_;
  std::vector<int64_t> pids_;  // per process
  std::vector<int64_t> tids_;  // per track
  std::string event_;
  bool first_event_ = true;
};

}  // namespace

void WriteChromeJson(const Trace &trace, const std::string &sources_json, CountingSink &out) {
  ChromeWriter(trace, out).Write(sources_json);
}

}  // namespace tfprof
