#include "runtime/formats/chrome/chrome_json_reader.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/ascii_text.h"
#include "runtime/common/byte_source.h"
#include "runtime/common/json_scanner.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/formats/chrome/chrome_categories.h"
#include "runtime/formats/chrome/chrome_json_batch.h"
#include "runtime/formats/read_threads.h"
#include "runtime/formats/chrome/chrome_json_event.h"
#include "runtime/formats/chrome/chrome_json_header.h"
#include "runtime/formats/chrome/tf_timeline_rows.h"
#include "runtime/formats/cut_file.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/model/trace_builder.h"

namespace tfprof {

namespace {

// Kinds whose row is a GPU stream: GPU work, and the step spans Kineto draws on streams.
bool IsOnGpuRow(ActivityKind kind) {
  return IsGpuWork(kind) || kind == ActivityKind::kGpuAnnotation;
}

// A "B" event (or a "b" range) waiting for its end.
struct OpenSpan {
  int64_t begin_ns = 0;
  int64_t step = 0;
  uint64_t bytes = 0;
  uint32_t name = 0;
  uint32_t track = 0;
  uint32_t process = 0;
  uint32_t detail = kNoDetail;
  uint32_t marked_by = kNoTrack;  // a step's: the thread that marked it, when known
  uint32_t step_name = kNoName;   // a step's own name and args (PyTorch's ProfilerStep#N)
  uint32_t step_args = kNoDetail;
  Role role = Role::kActivity;
  ActivityKind kind = ActivityKind::kHostOp;
  CopyKind copy = CopyKind::kNone;
  uint8_t flags = 0;
  uint8_t category = kDefaultCategory;  // Activity::category
};

// What "M" events say of a process or a row (the last of each), applied at the end: rows may
// appear after their metadata.
struct ProcessMetadata {
  std::optional<std::string> name;
  std::optional<std::string> labels;
  std::optional<int64_t> sort_index;
  std::optional<uint32_t> group;
  std::optional<int64_t> rank;
};
struct RowMetadata {
  std::optional<std::string> name;
  std::optional<int64_t> sort_index;
};

// Whether a GPU row's events said its device and stream (else ResolveGpuRows() guesses them).
struct GpuRowFacts {
  bool device_known = false;
  bool stream_known = false;
};

// Ids for string pids and tids: far below any number a trace uses.
constexpr int64_t kTextIdBase = -(int64_t{1} << 62);

enum class State : uint8_t {
  kDocumentStart,
  kObjectFirstMember,    // after the top-level '{'
  kObjectMember,         // after a ',' between top-level members
  kObjectAfterMember,    // expecting ',' or '}'
  kEventsFirst,          // after the '[' of the events
  kEventsElement,        // after a ',' between events
  kEventsAfterElement,   // expecting ',' or ']'
  kDocumentEnd,          // only whitespace may follow
};

class ChromeJsonReader {
 public:
  ChromeJsonReader(ByteSource &source, bool gzip, uint64_t file_size, ProgressListener *progress,
                   size_t window_bytes, unsigned threads, Trace *trace)
      : source_(source),
        json_(source, trace->path, gzip, window_bytes),
        events_(json_),
        // Stretches of a quarter of the window or more (1 KiB to 256 KiB): a tiny window (tests
        // cut events anywhere) starts no threads for every event.
        batch_(threads, std::clamp<size_t>(window_bytes / 4, size_t{1} << 10, size_t{256} << 10)),
        file_size_(file_size),
        progress_(progress),
        trace_(trace),
        builder_(trace) {
    progress_what_ = absl::StrCat("reading ", trace_->path);
    // An estimate from the file size (tfprof writes ~150 bytes an event; gzip ~10x smaller), so
    // the activities and their GPU details (at most one each) rarely move: growing a vector holds
    // the old and the new copy at once, which set the peak of a summary (twice the details'
    // bytes). Untouched capacity costs no memory: the pages are never mapped in.
    const auto estimate = static_cast<size_t>(
        std::min<uint64_t>((gzip ? file_size * 10 : file_size) / 160, 50'000'000));
    trace_->activities.reserve(estimate);
    trace_->gpu_details.reserve(estimate);
  }

  absl::Status Read() {
    absl::Status status = Parse();
    if (status.ok() || absl::IsDataLoss(status)) Finish();
    if (status.ok() && !saw_events_) {
      return NotATrace(bare_array_ ? "a JSON array that holds no trace events"
                                   : "a JSON object without \"traceEvents\"");
    }
    return status;
  }

 private:
  // ---- the document ----

