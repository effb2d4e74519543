#include "runtime/convert/trace_merger.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/file_name.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/common/json_text.h"

namespace tfprof {

namespace {

constexpr char kSeparator[] = " \xC2\xB7 ";  // " · "

// The input's own process: the one with the recorded pid, else its only host process.
std::optional<size_t> MainProcess(const Trace &trace) {
  if (trace.pid) {
    for (size_t index = 0; index < trace.processes.size(); ++index) {
      if (trace.processes[index].pid == *trace.pid) return index;
    }
  }
  if (trace.processes.size() == 1) return 0;
  std::optional<size_t> host;
  for (const Track &track : trace.tracks) {
    if (track.kind != TrackKind::kHostThread) continue;
    if (host && *host != track.process) return std::nullopt;  // several host processes
    host = track.process;
  }
  return host;
}

std::string OptionalJson(const std::optional<int64_t> &value) {
  return value ? absl::StrCat(*value) : "null";
}

}  // namespace

std::string InputLabel(const Trace &trace) {
  std::vector<std::string> parts;
  if (trace.rank) parts.push_back(absl::StrCat("rank ", *trace.rank));
  if (!trace.hostname.empty()) parts.push_back(trace.hostname);
  if (trace.pid) {
    parts.push_back(absl::StrCat("pid ", *trace.pid));
  } else if (const std::optional<size_t> main = MainProcess(trace);
             main && !IsTensorFlow(trace.format) && trace.format != Format::kXPlane) {
    // A Chrome trace without tfprof's header (the PyTorch profiler's): its host process's pid.
    // TensorFlow's formats, XPlane included, have no pids (the loaders number their processes).
    parts.push_back(absl::StrCat("pid ", trace.processes[*main].pid));
  }
  if (parts.empty()) return FileName(trace.path);
  return absl::StrJoin(parts, kSeparator);
}

std::optional<std::string> TraceMerger::Add(Trace input) {
  Group group;
  group.path = input.path;
  group.format_name = InputFormatName(input);
  group.label = InputLabel(input);
  group.pid = input.pid;
  group.hostname = input.hostname;
  group.rank = input.rank;
  group.wall_offset_ns = input.wall_offset_ns;
  const TimeExtent extent = EventExtent(input).value_or(TimeExtent{});
  group.first_ns = extent.begin_ns;
  group.last_ns = std::max(extent.end_ns, group.first_ns);
  group.wall_aligned = alignment_ == MergeAlignment::kWallClock && input.wall_offset_ns.has_value();
  // Wall-clock inputs go to Unix time now and to the merged origin in Finish(); the others start
  // at 0, which Finish() makes the origin.
  group.shift_ns = group.wall_aligned ? *input.wall_offset_ns : -group.first_ns;

  std::optional<std::string> note;
  if (alignment_ == MergeAlignment::kWallClock && !group.wall_aligned) {
    note = absl::StrCat(input.path,
                        ": records no wall-clock time; its first event is aligned with the "
                        "earliest input's first event");
  }

  const std::optional<size_t> main = MainProcess(input);
  const bool folding = fold_ && first_main_.has_value();
  // Where each of the input's processes and tracks goes in the merged trace.
  std::vector<uint32_t> process_at(input.processes.size());
  std::vector<uint32_t> track_at(input.tracks.size());
  // Each input is a recording of its own (an input that is itself a merge keeps its groups),
  // except a folded one, which is part of the first.
  uint32_t groups_in_input = 1;
  for (const Process &process : input.processes) {
    groups_in_input = std::max(groups_in_input, process.group + 1);
  }
  for (size_t index = 0; index < input.processes.size(); ++index) {
    if (folding && main && *main == index) {
      process_at[index] = *first_main_;
      continue;
    }
    Process process = input.processes[index];
    process.group = folding ? merged_.processes[*first_main_].group : process.group + next_group_;
    if (!process.rank) process.rank = input.rank;
    highest_pid_ = std::max(highest_pid_, process.pid);
    process_origins_.push_back(ProcessOrigin{folding ? process_origins_[*first_main_].group
                                                     : groups_.size(),
                                             !folding && main && *main == index, process.name,
                                             process.pid});
    if (!pids_taken_.insert(process.pid).second) {
      process.pid = ++highest_pid_;
      pids_taken_.insert(process.pid);
    }
    process.sort_index.reset();  // the merge orders processes input by input
    process_at[index] = static_cast<uint32_t>(merged_.processes.size());
    merged_.processes.push_back(std::move(process));
  }
  if (fold_ && !first_main_ && main) first_main_ = process_at[*main];
  if (!folding) next_group_ += groups_in_input;
  for (size_t index = 0; index < input.tracks.size(); ++index) {
    Track &track = input.tracks[index];
    track.process = process_at[track.process];
    if (folding && track.process == *first_main_ && track.kind == TrackKind::kHostThread) {
      // The same thread seen by both recorders is one row.
      const auto same = std::find_if(merged_.tracks.begin(), merged_.tracks.end(), [&](const Track &t) {
        return t.process == track.process && t.tid == track.tid && t.kind == track.kind;
      });
      if (same != merged_.tracks.end()) {
        track_at[index] = static_cast<uint32_t>(same - merged_.tracks.begin());
        if (same->name.empty()) same->name = track.name;
        continue;
      }
    }
    track_at[index] = static_cast<uint32_t>(merged_.tracks.size());
    merged_.tracks.push_back(std::move(track));
  }
  const bool keep_steps = !folding || std::none_of(merged_.steps.begin(), merged_.steps.end(),
                                                   [&](const Step &step) {
                                                     return merged_.processes[step.process].group ==
                                                            merged_.processes[*first_main_].group;
                                                   });
  std::vector<uint32_t> names(input.names.size());
  for (uint32_t index = 0; index < input.names.size(); ++index) {
    names[index] = merged_.names.Intern(input.names.Get(index));
  }
  const GpuDetails::Bases detail_bases = merged_.gpu_details.bases();
  std::vector<uint32_t> shapes(input.work_shapes.size());
  for (uint32_t index = 0; index < input.work_shapes.size(); ++index) {
    shapes[index] = merged_.work_shapes.Intern(input.work_shapes.Get(index));
  }
  // Only whole details name ops and shapes and hold times: those are renumbered and shifted.
  merged_.gpu_details.Append(input.gpu_details);
  std::vector<GpuDetail> &work = merged_.gpu_details.work();
  group.details_begin = detail_bases.work;
  group.details_end = work.size();
  for (size_t index = group.details_begin; index < group.details_end; ++index) {
    GpuDetail &detail = work[index];
    if (detail.op < names.size()) detail.op = names[detail.op];
    detail.shape = detail.shape < shapes.size() ? shapes[detail.shape] : 0;
    if (detail.launch_ns != kNoStep) detail.launch_ns += group.shift_ns;
  }
  // What the file said beyond the model (PyTorch's categories, args and flows).
  group.flows_begin = merged_.flows.size();
  const FileFactsMap file_facts =
      AppendFileFacts(input, names, track_at, detail_bases, group.shift_ns, &merged_);
  group.flows_end = merged_.flows.size();
  group.activities_begin = merged_.activities.size();
  merged_.activities.reserve(merged_.activities.size() + input.activities.size());
  for (Activity activity : input.activities) {
    activity.begin_ns += group.shift_ns;
    activity.end_ns += group.shift_ns;
    activity.name = names[activity.name];
    activity.track = track_at[activity.track];
    activity.category = file_facts.Category(activity.category);
    if (activity.detail != kNoDetail) {
      // A range's detail is its end's track; a host span's its file args; everything else's a
      // GPU detail.
      if (DetailIsFileArgs(activity.kind)) {
        activity.detail += file_facts.args_base;
      } else if (activity.kind != ActivityKind::kRange) {
        activity.detail = GpuDetails::Rebased(activity.detail, detail_bases);
      } else {
        activity.detail = activity.detail < track_at.size() ? track_at[activity.detail] : kNoDetail;
      }
    }
    merged_.activities.push_back(activity);
  }
  group.activities_end = merged_.activities.size();
  group.counters_begin = merged_.counters.size();
  for (CounterSample sample : input.counters) {
    sample.ns += group.shift_ns;
    sample.name = names[sample.name];
    sample.series = names[sample.series];
    sample.track = track_at[sample.track];
    merged_.counters.push_back(sample);
  }
  group.counters_end = merged_.counters.size();
  group.steps_begin = merged_.steps.size();
  for (Step step : keep_steps ? input.steps : std::vector<Step>{}) {
    step.begin_ns += group.shift_ns;
    step.end_ns += group.shift_ns;
    step.process = process_at[step.process];
    if (step.track != kNoTrack) step.track = track_at[step.track];
    if (step.name != kNoName) step.name = names[step.name];
    if (step.args != kNoDetail) step.args += file_facts.args_base;
    step.category = file_facts.Category(step.category);
    merged_.steps.push_back(step);
  }
  group.steps_end = merged_.steps.size();

  // Per input: the counts of those that state them, and how many do not (their losses are
  // unknown, which neither "none" nor "not recorded" would say).
  TraceLosses &losses = merged_.losses;
  losses.unreported_inputs += input.losses.reported ? input.losses.unreported_inputs : 1;
  losses.reported = losses.reported || input.losses.reported;
  losses.dropped_events += input.losses.dropped_events;
  losses.gpu_records_dropped += input.losses.gpu_records_dropped;
  losses.unmatched_span_ends += input.losses.unmatched_span_ends;
  losses.unmatched_step_ends += input.losses.unmatched_step_ends;
  losses.memory_dropped_events += input.losses.memory_dropped_events;
  losses.discarded_events += input.losses.discarded_events;
  losses.gpu_buffers_refused += input.losses.gpu_buffers_refused;
  losses.gpu_records_unparsed += input.losses.gpu_records_unparsed;
  losses.gpu_late_records += input.losses.gpu_late_records;
  merged_.events_in_file += input.events_in_file;
  for (const std::pair<std::string, uint64_t> &unknown : input.unknown_categories) {
    auto found = std::find_if(merged_.unknown_categories.begin(), merged_.unknown_categories.end(),
                              [&](const auto &entry) { return entry.first == unknown.first; });
    if (found == merged_.unknown_categories.end()) {
      merged_.unknown_categories.push_back(unknown);
    } else {
      found->second += unknown.second;
    }
  }
  groups_.push_back(std::move(group));
  return note;
}

Trace TraceMerger::Finish() {
  std::optional<int64_t> origin;
  for (const Group &group : groups_) {
    if (!group.wall_aligned) continue;
    const int64_t first = group.first_ns + group.shift_ns;
    origin = origin ? std::min(*origin, first) : first;
  }
  if (origin) {
    for (Group &group : groups_) {
      if (!group.wall_aligned) continue;
      for (size_t index = group.activities_begin; index < group.activities_end; ++index) {
        merged_.activities[index].begin_ns -= *origin;
        merged_.activities[index].end_ns -= *origin;
      }
      for (size_t index = group.steps_begin; index < group.steps_end; ++index) {
        merged_.steps[index].begin_ns -= *origin;
        merged_.steps[index].end_ns -= *origin;
      }
      for (size_t index = group.details_begin; index < group.details_end; ++index) {
        GpuDetail &detail = merged_.gpu_details.work()[index];
        if (detail.launch_ns != kNoStep) detail.launch_ns -= *origin;
      }
      for (size_t index = group.counters_begin; index < group.counters_end; ++index) {
        merged_.counters[index].ns -= *origin;
      }
      for (size_t index = group.flows_begin; index < group.flows_end; ++index) {
        merged_.flows[index].ns -= *origin;
      }
      group.shift_ns -= *origin;
    }
  }
  merged_.wall_offset_ns = origin;

  // Labels unique: a repeated one gets the input's path.
  absl::flat_hash_map<std::string, int> counts;
  for (const Group &group : groups_) ++counts[group.label];
  for (Group &group : groups_) {
    if (counts[group.label] > 1) group.label = absl::StrCat(group.label, kSeparator, group.path);
  }
  for (size_t index = 0; index < merged_.processes.size(); ++index) {
    const ProcessOrigin &origin_of = process_origins_[index];
    const std::string &label = groups_[origin_of.group].label;
    merged_.processes[index].name =
        origin_of.main ? label
                       : absl::StrCat(label, kSeparator,
                                      origin_of.name.empty() ? absl::StrCat("pid ", origin_of.pid)
                                                             : origin_of.name);
  }
  std::stable_sort(merged_.steps.begin(), merged_.steps.end(),
                   [](const Step &a, const Step &b) { return a.begin_ns < b.begin_ns; });
  std::sort(merged_.unknown_categories.begin(), merged_.unknown_categories.end());
  merged_.format = Format::kChromeJson;
  merged_.producer = Producer::kTfprof;
  return std::move(merged_);
}

std::optional<std::string> TraceMerger::FarApartNote() const {
  // The wall-aligned inputs in time order: a gap of an hour or more between one's end and the
  // next one's start means runs of different times, which wall-clock alignment puts far apart.
  std::vector<const Group *> aligned;
  for (const Group &group : groups_) {
    if (group.wall_aligned) aligned.push_back(&group);
  }
  std::sort(aligned.begin(), aligned.end(), [](const Group *a, const Group *b) {
    return a->first_ns + a->shift_ns < b->first_ns + b->shift_ns;
  });
  constexpr int64_t kHourNs = 3600LL * 1000000000LL;
  int64_t widest = 0;
  const Group *before = nullptr, *after = nullptr;
  int64_t reach = 0;  // the latest end so far
  const Group *reaching = nullptr;
  for (const Group *group : aligned) {
    const int64_t begin = group->first_ns + group->shift_ns;
    if (reaching != nullptr && begin - reach > widest) {
      widest = begin - reach;
      before = reaching;
      after = group;
    }
    if (reaching == nullptr || group->last_ns + group->shift_ns > reach) {
      reach = group->last_ns + group->shift_ns;
      reaching = group;
    }
  }
  if (widest < kHourNs) return std::nullopt;
  const double hours = static_cast<double>(widest) / static_cast<double>(kHourNs);
  const std::string apart = hours >= 48 ? absl::StrFormat("%.1f days", hours / 24)
                                        : absl::StrFormat("%.1f hours", hours);
  return absl::StrCat(after->path, " starts ", apart, " after ", before->path,
                      " ends: aligned by wall-clock time they do not overlap, and most of the "
                      "merged timeline is empty (--align start puts runs side by side)");
}

std::string TraceMerger::SourcesJson() const {
  std::string json = "[";
  for (size_t index = 0; index < groups_.size(); ++index) {
    const Group &group = groups_[index];
    absl::StrAppend(&json, index == 0 ? "" : ",", "{\"path\":", QuotedJson(group.path),
                    ",\"format\":", QuotedJson(group.format_name),
                    ",\"label\":", QuotedJson(group.label), ",\"rank\":", OptionalJson(group.rank),
                    ",\"hostname\":", group.hostname.empty() ? "null" : QuotedJson(group.hostname),
                    ",\"pid\":", OptionalJson(group.pid),
                    ",\"wall_offset_ns\":", OptionalJson(group.wall_offset_ns),
                    ",\"aligned_by\":", group.wall_aligned ? "\"wall-clock\"" : "\"first event\"",
                    ",\"shift_ns\":", group.shift_ns, "}");
  }
  return json + "]";
}

}  // namespace tfprof