  // Runs until the data ends (AtEnd() then says whether it ended where it may) or an error.
  absl::Status Parse() {
    while (true) {
      const Scan scan = Advance();
      if (scan == Scan::kOk) continue;
      const uint64_t data_end = json_.OffsetOf(json_.end());
      if (scan == Scan::kError) {
        // A value the end of the data cut short (a number, true/false/null): the file ends early.
        if (json_.eof() && json_.error_offset() == data_end) {
          return EndsEarly(json_.error(), "inside an event");
        }
        return json_.error();
      }
      if (json_.eof()) return AtEnd();
      if (absl::Status status = json_.Refill(); !status.ok()) {
        // A gzip stream cut short: where the JSON stopped says which steps may be partial.
        if (source_.ended_inside_stream()) return EndsEarly(status, "inside the gzip stream");
        return status;
      }
      progress_done_ = source_.file_bytes_read();
      if (progress_ != nullptr) progress_->Update(progress_what_, progress_done_, file_size_);
    }
  }

  // The data ran out in `state_` with [position(), end()) unread.
  absl::Status AtEnd() {
    const bool nothing_left = json_.position() == json_.end();
    const uint64_t data_end = json_.OffsetOf(json_.end());
    if (state_ == State::kDocumentEnd && nothing_left) return absl::OkStatus();
    const bool in_events = state_ == State::kEventsElement ||
                           state_ == State::kEventsAfterElement || state_ == State::kEventsFirst;
    // The Trace Event Format lets the array form end without its ']' for a writer that was
    // killed: read, like any file that ends early, to its last whole step.
    if (bare_array_ && nothing_left && in_events) {
      return EndsEarly(json_.Damage(data_end, "the file ends inside the JSON event array"),
                       "inside the event array, after a whole event");
    }
    if (state_ == State::kDocumentStart) return NotATrace("no JSON value (only whitespace)");
    return EndsEarly(json_.Damage(data_end, absl::StrCat("the file ends inside the JSON ",
                                                         in_events ? "event array" : "document",
                                                         " (truncated?)")),
                     !in_events     ? "inside the JSON document, after the event array"
                     : nothing_left ? "inside the event array, after a whole event"
                                    : "inside an event");
  }

  // `damage` (what the reader would say of damage there) marked as the file ending early, at the
  // end of the bytes read.
  absl::Status EndsEarly(const absl::Status &damage, std::string_view where) const {
    CutFacts cut;
    cut.file = trace_->path;
    cut.file_bytes = source_.file_bytes_read();
    cut.problem = std::string(where);
    // Steps read after the last activity (tfprof's pieces start with their steps; a time-ordered
    // trace gives each step before its events): the activity's step came whole before them, and
    // these, whose events are cut, go.
    if (steps_since_activity_) cut.partial_from_ns = first_step_since_activity_ns_;
    return MarkFileEndsEarly(damage, cut);
  }

  absl::Status NotATrace(std::string_view why) const {
    return absl::InvalidArgumentError(absl::StrCat(trace_->path, ": not a trace: ", ToAbsl(why)));
  }

  Scan FailNotATrace(std::string_view why) { return json_.Fail(NotATrace(why)); }

  // One unit of work in the current state; kMore leaves the position where the unit began.
  Scan Advance() {
    const char *const end = json_.end();
    const char *p = json_.position();
    if (state_ == State::kDocumentStart && json_.OffsetOf(p) == 0) {
      if (end - p < 3 && !json_.eof()) return Scan::kMore;
      if (end - p >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;  // UTF-8 byte order mark
    }
    p = JsonScanner::SkipWhitespace(p, end);
    json_.set_position(p);
    if (p == end) return Scan::kMore;
    switch (state_) {
      case State::kDocumentStart:
        if (*p == '{') {
          state_ = State::kObjectFirstMember;
        } else if (*p == '[') {
          bare_array_ = true;
          state_ = State::kEventsFirst;
        } else {
          return FailNotATrace("not JSON (it does not start with '{' or '[')");
        }
        json_.set_position(p + 1);
        return Scan::kOk;
      case State::kObjectFirstMember:
      case State::kObjectMember:
        if (*p == '}' && state_ == State::kObjectFirstMember) {
          json_.set_position(p + 1);
          state_ = State::kDocumentEnd;
          return Scan::kOk;
        }
        return TopLevelMember(p, end);
      case State::kObjectAfterMember:
        if (*p == ',') {
          state_ = State::kObjectMember;
        } else if (*p == '}') {
          state_ = State::kDocumentEnd;
        } else {
          return json_.Fail(p, "expected ',' or '}' after a top-level member");
        }
        json_.set_position(p + 1);
        return Scan::kOk;
      case State::kEventsFirst:
      case State::kEventsElement:
      case State::kEventsAfterElement:
        return Events();
      case State::kDocumentEnd:
        break;
    }
    return json_.Fail(p, "data after the end of the JSON document");
  }

  // `"key": value` of the top-level object. "traceEvents" only opens its array here; the events
  // are read by Events(). Each other member is read again from its start when the window has to
  // be refilled.
  Scan TopLevelMember(const char *p, const char *end) {
    if (*p != '"') return json_.Fail(p, "expected a key in the top-level object");
    std::string_view key;
    TFPROF_SCAN(json_.String(p, end, &key, &text_key_));
    p = JsonScanner::SkipWhitespace(p, end);
    if (p == end) return Scan::kMore;
    if (*p != ':') return json_.Fail(p, "expected ':' after a key");
    p = JsonScanner::SkipWhitespace(p + 1, end);
    if (p == end) return Scan::kMore;
    if (key == "traceEvents") {
      if (*p != '[') return FailNotATrace("\"traceEvents\" is not an array");
      if (saw_events_) return json_.Fail(p, "a second \"traceEvents\" array");
      saw_events_ = true;
      state_ = State::kEventsFirst;
      json_.set_position(p + 1);
      return Scan::kOk;
    }
    TFPROF_SCAN(ReadChromeHeaderMember(json_, key, p, end, &header_));
    json_.set_position(p);
    state_ = State::kObjectAfterMember;
    return Scan::kOk;
  }

  // ---- the events ----

  Scan Events() {
    const char *const end = json_.end();
    const char *p = json_.position();
    while (true) {
      p = JsonScanner::SkipWhitespace(p, end);
      json_.set_position(p);
      if (p == end) return Scan::kMore;
      if (state_ == State::kEventsAfterElement) {
        if (*p == ',') {
          state_ = State::kEventsElement;
          ++p;
          continue;
        }
        if (*p != ']') return json_.Fail(p, "expected ',' or ']' after an event");
      }
      if (*p == ']') {  // also after a trailing comma, which hand-written traces have
        json_.set_position(p + 1);
        state_ = bare_array_ ? State::kDocumentEnd : State::kObjectAfterMember;
        return Scan::kOk;
      }
      if (*p != '{') {
        if (bare_array_ && !saw_events_) {
          return FailNotATrace("a JSON array whose elements are not trace events");
        }
        return json_.Fail(p, "an element of the event array is not an object");
      }
      if (batch_.Worth(p, end)) {
        // Many events ahead: parsed on several threads, interpreted here in file order.
        const char *const after =
            batch_.ParseEach(p, end, [&](const ChromeJsonEvent &event) { Interpret(event); });
        if (after != p) {
          saw_events_ = true;
          state_ = State::kEventsAfterElement;
          p = after;
          if (progress_ != nullptr) progress_->Update(progress_what_, progress_done_, file_size_);
          continue;
        }
      }
      ChromeJsonEvent event;
      const char *const event_begin = p;
      TFPROF_SCAN(events_.Parse(p, end, &event));
      event.text = std::string_view(event_begin, static_cast<size_t>(p - event_begin));
      saw_events_ = true;
      Interpret(event);
      state_ = State::kEventsAfterElement;
      if (progress_ != nullptr) progress_->Update(progress_what_, progress_done_, file_size_);
    }
  }

  // ---- interpretation ----

  int64_t TextId(std::string_view text) {
    auto [entry, added] = text_ids_.try_emplace(ToAbsl(text), 0);
    if (added) {
      entry->second = kTextIdBase - static_cast<int64_t>(text_id_names_.size());
      text_id_names_.emplace_back(text);
    }
    return entry->second;
  }

  int64_t IdOf(const IdValue &id) {
    if (!id.present) return 0;
    return id.is_text ? TextId(id.text) : id.number;
  }

  // The text a string id was written as; null for a numeric one.
  const std::string *TextOfId(int64_t id) const {
    if (id > kTextIdBase || id <= kTextIdBase - static_cast<int64_t>(text_id_names_.size())) {
      return nullptr;
    }
    return &text_id_names_[static_cast<size_t>(kTextIdBase - id)];
  }

  // The row of (pid, tid), made when new; `added` says whether it was. The last one is kept:
  // consecutive events mostly share a row.
  uint32_t TrackFor(int64_t pid, int64_t tid, bool *added = nullptr) {
    if (added != nullptr) *added = false;
    if (has_last_track_ && pid == last_pid_ && tid == last_tid_) return last_track_;
    bool made = false;
    const uint32_t track = builder_.ThreadRowByPid(pid, tid, &made);
    if (made) {
      gpu_row_facts_.resize(trace_->tracks.size());
      if (added != nullptr) *added = true;
    }
    has_last_track_ = true;
    last_pid_ = pid;
    last_tid_ = tid;
    last_track_ = track;
    return track;
  }

  // The row of (pid, tid) if an event made it (nothing is made).
  std::optional<uint32_t> FindTrack(int64_t pid, int64_t tid) const {
    if (has_last_track_ && pid == last_pid_ && tid == last_tid_) return last_track_;
    return builder_.FindThreadRowByPid(pid, tid);
  }

  // layout=timeline's span of a run without a step number: args.run, the run's index, which is
  // the number the StepStats reader gives such a run.
  static bool RunNumber(const ChromeJsonEvent &event, int64_t *number) {
    for (size_t index = 0; index < event.number_count; ++index) {
      const auto &[key, value] = event.numbers[index];
      if (key == "run" && value >= 0 && value < 1e18) {
        *number = static_cast<int64_t>(value);
        return true;
      }
    }
    return false;
  }

  // What a span event (X, B) becomes, with its row, name and GPU details; false when it is
  // dropped (ignored categories).
  bool Describe(const ChromeJsonEvent &event, OpenSpan *span) {
    const CategoryRole category = RoleOfCategory(event.category);
    span->role = category.role;
    span->kind = category.kind;
    if (category.role == Role::kIgnored) {
      // Kineto's whole-trace span: written again as it was (Trace::verbatim_events).
      if (event.phase == 'X' && !header_.tfprof_seen) {
        trace_->verbatim_events.emplace_back(event.text);
      }
      return false;
    }
    if (category.role == Role::kUnknown) builder_.NoteUnknownCategory(event.category);
    const int64_t pid = IdOf(event.pid);
    if (category.role == Role::kStep) {
      if (event.has_step) {
        span->step = event.step;
      } else if (!NumberAfter(event.name, "step ", &span->step) && !RunNumber(event, &span->step)) {
        span->role = Role::kUnknown;  // a "step" row of no known writer: keep it as a span
      }
      if (span->role == Role::kStep) {
        span->process = builder_.ProcessFor(pid);
        // A step row named otherwise than "step N" (a PyTorch step that went through a format
        // without its category) keeps its name.
        int64_t number = 0;
        if (!NumberAfter(event.name, "step ", &number)) {
          span->step_name = trace_->names.Intern(event.name);
        }
        // tfprof's step rows name the marking thread in args.thread.
        if (const int64_t thread = event.args.detail.thread_id; thread != 0) {
          span->marked_by = TrackFor(pid, thread);
        }
        if (event.args.incomplete) span->flags |= kActivityIncomplete;
        return true;
      }
    }
    if ((category.role == Role::kActivity && category.kind == ActivityKind::kHostOp) &&
        NumberAfter(event.name, "ProfilerStep#", &span->step)) {
      header_.pytorch_seen = true;
      span->role = Role::kStep;
      span->process = builder_.ProcessFor(pid);
      span->marked_by = TrackFor(pid, IdOf(event.tid));  // the profiler's step is a span there
      // Its own name, category and args, which a conversion writes back as they were.
      span->step_name = trace_->names.Intern(event.name);
      span->category = builder_.Category(event.category, "step");
      span->step_args = KeepFileArgs(event.args.file_args);
      return true;
    }
    const int64_t tid = IdOf(event.tid);
    span->track = TrackFor(pid, tid);
    span->name = trace_->names.Intern(event.name);
    if (category.role == Role::kActivity && IsOnGpuRow(category.kind)) MarkGpuRow(span->track, event);
    if (category.kind == ActivityKind::kMemcpy) span->copy = CopyKindOf(event.name, event.args);
    if (category.kind == ActivityKind::kMemcpy || category.kind == ActivityKind::kMemset) {
      span->bytes = event.args.bytes;
    }
    if (event.args.incomplete) span->flags |= kActivityIncomplete;
    if (category.kind == ActivityKind::kRuntimeApi && IsDriverCategory(event.category)) {
      span->flags |= kActivityDriverApi;
    }
    if (!event.category.empty()) {
      span->category =
          builder_.Category(event.category, CategoryOfActivity(category.kind, span->flags));
    }
    if (DetailIsFileArgs(category.kind)) {
      span->detail = KeepFileArgs(event.args.file_args);
    } else {
      KeepDetail(event, category.kind, span);
    }
    return true;
  }

  // Trace::file_args' index of `members` (kNoDetail when there are none).
  uint32_t KeepFileArgs(std::string_view members) {
    return members.empty() ? kNoDetail : builder_.AddFileArgs(members);
  }

  // What the event's args say about GPU work, an API call, a sync or an overhead, kept in the
  // trace's GPU details.
  void KeepDetail(const ChromeJsonEvent &event, ActivityKind kind, OpenSpan *span) {
    // A memset's "value" is read with the counters' numbers (the last one counts).
    std::optional<double> memset_value;
    for (size_t index = 0; index < event.number_count; ++index) {
      if (event.numbers[index].first == KeyOf(EventArg::kValue)) {
        memset_value = event.numbers[index].second;
      }
    }
    const std::optional<GpuDetail> detail =
        GpuDetailOf(kind, event.args, memset_value, trace_->names, trace_->work_shapes);
    if (!detail) return;
    span->detail = builder_.AddGpuDetail(kind, *detail);
    // Args tfprof has no place for (a kernel's "blocks per SM"), or does not write for this kind
    // (a sync's "device"), and the written-only ones, whose file values win.
    if (event.args.file_args.empty()) return;
    if (event.args.file_args_filtered) {
      trace_->gpu_file_args.emplace(span->detail, builder_.AddFileArgs(event.args.file_args));
      return;
    }
    const uint64_t written = ArgsWrittenFor(kind);
    kept_gpu_args_.clear();
    ForEachFileArg(event.args.file_args, [&](std::string_view member, EventArg arg) {
      if (arg != EventArg::kOther && !IsWrittenOnly(arg) &&
          (written >> static_cast<unsigned>(arg) & 1) != 0) {
        return;
      }
      if (!kept_gpu_args_.empty()) kept_gpu_args_.push_back(kFileArgsSeparator);
      kept_gpu_args_.append(member);
    });
    if (!kept_gpu_args_.empty()) {
      trace_->gpu_file_args.emplace(span->detail, builder_.AddFileArgs(kept_gpu_args_));
    }
  }

  void MarkGpuRow(uint32_t track_index, const ChromeJsonEvent &event) {
    Track &track = trace_->tracks[track_index];
    GpuRowFacts &state = gpu_row_facts_[track_index];
    track.kind = TrackKind::kGpuStream;
    if (!state.device_known && event.args.has_device) {
      track.device =
          static_cast<int32_t>(std::clamp<int64_t>(event.args.device, INT32_MIN, INT32_MAX));
      state.device_known = true;
    }
    if (!state.stream_known && event.args.has_stream) {
      track.stream = event.args.stream;
      state.stream_known = true;
    }
  }

  void Emit(const OpenSpan &span, int64_t end_ns) {
    end_ns = std::max(end_ns, span.begin_ns);
    if (span.role == Role::kStep) {
      Step step;
      step.number = span.step;
      step.begin_ns = span.begin_ns;
      step.end_ns = end_ns;
      step.process = span.process;
      step.track = span.marked_by;
      step.name = span.step_name;
      step.args = span.step_args;
      step.category = span.category;
      step.incomplete = (span.flags & kActivityIncomplete) != 0;
      builder_.AddStep(step);
      if (!steps_since_activity_ || step.begin_ns < first_step_since_activity_ns_) {
        first_step_since_activity_ns_ = step.begin_ns;
      }
      steps_since_activity_ = true;
      return;
    }
    steps_since_activity_ = false;
    if (span.role == Role::kUnknown) {
      unknown_activities_.push_back(static_cast<uint32_t>(trace_->activities.size()));
    }
    Activity activity;
    activity.begin_ns = span.begin_ns;
    activity.end_ns = end_ns;
    activity.bytes = span.bytes;
    activity.name = span.name;
    activity.track = span.track;
    activity.kind = span.kind;
    activity.copy = span.copy;
    activity.detail = span.detail;
    activity.flags = span.flags;
    activity.category = span.category;
    builder_.AddActivity(activity);
  }

  void Interpret(const ChromeJsonEvent &event) {
    ++trace_->events_in_file;
    switch (event.phase) {
      case 'X': {
        builder_.NoteTime(event.ts);
        const int64_t end_ns = event.dur > 0 && event.ts > INT64_MAX - event.dur
                                   ? INT64_MAX
                                   : event.ts + std::max<int64_t>(event.dur, 0);
        builder_.NoteTime(end_ns);
        OpenSpan span;
        span.begin_ns = event.ts;
        if (Describe(event, &span)) {
          Emit(span, end_ns);
          // timeline.py's nodes, which ReadTimelineRows() places once the process names are known.
          if (span.role == Role::kUnknown && event.category == "Op" && !event.args_name.empty()) {
            timeline_ops_.push_back(TimelineOp{
                static_cast<uint32_t>(trace_->activities.size() - 1),
                trace_->names.Intern(TimelineNodeName(event.args_name, event.args.op))});
          }
        }
        return;
      }
      case 'B': {
        builder_.NoteTime(event.ts);
        OpenSpan span;
        span.begin_ns = event.ts;
        if (!Describe(event, &span)) span.role = Role::kIgnored;  // still ended by its "E"
        const bool on_a_row = span.role != Role::kStep && span.role != Role::kIgnored;
        const uint32_t track = on_a_row ? span.track : TrackFor(IdOf(event.pid), IdOf(event.tid));
        open_spans_.Begin(track, span);
        return;
      }
      case 'E': {
        builder_.NoteTime(event.ts);
        const std::optional<uint32_t> track = FindTrack(IdOf(event.pid), IdOf(event.tid));
        if (!track) return;  // an end whose begin is not in the file
        const std::optional<OpenSpan> span = open_spans_.End(*track);
        if (span && span->role != Role::kIgnored) Emit(*span, event.ts);
        return;
      }
      case 'b': {
        builder_.NoteTime(event.ts);
        OpenSpan span;
        span.begin_ns = event.ts;
        span.role = Role::kActivity;
        span.kind = ActivityKind::kRange;
        span.track = TrackFor(IdOf(event.pid), IdOf(event.tid));
        span.name = trace_->names.Intern(event.name);
        AsyncKey(event);
        open_ranges_[async_key_].push_back(span);
        return;
      }
      case 'e': {
        builder_.NoteTime(event.ts);
        AsyncKey(event);
        auto found = open_ranges_.find(async_key_);
        if (found == open_ranges_.end() || found->second.empty()) return;
        OpenSpan span = found->second.back();
        found->second.pop_back();
        // A range may end on another thread: its end's row.
        const uint32_t end_track = TrackFor(IdOf(event.pid), IdOf(event.tid));
        if (end_track != span.track) span.detail = end_track;
        if (event.args.incomplete) span.flags |= kActivityIncomplete;
        Emit(span, event.ts);
        return;
      }
      case 'i':
      case 'I': {
        builder_.NoteTime(event.ts);
        // Global instants mark the recording itself (Kineto's "Iteration Start"), no thread:
        // written again as they were.
        if (event.scope == 'g') {
          if (!header_.tfprof_seen) trace_->verbatim_events.emplace_back(event.text);
          return;
        }
        OpenSpan span;
        span.begin_ns = event.ts;
        span.kind = ActivityKind::kInstant;
        span.track = TrackFor(IdOf(event.pid), IdOf(event.tid));
        span.name = trace_->names.Intern(event.name);
        if (!event.category.empty()) {
          span.category = builder_.Category(event.category,
                                            CategoryOfActivity(ActivityKind::kInstant, 0));
        }
        span.detail = KeepFileArgs(event.args.file_args);
        Emit(span, event.ts);
        return;
      }
      case 'C': {
        builder_.NoteTime(event.ts);
        bool added = false;
        const uint32_t track = TrackFor(IdOf(event.pid), IdOf(event.tid), &added);
        // A row that holds only counters is shown by the counters' names, never named itself.
        if (added) trace_->tracks[track].kind = TrackKind::kCounters;
        const uint32_t name = trace_->names.Intern(event.name);
        for (size_t index = 0; index < event.number_count; ++index) {
          trace_->counters.push_back(CounterSample{event.ts, event.numbers[index].second, name,
                                                   track,
                                                   trace_->names.Intern(event.numbers[index].first)});
        }
        return;
      }
      case 'M':
        Metadata(event);
        return;
      case 's':
      case 't':
      case 'f':
        builder_.NoteTime(event.ts);
        KeepFlow(event);
        return;
      default:
        if (event.ts != 0) builder_.NoteTime(event.ts);
        return;  // flows, samples, objects: counted, not kept
    }
  }

  // A flow of another producer's, which a conversion writes back. tfprof's own "ac2g" arrows are
  // drawn again from the correlation ids: not kept. Its writer gives them "cat" before "id", and
  // the flows it keeps "id" first, as Kineto does: its own trace costs no memory for them while
  // its header (at the end) is not read yet.
  void KeepFlow(const ChromeJsonEvent &event) {
    if (header_.tfprof_seen && !header_.flows_as_read) return;
    if (event.id_after_category && event.category == "ac2g" && !header_.pytorch_seen) return;
    Flow flow;
    flow.ns = event.ts;
    flow.phase = event.phase;
    flow.track = TrackFor(IdOf(event.pid), IdOf(event.tid));
    flow.name = trace_->names.Intern(event.name);
    flow.category = builder_.Category(event.category, "ac2g");
    if (event.binds_enclosing) flow.flags |= kFlowBindsEnclosing;
    int64_t number = 0;
    if (!event.id_is_text && DecimalToScaledInt(event.id, 0, &number) && number >= 0) {
      flow.id = static_cast<uint64_t>(number);
    } else {
      flow.id = trace_->names.Intern(event.id);
      flow.flags |= kFlowIdIsText;
    }
    builder_.AddFlow(flow);
  }

  // Async events pair by category and id.
  void AsyncKey(const ChromeJsonEvent &event) {
    async_key_.assign(event.category);
    async_key_.push_back('\x1f');
    async_key_.append(event.id);
  }

  // The number a sort index event gives, if any.
  static std::optional<int64_t> SortIndexOf(const ChromeJsonEvent &event) {
    for (size_t index = 0; index < event.number_count; ++index) {
      if (event.numbers[index].first == "sort_index") {
        return static_cast<int64_t>(event.numbers[index].second);
      }
    }
    return std::nullopt;
  }

  void Metadata(const ChromeJsonEvent &event) {
    const int64_t pid = IdOf(event.pid);
    if (event.name == "process_name") {
      process_metadata_[pid].name.emplace(event.args_name);
    } else if (event.name == "process_labels") {
      process_metadata_[pid].labels.emplace(event.args_labels);
    } else if (event.name == "process_sort_index") {
      if (std::optional<int64_t> sort_index = SortIndexOf(event)) {
        process_metadata_[pid].sort_index = sort_index;
      }
    } else if (event.name == "tfprof_process_group") {
      // A merged trace's recording of origin (see Process::group).
      for (size_t index = 0; index < event.number_count; ++index) {
        const auto &[key, value] = event.numbers[index];
        if (key == "group" && value >= 0 && value < 1e9) {
          process_metadata_[pid].group = static_cast<uint32_t>(value);
        }
        if (key == "rank") process_metadata_[pid].rank = static_cast<int64_t>(value);
      }
    } else if (event.name == "thread_name") {
      row_metadata_[{pid, IdOf(event.tid)}].name.emplace(event.args_name);
    } else if (event.name == "thread_sort_index") {
      if (std::optional<int64_t> sort_index = SortIndexOf(event)) {
        row_metadata_[{pid, IdOf(event.tid)}].sort_index = sort_index;
      }
    }
  }

  // ---- the end ----

  void Finish() {
    // Spans still open when the file ends (a killed writer) end at its last timestamp.
    open_spans_.EndAll([this](uint32_t, const OpenSpan &span) {
      if (span.role != Role::kIgnored) Emit(span, builder_.end_ns());
    });
    for (auto &[key, spans] : open_ranges_) {
      for (const OpenSpan &span : spans) Emit(span, builder_.end_ns());
    }
    open_ranges_.clear();
    ApplyMetadata();
    ResolveGpuRows();
    DropUnknownOnGpuProcesses();
    ReadTimelineRows();

    ApplyChromeHeader(header_, trace_);
    if (header_.tfprof_seen) {
      trace_->producer = Producer::kTfprof;
      trace_->flows_as_read = header_.flows_as_read;
      if (!header_.flows_as_read) {
        // Its own "ac2g" arrows and written-only args, read before its header: the writer
        // writes them again from the model.
        trace_->flows = {};
        trace_->gpu_file_args = {};
      }
      if (const std::optional<int64_t> pid = header_.recording.pid) {
        // The first process of that pid (timeline rows may have renumbered the processes).
        const auto main = std::find_if(
            trace_->processes.begin(), trace_->processes.end(),
            [&](const Process &process) { return process.pid == *pid; });
        if (main != trace_->processes.end()) trace_->process_name = main->name;
      }
    } else if (header_.pytorch_seen) {
      trace_->producer = Producer::kPytorch;
      trace_->flows_as_read = true;
      if (header_.base_time_ns) {
        // Kineto writes ts relative to baseTimeNanoseconds, a Unix time (output_json.cpp).
        trace_->wall_offset_ns = *header_.base_time_ns;
      } else if (TimesAreUnixMicros()) {
        trace_->wall_offset_ns = 0;  // older PyTorch: ts are Unix-epoch microseconds
      }
    } else if (timeline_seen_) {
      trace_->producer = Producer::kTensorFlow;
    } else {
      trace_->producer = Producer::kOther;
    }
    // timeline.py copies StepStats' Unix-epoch microseconds (so does tfprof's layout=timeline).
    if (timeline_seen_ && !trace_->wall_offset_ns && TimesAreUnixMicros()) {
      trace_->wall_offset_ns = 0;
    }
    builder_.Finish();  // steps sorted, unknown categories, launches linked, steps assigned
  }

  // Names (a string id's text, unless "M" events name the row) and the rest of the metadata.
  void ApplyMetadata() {
    for (Process &process : trace_->processes) {
      if (const std::string *text = TextOfId(process.pid); text != nullptr) process.name = *text;
      const auto found = process_metadata_.find(process.pid);
      if (found == process_metadata_.end()) continue;
      const ProcessMetadata &metadata = found->second;
      if (metadata.name) process.name = *metadata.name;
      if (metadata.labels) process.labels = *metadata.labels;
      if (metadata.sort_index) process.sort_index = metadata.sort_index;
      if (metadata.group) process.group = *metadata.group;
      if (metadata.rank) process.rank = metadata.rank;
    }
    for (Track &track : trace_->tracks) {
      if (const std::string *text = TextOfId(track.tid); text != nullptr) track.name = *text;
      const auto found = row_metadata_.find({trace_->processes[track.process].pid, track.tid});
      if (found == row_metadata_.end()) continue;
      if (found->second.name) track.name = *found->second.name;
      if (found->second.sort_index) track.sort_index = found->second.sort_index;
    }
  }

  // A GPU row's device and stream, when its events did not say: from "GPU N" process names,
  // the pid and the tid (Kineto: pid = device, tid = stream); named "stream N" when unnamed.
  void ResolveGpuRows() {
    for (size_t index = 0; index < trace_->tracks.size(); ++index) {
      Track &track = trace_->tracks[index];
      if (track.kind != TrackKind::kGpuStream) continue;
      const GpuRowFacts &state = gpu_row_facts_[index];
      if (!state.device_known) {
        const Process &process = trace_->processes[track.process];
        int64_t device = -1;
        if (!NumberAfter(process.name, "GPU ", &device) && TextOfId(process.pid) == nullptr) {
          device = process.pid;
        }
        if (device >= 0) track.device = static_cast<int32_t>(std::min<int64_t>(device, INT32_MAX));
      }
      if (!state.stream_known) {
        int64_t stream = 0;
        if (const std::string *text = TextOfId(track.tid); text != nullptr) {
          if (NumberAfter(*text, "stream ", &stream)) track.stream = stream;
        } else {
          track.stream = track.tid;
        }
      }
      if (track.name.empty() && track.stream >= 0) track.name = absl::StrCat("stream ", track.stream);
    }
  }

  // timeline.py's device processes as GPU streams and host rows (tf_timeline_rows.h); what the
  // parse kept about rows is renumbered with them. The builder's row and process indices are
  // stale afterwards: nothing looks rows up after this.
  void ReadTimelineRows() {
    if (timeline_ops_.empty()) return;
    const bool applied = ApplyTimelineRows(timeline_ops_, trace_);
    timeline_ops_ = {};
    if (!applied) return;
    // timeline.py's data-flow arrows joined rows that are renumbered now: not kept.
    trace_->flows = {};
    // Its nodes' category "Op" said only that they are nodes: the model now knows their kinds
    // (a conversion writes them under tfprof's categories, which no reader takes for nodes).
    const auto op = std::find(trace_->categories.begin(), trace_->categories.end(), "Op");
    if (op != trace_->categories.end()) {
      const auto op_category = static_cast<uint8_t>(op - trace_->categories.begin() + 1);
      for (Activity &activity : trace_->activities) {
        if (activity.category == op_category) activity.category = kDefaultCategory;
      }
    }
    timeline_seen_ = true;
    builder_.ForgetUnknownCategory("Op");  // TensorFlow's nodes
  }

  // ts in Unix-epoch microseconds: every time between the years 2000 and 2100.
  bool TimesAreUnixMicros() const {
    return builder_.has_time() && builder_.begin_ns() > kYear2000Ns &&
           builder_.end_ns() < kYear2100Ns;
  }

  // Events of categories no tool we know writes are host ops, except on a GPU's rows, where they
  // are whatever a profiler added there (synchronisation rows, counters as spans): not kept.
  void DropUnknownOnGpuProcesses() {
    if (unknown_activities_.empty()) return;
    std::vector<bool> gpu_process(trace_->processes.size(), false);
    bool any = false;
    for (const Track &track : trace_->tracks) {
      if (track.kind == TrackKind::kGpuStream) gpu_process[track.process] = any = true;
    }
    if (!any) return;
    std::vector<Activity> &activities = trace_->activities;
    size_t kept = 0;
    size_t next_unknown = 0;
    for (size_t index = 0; index < activities.size(); ++index) {
      const bool unknown = next_unknown < unknown_activities_.size() &&
                           unknown_activities_[next_unknown] == index;
      if (unknown) ++next_unknown;
      if (unknown && gpu_process[trace_->tracks[activities[index].track].process]) continue;
      activities[kept++] = activities[index];
    }
    activities.resize(kept);
  }

  static constexpr int64_t kYear2000Ns = 946684800LL * 1000000000LL;
  static constexpr int64_t kYear2100Ns = 4102444800LL * 1000000000LL;

  ByteSource &source_;
  JsonScanner json_;
  ChromeJsonEventParser events_;
  ChromeJsonBatchParser batch_;
  const uint64_t file_size_;
  ProgressListener *const progress_;
  Trace *const trace_;
  std::string progress_what_;
  uint64_t progress_done_ = 0;

  State state_ = State::kDocumentStart;
  bool bare_array_ = false;
  bool saw_events_ = false;
  std::string text_key_;  // a top-level key, decoded
  // Whether the last events read were steps, and the earliest of them (for a cut).
  bool steps_since_activity_ = false;
  int64_t first_step_since_activity_ns_ = 0;
  ChromeJsonHeader header_;

  // Rows.
  TraceBuilder builder_;
  std::vector<GpuRowFacts> gpu_row_facts_;  // per row
  absl::flat_hash_map<int64_t, ProcessMetadata> process_metadata_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, RowMetadata> row_metadata_;
  absl::flat_hash_map<std::string, int64_t> text_ids_;
  std::vector<std::string> text_id_names_;
  bool has_last_track_ = false;
  int64_t last_pid_ = 0;
  int64_t last_tid_ = 0;
  uint32_t last_track_ = 0;

  // Spans.
  OpenSpans<OpenSpan> open_spans_;  // "B" events not yet ended
  absl::flat_hash_map<std::string, std::vector<OpenSpan>> open_ranges_;  // "b", by AsyncKey()
  std::string async_key_;
  std::vector<uint32_t> unknown_activities_;  // indices, ascending
  std::vector<TimelineOp> timeline_ops_;
  std::string kept_gpu_args_;  // KeepDetail()'s scratch
  bool timeline_seen_ = false;  // timeline.py's device processes were found
};

}  // namespace

bool JsonMicrosToNanos(std::string_view text, int64_t *nanos) {
  return DecimalToScaledInt(text, 3, nanos);
}

absl::Status ReadChromeTrace(int fd, bool gzip, uint64_t file_size, ProgressListener *progress,
                             Trace *trace, size_t window_bytes, unsigned threads) {
  std::unique_ptr<ByteSource> source;
  if (gzip) {
    source = std::make_unique<GzipSource>(fd, trace->path);
  } else {
    source = std::make_unique<PlainSource>(fd, trace->path);
  }
  trace->format = gzip ? Format::kChromeJsonGzip : Format::kChromeJson;
  ChromeJsonReader reader(*source, gzip, file_size, progress, window_bytes,
                          threads == 0 ? DefaultReadThreads() : threads, trace);
  return reader.Read();
}

}  // namespace tfprof
