#include "runtime/formats/chrome/chrome_json_reader.h"

#include <errno.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/ascii_text.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/common/json_text.h"
#include "runtime/formats/chrome/chrome_categories.h"
#include "runtime/formats/cut_file.h"
#include "runtime/formats/chrome/tf_timeline_rows.h"
#include "runtime/model/copy_kinds.h"
#include "runtime/model/launch_links.h"
#include "runtime/common/text_excerpt.h"

namespace tfprof {

namespace {

// ---- numbers ------------------------------------------------------------------------------------

constexpr uint64_t kPowersOf10[] = {1ull,
                                    10ull,
                                    100ull,
                                    1000ull,
                                    10000ull,
                                    100000ull,
                                    1000000ull,
                                    10000000ull,
                                    100000000ull,
                                    1000000000ull,
                                    10000000000ull,
                                    100000000000ull,
                                    1000000000000ull,
                                    10000000000000ull,
                                    100000000000000ull,
                                    1000000000000000ull,
                                    10000000000000000ull,
                                    100000000000000000ull,
                                    1000000000000000000ull,
                                    10000000000000000000ull};

// round(value of the JSON number `text` * 10^scale) as an int64, computed on integers: the first
// 19 significant digits are kept exactly (later ones only round). False for anything that is not
// a JSON number, or a result outside int64.
bool DecimalToScaledInt(std::string_view text, int scale, int64_t *out) {
  const char *p = text.data();
  const char *const end = p + text.size();
  bool negative = false;
  if (p < end && *p == '-') {
    negative = true;
    ++p;
  }
  if (p == end || !IsDigit(*p)) return false;
  uint64_t mantissa = 0;
  int significant = 0;
  int64_t exponent = 0;  // of the last digit kept in `mantissa`
  const auto add_digit = [&](int digit, bool fraction) {
    if (significant < 19) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(digit);
      if (mantissa != 0) ++significant;
      if (fraction) --exponent;
    } else if (!fraction) {
      ++exponent;  // an integer digit past the 19 kept ones scales what was kept
    }
  };
  if (*p == '0') {
    ++p;
  } else {
    while (p < end && IsDigit(*p)) add_digit(*p++ - '0', false);
  }
  if (p < end && *p == '.') {
    ++p;
    if (p == end || !IsDigit(*p)) return false;
    while (p < end && IsDigit(*p)) add_digit(*p++ - '0', true);
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exponent_negative = false;
    if (p < end && (*p == '+' || *p == '-')) exponent_negative = *p++ == '-';
    if (p == end || !IsDigit(*p)) return false;
    int64_t written = 0;
    while (p < end && IsDigit(*p)) {
      written = std::min<int64_t>(written * 10 + (*p++ - '0'), 1000000);  // clamped: far out anyway
    }
    exponent += exponent_negative ? -written : written;
  }
  if (p != end) return false;
  if (mantissa == 0) {
    *out = 0;
    return true;
  }
  const int64_t total = exponent + scale;
  uint64_t magnitude = 0;
  if (total >= 0) {
    if (total > 18) return false;
    const uint64_t factor = kPowersOf10[total];
    if (mantissa > std::numeric_limits<uint64_t>::max() / factor) return false;
    magnitude = mantissa * factor;
  } else if (total < -19) {
    magnitude = 0;  // below half a unit: rounds to zero
  } else {
    const uint64_t divisor = kPowersOf10[-total];
    const uint64_t remainder = mantissa % divisor;
    magnitude = mantissa / divisor + (remainder >= divisor - remainder ? 1 : 0);
  }
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > limit + (negative ? 1 : 0)) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

// ---- where the bytes come from ------------------------------------------------------------------

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to `capacity` bytes into `out`; 0 only at the end of the data.
  virtual absl::StatusOr<size_t> Read(char *out, size_t capacity) = 0;
  // How much of the file has been consumed (compressed bytes for gzip).
  virtual uint64_t file_bytes_read() const = 0;
};

class PlainSource final : public ByteSource {
 public:
  PlainSource(int fd, const std::string &path) : fd_(fd), path_(path) {}

  absl::StatusOr<size_t> Read(char *out, size_t capacity) override {
    while (true) {
      const ssize_t got = read(fd_, out, capacity);
      if (got >= 0) {
        done_ += static_cast<uint64_t>(got);
        return static_cast<size_t>(got);
      }
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat(path_, ": cannot read at byte ", done_, ": ", std::strerror(errno)));
    }
  }

  uint64_t file_bytes_read() const override { return done_; }

 private:
  int fd_;
  const std::string &path_;
  uint64_t done_ = 0;
};

// gzip through zlib's streaming inflate; concatenated members (as `cat a.gz b.gz` makes) are read
// one after another.
class GzipSource final : public ByteSource {
 public:
  GzipSource(int fd, const std::string &path) : file_(fd, path), path_(path), input_(1 << 20) {
    initialized_ = inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK;
  }
  ~GzipSource() override {
    if (initialized_) inflateEnd(&stream_);
  }
  GzipSource(const GzipSource &) = delete;
  GzipSource &operator=(const GzipSource &) = delete;

  absl::StatusOr<size_t> Read(char *out, size_t capacity) override {
    if (!initialized_) return absl::UnavailableError(absl::StrCat(path_, ": cannot start zlib"));
    const auto wanted = static_cast<uInt>(std::min<size_t>(capacity, 1u << 30));
    stream_.next_out = reinterpret_cast<Bytef *>(out);
    stream_.avail_out = wanted;
    while (stream_.avail_out == wanted) {
      if (stream_.avail_in == 0 && !input_ended_) {
        absl::StatusOr<size_t> got = file_.Read(input_.data(), input_.size());
        if (!got.ok()) return got.status();
        if (*got == 0) input_ended_ = true;
        stream_.next_in = reinterpret_cast<Bytef *>(input_.data());
        stream_.avail_in = static_cast<uInt>(*got);
      }
      if (member_ended_) {
        if (stream_.avail_in == 0) {
          if (input_ended_) return 0;
          continue;
        }
        if (stream_.next_in[0] != 0x1f) return Damage("data after the end of the gzip stream");
        inflateReset(&stream_);
        member_ended_ = false;
      }
      if (stream_.avail_in == 0 && input_ended_) {
        CutFacts cut;
        cut.file = path_;
        cut.file_bytes = file_bytes_read();
        cut.problem = "inside the gzip stream";
        return MarkFileEndsEarly(
            Damage("the gzip stream is truncated (the file ends inside the compressed data)"), cut);
      }
      const int result = inflate(&stream_, Z_NO_FLUSH);
      if (result == Z_STREAM_END) {
        member_ended_ = true;
      } else if (result != Z_OK && !(result == Z_BUF_ERROR && stream_.avail_in == 0)) {
        return Damage(absl::StrCat("corrupt gzip data (",
                                   stream_.msg != nullptr ? stream_.msg : "zlib error", ")"));
      }
    }
    return static_cast<size_t>(wanted - stream_.avail_out);
  }

  uint64_t file_bytes_read() const override { return file_.file_bytes_read() - stream_.avail_in; }

 private:
  absl::Status Damage(std::string_view problem) const {
    return absl::DataLossError(
        absl::StrCat(path_, ": byte ", file_bytes_read(), ": ", ToAbsl(problem)));
  }

  PlainSource file_;
  const std::string &path_;
  std::vector<char> input_;
  z_stream stream_{};
  bool initialized_ = false;
  bool input_ended_ = false;
  bool member_ended_ = false;
};

// ---- what the events mean -----------------------------------------------------------------------

// Kinds whose row is a GPU stream: GPU work, and the step spans Kineto draws on streams.
bool IsOnGpuRow(ActivityKind kind) {
  return IsGpuWork(kind) || kind == ActivityKind::kGpuAnnotation;
}

// ---- the reader ---------------------------------------------------------------------------------

enum class Scan : uint8_t { kOk, kMore, kError };

#define TFPROF_SCAN(expression)                 \
  do {                                          \
    const Scan scan_result_ = (expression);     \
    if (scan_result_ != Scan::kOk) return scan_result_; \
  } while (false)

// A JSON number as scanned: its text and, when `simple` (no exponent, at most 18 digits), its
// digits as an integer with `fraction_digits` of them after the point.
struct NumberToken {
  std::string_view text;
  uint64_t mantissa = 0;
  int fraction_digits = 0;
  bool negative = false;
  bool simple = false;
};

// A pid or tid: a number, or a string (Kineto writes "Spans", "stream 7").
struct IdValue {
  bool present = false;
  bool is_text = false;
  int64_t number = 0;
  std::string_view text;
};

// One event as parsed, before it is interpreted. Views point into the window or into the
// reader's scratch strings, valid until the next event is parsed.
struct RawEvent {
  char phase = 0;
  std::string_view name;
  std::string_view category;
  std::string_view id;
  std::string_view args_name;
  std::string_view args_kind;
  IdValue pid;
  IdValue tid;
  int64_t ts = 0;
  int64_t dur = 0;
  int64_t device = 0;
  int64_t stream = 0;
  int64_t step = 0;
  int64_t copy_kind = 0;
  uint64_t bytes = 0;
  bool has_device = false;
  bool has_stream = false;
  bool has_step = false;
  bool has_copy_kind = false;
  bool incomplete = false;
  char scope = 0;  // an instant's "s": 't' thread, 'p' process, 'g' global
  // The GPU tracer's args (correlation, launch shape, ...), as the writer writes them.
  GpuDetail detail;
  bool has_detail = false;
  std::string_view op;      // args.op: the host op open at a launch
  std::string_view args_labels;  // process_labels metadata
  // Numeric args of other names, for counters ("C"): up to four series per event.
  std::array<std::pair<std::string_view, double>, 4> numbers;
  size_t number_count = 0;
};

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
  Role role = Role::kActivity;
  ActivityKind kind = ActivityKind::kHostOp;
  CopyKind copy = CopyKind::kNone;
  uint8_t flags = 0;
};

struct TrackState {
  std::vector<OpenSpan> open;  // "B" events of this row not yet ended
  bool device_known = false;
  bool stream_known = false;
};

constexpr size_t kMaxWindowBytes = size_t{1} << 30;
constexpr int kMaxNesting = 200;
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
                   size_t window_bytes, Trace *trace)
      : source_(source),
        gzip_(gzip),
        file_size_(file_size),
        progress_(progress),
        trace_(trace),
        window_(new char[std::max<size_t>(window_bytes, 1)]),
        capacity_(std::max<size_t>(window_bytes, 1)) {
    progress_what_ = absl::StrCat("reading ", trace_->path);
    // An estimate from the file size (tfprof writes ~150 bytes an event; gzip ~10x smaller), so
    // the activities rarely move; untouched capacity costs no memory.
    const uint64_t estimate = (gzip ? file_size * 10 : file_size) / 160;
    trace_->activities.reserve(static_cast<size_t>(std::min<uint64_t>(estimate, 50'000'000)));
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
  // ---- the window over the bytes ----

  absl::Status Refill() {
    const size_t keep = end_ - pos_;
    if (pos_ > 0) {
      std::memmove(window_.get(), window_.get() + pos_, keep);
      window_offset_ += pos_;
      pos_ = 0;
      end_ = keep;
    }
    if (end_ == capacity_ || capacity_ - end_ < capacity_ / 2) {  // one value fills half of it
      if (capacity_ >= kMaxWindowBytes) {
        return Damage(window_offset_, "a single JSON value larger than 1 GiB");
      }
      std::unique_ptr<char[]> bigger(new char[capacity_ * 2]);
      std::memcpy(bigger.get(), window_.get(), end_);
      window_ = std::move(bigger);
      capacity_ *= 2;
    }
    absl::StatusOr<size_t> got = source_.Read(window_.get() + end_, capacity_ - end_);
    if (!got.ok()) return got.status();
    if (*got == 0) eof_ = true;
    end_ += *got;
    progress_done_ = source_.file_bytes_read();
    if (progress_ != nullptr) progress_->Update(progress_what_, progress_done_, file_size_);
    return absl::OkStatus();
  }

  // Runs until the data ends (AtEnd() then says whether it ended where it may) or an error.
  absl::Status Parse() {
    while (true) {
      const Scan scan = Advance();
      if (scan == Scan::kOk) continue;
      if (scan == Scan::kError) {
        // A value the end of the data cut short (a number, true/false/null): the file ends early.
        if (eof_ && error_at_ == window_offset_ + end_) return EndsEarly("inside an event");
        return error_;
      }
      if (eof_) return AtEnd();
      if (absl::Status status = Refill(); !status.ok()) {
        // A gzip stream cut short: where the JSON stopped says which steps may be partial.
        if (std::optional<CutFacts> cut = FileEndsEarly(status); cut && steps_since_activity_) {
          cut->partial_from_ns = first_step_since_activity_ns_;
          return MarkFileEndsEarly(status, *cut);
        }
        return status;
      }
    }
  }

  // The data ran out in `state_` with [pos_, end_) unread.
  absl::Status AtEnd() {
    const bool nothing_left = pos_ == end_;
    if (state_ == State::kDocumentEnd && nothing_left) return absl::OkStatus();
    // The Trace Event Format lets the array form end without its ']' for a writer that was
    // killed: read, like any file that ends early, to its last whole step.
    if (bare_array_ && nothing_left &&
        (state_ == State::kEventsAfterElement || state_ == State::kEventsElement ||
         state_ == State::kEventsFirst)) {
      error_ = Damage(window_offset_ + end_, "the file ends inside the JSON event array");
      return EndsEarly("inside the event array, after a whole event");
    }
    if (state_ == State::kDocumentStart) return NotATrace("no JSON value (only whitespace)");
    error_ = Damage(window_offset_ + end_, absl::StrCat(
        "the file ends inside the JSON ", state_ == State::kEventsElement ||
        state_ == State::kEventsAfterElement || state_ == State::kEventsFirst
            ? "event array" : "document", " (truncated?)"));
    const bool in_events = state_ == State::kEventsElement ||
                           state_ == State::kEventsAfterElement || state_ == State::kEventsFirst;
    return EndsEarly(!in_events     ? "inside the JSON document, after the event array"
                         : nothing_left ? "inside the event array, after a whole event"
                                        : "inside an event");
  }

  // error_ (what the reader would say of damage there) marked as the file ending early, at the
  // end of the bytes read.
  absl::Status EndsEarly(std::string_view where) const {
    CutFacts cut;
    cut.file = trace_->path;
    cut.file_bytes = source_.file_bytes_read();
    cut.problem = std::string(where);
    // Steps read after the last activity (tfprof's pieces start with their steps; a time-ordered
    // trace gives each step before its events): the activity's step came whole before them, and
    // these, whose events are cut, go.
    if (steps_since_activity_) cut.partial_from_ns = first_step_since_activity_ns_;
    return MarkFileEndsEarly(error_, cut);
  }

  absl::Status Damage(uint64_t offset, std::string_view problem) const {
    return absl::DataLossError(absl::StrCat(trace_->path, ": byte ", offset, ": ", ToAbsl(problem),
                                            gzip_ ? " (offset in the decompressed data)" : ""));
  }

  absl::Status NotATrace(std::string_view why) const {
    return absl::InvalidArgumentError(absl::StrCat(trace_->path, ": not a trace: ", ToAbsl(why)));
  }

  Scan Fail(const char *at, std::string_view problem) {
    error_at_ = window_offset_ + static_cast<uint64_t>(at - window_.get());
    error_ = Damage(error_at_, problem);
    return Scan::kError;
  }

  Scan FailNotATrace(std::string_view why) {
    error_ = NotATrace(why);
    return Scan::kError;
  }

  // ---- the document ----

  static const char *SkipWhitespace(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    return p;
  }

  // One unit of work in the current state; kMore leaves pos_ where the unit began.
  Scan Advance() {
    const char *const base = window_.get();
    const char *const end = base + end_;
    const char *p = base + pos_;
    if (state_ == State::kDocumentStart && window_offset_ == 0 && pos_ == 0) {
      if (end - p < 3 && !eof_) return Scan::kMore;
      if (end - p >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;  // UTF-8 byte order mark
    }
    p = SkipWhitespace(p, end);
    pos_ = static_cast<size_t>(p - base);
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
        ++pos_;
        return Scan::kOk;
      case State::kObjectFirstMember:
      case State::kObjectMember:
        if (*p == '}' && state_ == State::kObjectFirstMember) {
          ++pos_;
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
          return Fail(p, "expected ',' or '}' after a top-level member");
        }
        ++pos_;
        return Scan::kOk;
      case State::kEventsFirst:
      case State::kEventsElement:
      case State::kEventsAfterElement:
        return Events();
      case State::kDocumentEnd:
        break;
    }
    return Fail(p, "data after the end of the JSON document");
  }

  // `"key": value` of the top-level object. "traceEvents" only opens its array here; the events
  // are read by Events().
  Scan TopLevelMember(const char *p, const char *end) {
    if (*p != '"') return Fail(p, "expected a key in the top-level object");
    std::string_view key;
    TFPROF_SCAN(ScanString(p, end, &key, &text_key_));
    p = SkipWhitespace(p, end);
    if (p == end) return Scan::kMore;
    if (*p != ':') return Fail(p, "expected ':' after a key");
    p = SkipWhitespace(p + 1, end);
    if (p == end) return Scan::kMore;
    if (key == "traceEvents") {
      if (*p != '[') return FailNotATrace("\"traceEvents\" is not an array");
      if (saw_events_) return Fail(p, "a second \"traceEvents\" array");
      saw_events_ = true;
      state_ = State::kEventsFirst;
      pos_ = static_cast<size_t>(p + 1 - window_.get());
      return Scan::kOk;
    }
    TFPROF_SCAN(TopLevelValue(key, p, end));
    pos_ = static_cast<size_t>(p - window_.get());
    state_ = State::kObjectAfterMember;
    return Scan::kOk;
  }

  // The top-level keys tfprof and Kineto write. Each is read again from its start when the
  // window has to be refilled, so what they set is only assigned, never accumulated.
  Scan TopLevelValue(std::string_view key, const char *&p, const char *end) {
    if (key == "tfprof") {
      tfprof_seen_ = true;
      return TfprofHeader(p, end);
    }
    if (key == "dropped_events") return ReadUnsigned(p, end, &dropped_events_, &losses_stated_);
    if (key == "gpu_records_dropped") {
      return ReadUnsigned(p, end, &gpu_records_dropped_, &losses_stated_);
    }
    if (key == "distributedInfo") {
      pytorch_seen_ = true;
      return DistributedInfo(p, end);
    }
    if (key == "baseTimeNanoseconds") {
      pytorch_seen_ = true;
      bool present = false;
      TFPROF_SCAN(ReadInteger(p, end, &base_time_ns_, &present));
      has_base_time_ = present;
      return Scan::kOk;
    }
    if (key == "deviceProperties") {
      if (!tfprof_seen_) pytorch_seen_ = true;
      return DeviceList(p, end);
    }
    if (key == "schemaVersion" || key == "traceName") pytorch_seen_ = true;
    return SkipValue(p, end, 0);
  }

  // Members of an object value, each handed to `member(key, p, end)`.
  template <typename Member>
  Scan ObjectMembers(const char *&p, const char *end, int depth, Member &&member) {
    if (depth > kMaxNesting) return Fail(p, "JSON nested too deeply");
    ++p;  // '{'
    p = SkipWhitespace(p, end);
    if (p == end) return Scan::kMore;
    if (*p == '}') {
      ++p;
      return Scan::kOk;
    }
    std::string key_text;
    while (true) {
      if (*p != '"') return Fail(p, "expected a key");
      std::string_view key;
      TFPROF_SCAN(ScanString(p, end, &key, &key_text));
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p != ':') return Fail(p, "expected ':' after a key");
      p = SkipWhitespace(p + 1, end);
      if (p == end) return Scan::kMore;
      TFPROF_SCAN(member(key, p, end));
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p == '}') {
        ++p;
        return Scan::kOk;
      }
      if (*p != ',') return Fail(p, "expected ',' or '}' in an object");
      p = SkipWhitespace(p + 1, end);
      if (p == end) return Scan::kMore;
    }
  }

  Scan TfprofHeader(const char *&p, const char *end) {
    if (*p != '{') return SkipValue(p, end, 0);
    return ObjectMembers(p, end, 1, [&](std::string_view key, const char *&q, const char *e) {
      bool present = false;
      if (key == "pid") {
        TFPROF_SCAN(ReadInteger(q, e, &header_pid_, &present));
        has_header_pid_ = present;
        return Scan::kOk;
      }
      if (key == "start_time_unix_ns") {
        TFPROF_SCAN(ReadInteger(q, e, &start_unix_ns_, &present));
        has_start_unix_ = present;
        return Scan::kOk;
      }
      if (key == "start_time_monotonic_ns") {
        TFPROF_SCAN(ReadInteger(q, e, &start_monotonic_ns_, &present));
        has_start_monotonic_ = present;
        return Scan::kOk;
      }
      if (key == "unmatched_span_ends") {
        return ReadUnsigned(q, e, &unmatched_span_ends_, &losses_stated_);
      }
      if (key == "unmatched_step_ends") {
        return ReadUnsigned(q, e, &unmatched_step_ends_, &losses_stated_);
      }
      if (key == "memory_dropped_events") {
        return ReadUnsigned(q, e, &memory_dropped_events_, &losses_stated_);
      }
      if (key == "discarded_events") {
        return ReadUnsigned(q, e, &discarded_events_, &losses_stated_);
      }
      if (key == "unreported_inputs") return ReadUnsigned(q, e, &unreported_inputs_, &present);
      if (key == "hostname" && *q == '"') {
        std::string_view hostname;
        TFPROF_SCAN(ScanString(q, e, &hostname, &hostname_));
        if (hostname.data() != hostname_.data()) hostname_.assign(hostname);
        return Scan::kOk;
      }
      if (key == "distributedInfo") return DistributedInfo(q, e);
      if (key == "end_time_monotonic_ns") {
        TFPROF_SCAN(ReadInteger(q, e, &end_monotonic_ns_, &present));
        has_end_monotonic_ = present;
        return Scan::kOk;
      }
      if (key == "events_recorded") {
        TFPROF_SCAN(ReadUnsigned(q, e, &events_recorded_, &present));
        has_events_recorded_ = present;
        return Scan::kOk;
      }
      if (key == "clock") return ReadOwnedText(q, e, &clock_);
      if (key == "command_line") return StringArray(q, e, &command_line_);
      if (key == "gpu") return GpuHeader(q, e);
      return SkipValue(q, e, 1);
    });
  }

  // A string value into `*out` (assigned: the header may be read twice); others are skipped.
  Scan ReadOwnedText(const char *&p, const char *end, std::string *out) {
    if (*p != '"') return SkipValue(p, end, 1);
    std::string scratch;
    std::string_view text;
    TFPROF_SCAN(ScanString(p, end, &text, &scratch));
    out->assign(text);
    return Scan::kOk;
  }

  // ["a", "b", ...] into `*out`, replacing what it held.
  Scan StringArray(const char *&p, const char *end, std::vector<std::string> *out) {
    if (*p != '[') return SkipValue(p, end, 1);
    std::vector<std::string> items;
    ++p;
    while (true) {
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p == ']') {
        ++p;
        break;
      }
      std::string item;
      TFPROF_SCAN(ReadOwnedText(p, end, &item));
      items.push_back(std::move(item));
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p == ',') ++p;
    }
    *out = std::move(items);
    return Scan::kOk;
  }

  // tfprof's "gpu" object: the tracing state and the GPU-side losses.
  Scan GpuHeader(const char *&p, const char *end) {
    if (*p != '{') return SkipValue(p, end, 1);
    gpu_status_.reported = true;
    return ObjectMembers(p, end, 2, [&](std::string_view key, const char *&q, const char *e) {
      bool present = false;
      if (key == "state") return ReadOwnedText(q, e, &gpu_status_.state);
      if (key == "reason") return ReadOwnedText(q, e, &gpu_status_.reason);
      if (key == "cupti") return ReadOwnedText(q, e, &gpu_status_.library);
      if (key == "buffers_refused") return ReadUnsigned(q, e, &gpu_buffers_refused_, &present);
      if (key == "records_unparsed") return ReadUnsigned(q, e, &gpu_records_unparsed_, &present);
      if (key == "late_records") return ReadUnsigned(q, e, &gpu_late_records_, &present);
      return SkipValue(q, e, 3);
    });
  }

  // Kineto's "deviceProperties": [{"id", "name", "totalGlobalMem", ...}].
  Scan DeviceList(const char *&p, const char *end) {
    if (*p != '[') return SkipValue(p, end, 0);
    std::vector<DeviceProperties> devices;
    ++p;
    while (true) {
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p == ']') {
        ++p;
        break;
      }
      if (*p != '{') return SkipValue(p, end, 1);
      DeviceProperties device;
      TFPROF_SCAN(ObjectMembers(p, end, 2, [&](std::string_view key, const char *&q, const char *e) {
        bool present = false;
        if (key == "id") return ReadInteger(q, e, &device.id, &present);
        if (key == "name") return ReadOwnedText(q, e, &device.name);
        if (key == "totalGlobalMem") return ReadUnsigned(q, e, &device.global_memory_bytes, &present);
        if (key == "computeMajor") return ReadInteger(q, e, &device.compute_major, &present);
        if (key == "computeMinor") return ReadInteger(q, e, &device.compute_minor, &present);
        if (key == "numSms") return ReadInteger(q, e, &device.multiprocessors, &present);
        return SkipValue(q, e, 3);
      }));
      devices.push_back(std::move(device));
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p == ',') ++p;
    }
    devices_ = std::move(devices);
    return Scan::kOk;
  }

  // {"rank": N, ...}; the rank may be written as a number or a numeric string.
  Scan DistributedInfo(const char *&p, const char *end) {
    if (*p != '{') return SkipValue(p, end, 0);
    return ObjectMembers(p, end, 1, [&](std::string_view key, const char *&q, const char *e) {
      if (key != "rank") return SkipValue(q, e, 2);
      if (*q == '"') {
        std::string_view text;
        std::string scratch;
        TFPROF_SCAN(ScanString(q, e, &text, &scratch));
        int64_t rank = 0;
        if (DecimalToScaledInt(text, 0, &rank)) rank_ = rank;
        return Scan::kOk;
      }
      int64_t rank = 0;
      bool present = false;
      TFPROF_SCAN(ReadInteger(q, e, &rank, &present));
      if (present) rank_ = rank;
      return Scan::kOk;
    });
  }

  // A number read as an integer; any other value is skipped and leaves `*present` false.
  Scan ReadInteger(const char *&p, const char *end, int64_t *value, bool *present) {
    *present = false;
    if (*p != '-' && !IsDigit(*p)) return SkipValue(p, end, 1);
    NumberToken number;
    TFPROF_SCAN(ScanNumber(p, end, &number));
    *present = ToScaled(number, 0, value);
    return Scan::kOk;
  }

  Scan ReadUnsigned(const char *&p, const char *end, uint64_t *value, bool *present) {
    int64_t number = 0;
    bool read = false;
    TFPROF_SCAN(ReadInteger(p, end, &number, &read));
    if (read && number >= 0) {
      *value = static_cast<uint64_t>(number);
      *present = true;
    }
    return Scan::kOk;
  }

  // ---- the events ----

  Scan Events() {
    const char *const base = window_.get();
    const char *const end = base + end_;
    const char *p = base + pos_;
    while (true) {
      p = SkipWhitespace(p, end);
      pos_ = static_cast<size_t>(p - base);
      if (p == end) return Scan::kMore;
      if (state_ == State::kEventsAfterElement) {
        if (*p == ',') {
          state_ = State::kEventsElement;
          ++p;
          continue;
        }
        if (*p != ']') return Fail(p, "expected ',' or ']' after an event");
      }
      if (*p == ']') {  // also after a trailing comma, which hand-written traces have
        pos_ = static_cast<size_t>(p + 1 - base);
        state_ = bare_array_ ? State::kDocumentEnd : State::kObjectAfterMember;
        return Scan::kOk;
      }
      if (*p != '{') {
        if (bare_array_ && !saw_events_) {
          return FailNotATrace("a JSON array whose elements are not trace events");
        }
        return Fail(p, "an element of the event array is not an object");
      }
      RawEvent event;
      TFPROF_SCAN(ParseEvent(p, end, &event));
      saw_events_ = true;
      Interpret(event);
      state_ = State::kEventsAfterElement;
      if (progress_ != nullptr) progress_->Update(progress_what_, progress_done_, file_size_);
    }
  }

  Scan ParseEvent(const char *&p, const char *end, RawEvent *event) {
    return ObjectMembers(p, end, 0, [&](std::string_view key, const char *&q, const char *e) {
      return EventMember(key, q, e, event);
    });
  }

  Scan EventMember(std::string_view key, const char *&p, const char *end, RawEvent *event) {
    switch (key.size()) {
      case 1:
        if (key == "s" && *p == '"' && end - p >= 3 && p[2] == '"') {
          event->scope = p[1];
          p += 3;
          return Scan::kOk;
        }
        break;
      case 2:
        if (key == "ph") {
          std::string_view phase;
          TFPROF_SCAN(ReadText(p, end, &phase, &text_phase_));
          event->phase = phase.size() == 1 ? phase[0] : '?';
          return Scan::kOk;
        }
        if (key == "ts") return ReadMicros(p, end, "\"ts\"", &event->ts);
        if (key == "id") return ReadId(p, end, &event->id);
        break;
      case 3:
        if (key == "cat") return ReadText(p, end, &event->category, &text_category_);
        if (key == "pid") return ReadIdValue(p, end, &event->pid, &text_pid_);
        if (key == "tid") return ReadIdValue(p, end, &event->tid, &text_tid_);
        if (key == "dur") return ReadMicros(p, end, "\"dur\"", &event->dur);
        if (key == "id2") return ReadId(p, end, &event->id);
        break;
      case 4:
        if (key == "name") return ReadText(p, end, &event->name, &text_name_);
        if (key == "args") return ReadArgs(p, end, event);
        break;
      default:
        break;
    }
    return SkipValue(p, end, 1);
  }

  // A string value; anything else is skipped and leaves `*text` empty.
  Scan ReadText(const char *&p, const char *end, std::string_view *text, std::string *scratch) {
    if (*p != '"') return SkipValue(p, end, 1);
    return ScanString(p, end, text, scratch);
  }

  Scan ReadMicros(const char *&p, const char *end, std::string_view what, int64_t *nanos) {
    if (*p != '-' && !IsDigit(*p)) return Fail(p, absl::StrCat(ToAbsl(what), " is not a number"));
    const char *const start = p;
    NumberToken number;
    TFPROF_SCAN(ScanNumber(p, end, &number));
    if (!ToScaled(number, 3, nanos)) {
      return Fail(start, absl::StrCat(ToAbsl(what), " ", TextExcerpt(number.text), " is out of range"));
    }
    return Scan::kOk;
  }

  Scan ReadIdValue(const char *&p, const char *end, IdValue *id, std::string *scratch) {
    if (*p == '"') {
      TFPROF_SCAN(ScanString(p, end, &id->text, scratch));
      id->present = true;
      id->is_text = true;
      return Scan::kOk;
    }
    if (*p != '-' && !IsDigit(*p)) return SkipValue(p, end, 1);
    NumberToken number;
    TFPROF_SCAN(ScanNumber(p, end, &number));
    id->present = true;
    if (!ToScaled(number, 0, &id->number)) {  // too large for an int64: keep its text
      id->is_text = true;
      id->text = number.text;
    }
    return Scan::kOk;
  }

  // "id" (a string or a number) or "id2" (an object): its JSON text, which pairs "b" with "e".
  Scan ReadId(const char *&p, const char *end, std::string_view *id) {
    if (*p == '"') return ScanString(p, end, id, &text_id_);
    const char *const start = p;
    TFPROF_SCAN(SkipValue(p, end, 1));
    *id = std::string_view(start, static_cast<size_t>(p - start));
    return Scan::kOk;
  }

  Scan ReadArgs(const char *&p, const char *end, RawEvent *event) {
    if (*p != '{') return SkipValue(p, end, 1);
    return ObjectMembers(p, end, 1, [&](std::string_view key, const char *&q, const char *e) {
      return ArgsMember(key, q, e, event);
    });
  }

  // A GPU detail's integer arg: sets `*field` and the detail's `bit`.
  template <typename Field>
  Scan DetailInteger(const char *&p, const char *end, RawEvent *event, Field *field,
                     uint8_t bit = 0) {
    int64_t value = 0;
    bool present = false;
    TFPROF_SCAN(ReadInteger(p, end, &value, &present));
    if (!present) return Scan::kOk;
    *field = static_cast<Field>(value);
    event->detail.fields |= bit;
    event->has_detail = true;
    return Scan::kOk;
  }

  // "grid":[x,y,z] and "block":[x,y,z].
  Scan DetailTriple(const char *&p, const char *end, RawEvent *event, int32_t (&field)[3]) {
    if (*p != '[') return SkipValue(p, end, 2);
    ++p;
    for (int axis = 0; axis < 3; ++axis) {
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      int64_t value = 0;
      bool present = false;
      TFPROF_SCAN(ReadInteger(p, end, &value, &present));
      if (present) field[axis] = static_cast<int32_t>(std::clamp<int64_t>(value, INT32_MIN, INT32_MAX));
      p = SkipWhitespace(p, end);
      if (p == end) return Scan::kMore;
      if (*p == ',') ++p;
    }
    p = SkipWhitespace(p, end);
    if (p == end) return Scan::kMore;
    if (*p != ']') return SkipValue(p, end, 2);  // more than three: not a launch shape
    ++p;
    event->detail.fields |= kGpuHasLaunchShape;
    event->has_detail = true;
    return Scan::kOk;
  }

  Scan ArgsMember(std::string_view key, const char *&q, const char *e, RawEvent *event) {
    bool present = false;
    if (key == "name") return ReadText(q, e, &event->args_name, &text_args_name_);
    if (key == "step") {
      TFPROF_SCAN(ReadInteger(q, e, &event->step, &present));
      event->has_step = present;
      return Scan::kOk;
    }
    if (key == "kind") {
      if (*q == '"') return ScanString(q, e, &event->args_kind, &text_args_kind_);
      TFPROF_SCAN(ReadInteger(q, e, &event->copy_kind, &present));
      event->has_copy_kind = present;
      return Scan::kOk;
    }
    if (key == "bytes") {
      uint64_t bytes = 0;
      TFPROF_SCAN(ReadUnsigned(q, e, &bytes, &present));
      if (present) event->bytes = bytes;
      return Scan::kOk;
    }
    if (key == "device") {
      TFPROF_SCAN(ReadInteger(q, e, &event->device, &present));
      event->has_device = present;
      return Scan::kOk;
    }
    if (key == "stream") {
      TFPROF_SCAN(ReadInteger(q, e, &event->stream, &present));
      event->has_stream = present;
      return Scan::kOk;
    }
    if (key == "copy kind") {
      TFPROF_SCAN(ReadInteger(q, e, &event->copy_kind, &present));
      event->has_copy_kind = present;
      return Scan::kOk;
    }
    if (key == "incomplete") {
      event->incomplete = e - q >= 4 && std::string_view(q, 4) == "true";
      return SkipValue(q, e, 2);
    }
    if (key == "op") return ReadText(q, e, &event->op, &text_args_op_);
    if (key == "labels") return ReadText(q, e, &event->args_labels, &text_args_labels_);
    GpuDetail &detail = event->detail;
    if (key == "correlation") return DetailInteger(q, e, event, &detail.correlation, kGpuHasCorrelation);
    if (key == "External id") return DetailInteger(q, e, event, &detail.external_id);
    if (key == "context") return DetailInteger(q, e, event, &detail.context, kGpuHasContext);
    if (key == "cbid") return DetailInteger(q, e, event, &detail.callback_id, kGpuHasCallbackId);
    if (key == "registers per thread") return DetailInteger(q, e, event, &detail.registers);
    if (key == "static shared memory") return DetailInteger(q, e, event, &detail.static_shared);
    if (key == "dynamic shared memory") return DetailInteger(q, e, event, &detail.dynamic_shared);
    if (key == "graph id") return DetailInteger(q, e, event, &detail.graph_id);
    if (key == "dst device") return DetailInteger(q, e, event, &detail.peer_device);
    if (key == "thread") return DetailInteger(q, e, event, &detail.thread_id);
    if (key == "grid") return DetailTriple(q, e, event, detail.grid);
    if (key == "block") return DetailTriple(q, e, event, detail.block);
    // Any other number: a counter's series (and a memset's "value"). NaN and the infinities
    // come quoted (FormatDouble's spellings).
    if (event->number_count == event->numbers.size()) return SkipValue(q, e, 2);
    const auto add_number = [&](double value) {
      // The key is in the window (or a scratch string) only until the next key is read.
      const size_t slot = event->number_count++;
      number_keys_[slot].assign(key);
      event->numbers[slot] = {number_keys_[slot], value};
    };
    if (*q == '-' || IsDigit(*q)) {
      NumberToken number;
      TFPROF_SCAN(ScanNumber(q, e, &number));
      double value = 0;
      if (absl::SimpleAtod(ToAbsl(number.text), &value)) add_number(value);
      return Scan::kOk;
    }
    size_t size = 0;
    const std::string_view rest(q, static_cast<size_t>(e - q));
    if (const std::optional<double> value = NonFiniteAt(rest, &size)) {
      q += size;
      add_number(*value);
      return Scan::kOk;
    }
    return SkipValue(q, e, 2);
  }

  // ---- JSON tokens ----

  // The first '"' or '\\' in [p, end), else `end`: eight bytes at a time (names are short, and
  // memchr's setup costs more than it saves on them).
  [[gnu::always_inline]] static const char *FindQuoteOrBackslash(const char *p, const char *end) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHighBits = 0x8080808080808080ull;
    while (end - p >= 8) {
      uint64_t word = 0;
      std::memcpy(&word, p, 8);
      const uint64_t quotes = word ^ (kOnes * '"');
      const uint64_t backslashes = word ^ (kOnes * '\\');
      // A byte's high bit is set where it was zero; the lowest such bit is exact.
      const uint64_t found =
          (((quotes - kOnes) & ~quotes) | ((backslashes - kOnes) & ~backslashes)) & kHighBits;
      if (found != 0) {
        if constexpr (std::endian::native == std::endian::little) {
          return p + (__builtin_ctzll(found) >> 3);
        }
        break;
      }
      p += 8;
    }
    while (p < end && *p != '"' && *p != '\\') ++p;
    return p;
  }

  // A string at `p` (on its '"'). Without escapes `*out` views the window; with them the decoded
  // text goes into `*scratch` and `*out` views that. A null `out` only validates.
  [[gnu::always_inline]] Scan ScanString(const char *&p, const char *end, std::string_view *out,
                                         std::string *scratch) {
    const char *const start = p + 1;
    const char *const stop = FindQuoteOrBackslash(start, end);
    if (stop == end) return Scan::kMore;
    if (*stop != '"') return ScanEscapedString(p, end, stop, out, scratch);
    if (out != nullptr) *out = std::string_view(start, static_cast<size_t>(stop - start));
    p = stop + 1;
    return Scan::kOk;
  }

  // The rest of a string from its first backslash at `stop`.
  [[gnu::noinline]] Scan ScanEscapedString(const char *&p, const char *end, const char *stop,
                                           std::string_view *out, std::string *scratch) {
    const char *const start = p + 1;
    if (scratch != nullptr) scratch->assign(start, static_cast<size_t>(stop - start));
    const char *q = stop;
    while (true) {
      if (q == end) return Scan::kMore;
      const char c = *q;
      if (c == '"') break;
      if (c != '\\') {
        if (scratch != nullptr) scratch->push_back(c);
        ++q;
        continue;
      }
      if (end - q < 2) return Scan::kMore;
      const char kind = q[1];
      char plain = 0;
      switch (kind) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': break;
        default: return Fail(q, "invalid escape in a string");
      }
      if (kind != 'u') {
        if (scratch != nullptr) scratch->push_back(plain);
        q += 2;
        continue;
      }
      uint32_t code = 0;
      TFPROF_SCAN(Hex4(q, end, &code));
      q += 6;
      if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate: its low half should follow
        if (end - q < 2 && !eof_) return Scan::kMore;
        if (end - q >= 2 && q[0] == '\\' && q[1] == 'u') {
          uint32_t low = 0;
          TFPROF_SCAN(Hex4(q, end, &low));
          if (low >= 0xDC00 && low <= 0xDFFF) {
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            q += 6;
          } else {
            code = 0xFFFD;
          }
        } else {
          code = 0xFFFD;
        }
      } else if (code >= 0xDC00 && code <= 0xDFFF) {
        code = 0xFFFD;  // a lone low surrogate
      }
      if (scratch != nullptr) AppendUtf8(code, scratch);
    }
    if (out != nullptr) *out = scratch != nullptr ? std::string_view(*scratch) : std::string_view();
    p = q + 1;
    return Scan::kOk;
  }

  // The four hex digits of a "\uXXXX" at `q`.
  Scan Hex4(const char *q, const char *end, uint32_t *code) {
    if (end - q < 6) return Scan::kMore;
    *code = 0;
    for (int index = 2; index < 6; ++index) {
      const char c = q[index];
      uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return Fail(q, "invalid \\u escape in a string");
      }
      *code = *code << 4 | digit;
    }
    return Scan::kOk;
  }

  static void AppendUtf8(uint32_t code, std::string *out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  // A number per JSON's grammar; kMore when it reaches the end of the window before the end of
  // the data (it may go on). Its digits are accumulated on the way for ToScaled().
  Scan ScanNumber(const char *&p, const char *end, NumberToken *number) {
    const char *const start = p;
    const char *q = p;
    int digit_count = 0;
    uint64_t mantissa = 0;
    const auto digits = [&]() {
      const char *const first = q;
      while (q < end && IsDigit(*q)) {
        mantissa = mantissa * 10 + static_cast<uint64_t>(*q - '0');
        ++q;
      }
      digit_count += static_cast<int>(q - first);
      return q != first;
    };
    number->negative = q < end && *q == '-';
    if (number->negative) ++q;
    if (q == end) return eof_ ? Fail(q, "truncated number") : Scan::kMore;
    if (*q == '0') {
      ++q;
      ++digit_count;
    } else if (!digits()) {
      return Fail(q, "invalid number");
    }
    const int integer_digits = digit_count;
    if (q < end && *q == '.') {
      ++q;
      if (!digits()) return q == end && !eof_ ? Scan::kMore : Fail(q, "invalid number");
    }
    bool exponent = false;
    if (q < end && (*q == 'e' || *q == 'E')) {
      exponent = true;
      ++q;
      if (q < end && (*q == '+' || *q == '-')) ++q;
      const uint64_t kept = mantissa;
      if (!digits()) return q == end && !eof_ ? Scan::kMore : Fail(q, "invalid number");
      mantissa = kept;
    }
    if (q == end && !eof_) return Scan::kMore;
    number->text = std::string_view(start, static_cast<size_t>(q - start));
    number->simple = !exponent && digit_count <= 18;
    number->mantissa = mantissa;
    number->fraction_digits = digit_count - integer_digits;
    p = q;
    return Scan::kOk;
  }

  // round(the number * 10^scale), as DecimalToScaledInt() computes it; most numbers (at most 18
  // digits, no exponent) without a second look at the text.
  static bool ToScaled(const NumberToken &number, int scale, int64_t *out) {
    if (!number.simple) return DecimalToScaledInt(number.text, scale, out);
    uint64_t magnitude = number.mantissa;
    if (scale >= number.fraction_digits) {
      const uint64_t factor = kPowersOf10[scale - number.fraction_digits];
      if (magnitude > static_cast<uint64_t>(INT64_MAX) / factor) {
        return DecimalToScaledInt(number.text, scale, out);
      }
      magnitude *= factor;
    } else {
      const uint64_t divisor = kPowersOf10[number.fraction_digits - scale];
      const uint64_t remainder = magnitude % divisor;
      magnitude = magnitude / divisor + (remainder >= divisor - remainder ? 1 : 0);
    }
    *out = number.negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }

  Scan Literal(const char *&p, const char *end, std::string_view word) {
    const auto available = static_cast<size_t>(end - p);
    const size_t compared = std::min(available, word.size());
    if (std::memcmp(p, word.data(), compared) != 0) return Fail(p, "invalid JSON value");
    if (compared < word.size()) return eof_ ? Fail(end, "truncated JSON value") : Scan::kMore;
    p += word.size();
    return Scan::kOk;
  }

  // Any JSON value, validated and passed over.
  Scan SkipValue(const char *&p, const char *end, int depth) {
    if (p == end) return Scan::kMore;
    switch (*p) {
      case '"':
        return ScanString(p, end, nullptr, nullptr);
      case '{':
        return ObjectMembers(p, end, depth + 1, [&](std::string_view, const char *&q, const char *e) {
          return SkipValue(q, e, depth + 1);
        });
      case '[': {
        if (depth + 1 > kMaxNesting) return Fail(p, "JSON nested too deeply");
        ++p;
        p = SkipWhitespace(p, end);
        if (p == end) return Scan::kMore;
        if (*p == ']') {
          ++p;
          return Scan::kOk;
        }
        while (true) {
          TFPROF_SCAN(SkipValue(p, end, depth + 1));
          p = SkipWhitespace(p, end);
          if (p == end) return Scan::kMore;
          if (*p == ']') {
            ++p;
            return Scan::kOk;
          }
          if (*p != ',') return Fail(p, "expected ',' or ']' in an array");
          p = SkipWhitespace(p + 1, end);
          if (p == end) return Scan::kMore;
        }
      }
      case 't':
        return Literal(p, end, "true");
      case 'f':
        return Literal(p, end, "false");
      case 'n':
        return Literal(p, end, "null");
      default: {
        if (*p != '-' && !IsDigit(*p)) return Fail(p, "invalid JSON value");
        NumberToken ignored;
        return ScanNumber(p, end, &ignored);
      }
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

  uint32_t ProcessFor(int64_t pid) {
    auto [entry, added] = process_index_.try_emplace(pid, 0);
    if (added) {
      entry->second = static_cast<uint32_t>(trace_->processes.size());
      Process process;
      process.pid = pid;
      if (auto name = pending_process_names_.find(pid); name != pending_process_names_.end()) {
        process.name = std::move(name->second);
        pending_process_names_.erase(name);
      } else if (const std::string *text = TextOfId(pid); text != nullptr) {
        process.name = *text;
      }
      trace_->processes.push_back(std::move(process));
    }
    return entry->second;
  }

  uint32_t TrackFor(int64_t pid, int64_t tid) {
    if (has_last_track_ && pid == last_pid_ && tid == last_tid_) return last_track_;
    auto [entry, added] = track_index_.try_emplace(std::make_pair(pid, tid), 0);
    if (added) {
      entry->second = static_cast<uint32_t>(trace_->tracks.size());
      Track track;
      track.process = ProcessFor(pid);
      track.tid = tid;
      const auto key = std::make_pair(pid, tid);
      if (auto name = pending_thread_names_.find(key); name != pending_thread_names_.end()) {
        track.name = std::move(name->second);
        pending_thread_names_.erase(name);
      } else if (const std::string *text = TextOfId(tid); text != nullptr) {
        track.name = *text;
      }
      trace_->tracks.push_back(std::move(track));
      track_states_.emplace_back();
    }
    has_last_track_ = true;
    last_pid_ = pid;
    last_tid_ = tid;
    last_track_ = entry->second;
    return entry->second;
  }

  void NoteTime(int64_t ns) {
    if (!has_time_ || ns > max_ns_) max_ns_ = ns;
    if (!has_time_ || ns < min_ns_) min_ns_ = ns;
    has_time_ = true;
  }

  // layout=timeline's span of a run without a step number: args.run, the run's index, which is
  // the number the StepStats reader gives such a run.
  static bool RunNumber(const RawEvent &event, int64_t *number) {
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
  bool Describe(const RawEvent &event, OpenSpan *span) {
    const CategoryRole category = RoleOfCategory(event.category);
    span->role = category.role;
    span->kind = category.kind;
    if (category.role == Role::kIgnored) return false;
    if (category.role == Role::kUnknown) ++unknown_categories_[std::string(event.category)];
    const int64_t pid = IdOf(event.pid);
    if (category.role == Role::kStep) {
      if (event.has_step) {
        span->step = event.step;
      } else if (!NumberAfter(event.name, "step ", &span->step) && !RunNumber(event, &span->step)) {
        span->role = Role::kUnknown;  // a "step" row of no known writer: keep it as a span
      }
      if (span->role == Role::kStep) {
        span->process = ProcessFor(pid);
        // tfprof's step rows name the marking thread in args.thread.
        if (event.detail.thread_id != 0) span->marked_by = TrackFor(pid, event.detail.thread_id);
        if (event.incomplete) span->flags |= kActivityIncomplete;
        return true;
      }
    }
    if ((category.role == Role::kActivity && category.kind == ActivityKind::kHostOp) &&
        NumberAfter(event.name, "ProfilerStep#", &span->step)) {
      pytorch_seen_ = true;
      span->role = Role::kStep;
      span->process = ProcessFor(pid);
      span->marked_by = TrackFor(pid, IdOf(event.tid));  // the profiler's step is a span there
      return true;
    }
    const int64_t tid = IdOf(event.tid);
    span->track = TrackFor(pid, tid);
    span->name = trace_->names.Intern(event.name);
    if (category.role == Role::kActivity && IsOnGpuRow(category.kind)) MarkGpuRow(span->track, event);
    if (category.kind == ActivityKind::kMemcpy) {
      span->copy = CopyKindFromName(event.name);
      if (span->copy == CopyKind::kNone) span->copy = CopyKindFromName(event.args_kind);
      if (span->copy == CopyKind::kNone) {
        span->copy = event.has_copy_kind ? CopyKindFromCupti(event.copy_kind) : CopyKind::kOther;
      }
    }
    if (category.kind == ActivityKind::kMemcpy || category.kind == ActivityKind::kMemset) {
      span->bytes = event.bytes;
    }
    if (event.incomplete) span->flags |= kActivityIncomplete;
    if (category.kind == ActivityKind::kRuntimeApi && IsDriverCategory(event.category)) {
      span->flags |= kActivityDriverApi;
    }
    KeepDetail(event, category.kind, span);
    return true;
  }

  // What the event's args say about GPU work, an API call, a sync or an overhead, kept in the
  // trace's GPU details.
  void KeepDetail(const RawEvent &event, ActivityKind kind, OpenSpan *span) {
    GpuDetail detail = event.detail;
    bool any = event.has_detail;
    if (!event.op.empty()) {
      detail.op = trace_->names.Intern(event.op);
      any = true;
    }
    if (kind == ActivityKind::kMemcpy) {
      detail.copy_direction = CopyDirectionFromText(event.args_kind);
      any = any || detail.copy_direction != 0;
    }
    if (kind == ActivityKind::kMemset) {
      for (size_t index = 0; index < event.number_count; ++index) {
        if (event.numbers[index].first != "value") continue;
        detail.memset_value = static_cast<uint32_t>(event.numbers[index].second);
        detail.fields |= kGpuHasMemsetValue;
        any = true;
      }
    }
    if (!any || !(IsGpuWork(kind) || kind == ActivityKind::kRuntimeApi ||
                  kind == ActivityKind::kSync || kind == ActivityKind::kOverhead)) {
      return;
    }
    if (kind == ActivityKind::kSync && !event.has_stream) detail.fields |= kGpuContextWide;
    span->detail = static_cast<uint32_t>(trace_->gpu_details.size());
    trace_->gpu_details.push_back(detail);
  }

  void MarkGpuRow(uint32_t track_index, const RawEvent &event) {
    Track &track = trace_->tracks[track_index];
    TrackState &state = track_states_[track_index];
    track.kind = TrackKind::kGpuStream;
    if (!state.device_known && event.has_device) {
      track.device = static_cast<int32_t>(std::clamp<int64_t>(event.device, INT32_MIN, INT32_MAX));
      state.device_known = true;
    }
    if (!state.stream_known && event.has_stream) {
      track.stream = event.stream;
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
      step.incomplete = (span.flags & kActivityIncomplete) != 0;
      trace_->steps.push_back(step);
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
    trace_->activities.push_back(activity);
  }

  void Interpret(const RawEvent &event) {
    ++trace_->events_in_file;
    switch (event.phase) {
      case 'X': {
        NoteTime(event.ts);
        const int64_t end_ns = event.dur > 0 && event.ts > INT64_MAX - event.dur
                                   ? INT64_MAX
                                   : event.ts + std::max<int64_t>(event.dur, 0);
        NoteTime(end_ns);
        OpenSpan span;
        span.begin_ns = event.ts;
        if (Describe(event, &span)) {
          Emit(span, end_ns);
          // timeline.py's nodes, which ReadTimelineRows() places once the process names are known.
          if (span.role == Role::kUnknown && event.category == "Op" && !event.args_name.empty()) {
            timeline_ops_.push_back(TimelineOp{
                static_cast<uint32_t>(trace_->activities.size() - 1),
                trace_->names.Intern(TimelineNodeName(event.args_name, event.op))});
          }
        }
        return;
      }
      case 'B': {
        NoteTime(event.ts);
        OpenSpan span;
        span.begin_ns = event.ts;
        if (!Describe(event, &span)) span.role = Role::kIgnored;  // still ended by its "E"
        const bool on_a_row = span.role != Role::kStep && span.role != Role::kIgnored;
        const uint32_t track = on_a_row ? span.track : TrackFor(IdOf(event.pid), IdOf(event.tid));
        track_states_[track].open.push_back(span);
        return;
      }
      case 'E': {
        NoteTime(event.ts);
        const auto track = track_index_.find(std::make_pair(IdOf(event.pid), IdOf(event.tid)));
        if (track == track_index_.end()) return;  // an end whose begin is not in the file
        std::vector<OpenSpan> &open = track_states_[track->second].open;
        if (open.empty()) return;
        const OpenSpan span = open.back();
        open.pop_back();
        if (span.role != Role::kIgnored) Emit(span, event.ts);
        return;
      }
      case 'b': {
        NoteTime(event.ts);
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
        NoteTime(event.ts);
        AsyncKey(event);
        auto found = open_ranges_.find(async_key_);
        if (found == open_ranges_.end() || found->second.empty()) return;
        OpenSpan span = found->second.back();
        found->second.pop_back();
        // A range may end on another thread: its end's row.
        const uint32_t end_track = TrackFor(IdOf(event.pid), IdOf(event.tid));
        if (end_track != span.track) span.detail = end_track;
        if (event.incomplete) span.flags |= kActivityIncomplete;
        Emit(span, event.ts);
        return;
      }
      case 'i':
      case 'I': {
        NoteTime(event.ts);
        // Global instants mark the recording itself (Kineto's "Iteration Start"), no thread.
        if (event.scope == 'g') return;
        OpenSpan span;
        span.begin_ns = event.ts;
        span.kind = ActivityKind::kInstant;
        span.track = TrackFor(IdOf(event.pid), IdOf(event.tid));
        span.name = trace_->names.Intern(event.name);
        Emit(span, event.ts);
        return;
      }
      case 'C': {
        NoteTime(event.ts);
        const size_t tracks = trace_->tracks.size();
        const uint32_t track = TrackFor(IdOf(event.pid), IdOf(event.tid));
        // A row that holds only counters is shown by the counters' names, never named itself.
        if (trace_->tracks.size() > tracks) trace_->tracks[track].kind = TrackKind::kCounters;
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
      default:
        if (event.ts != 0) NoteTime(event.ts);
        return;  // flows, samples, objects: counted, not kept
    }
  }

  // Async events pair by category and id.
  void AsyncKey(const RawEvent &event) {
    async_key_.assign(event.category);
    async_key_.push_back('\x1f');
    async_key_.append(event.id);
  }

  // The number a sort index event gives, if any.
  static std::optional<int64_t> SortIndexOf(const RawEvent &event) {
    for (size_t index = 0; index < event.number_count; ++index) {
      if (event.numbers[index].first == "sort_index") {
        return static_cast<int64_t>(event.numbers[index].second);
      }
    }
    return std::nullopt;
  }

  void Metadata(const RawEvent &event) {
    const int64_t pid = IdOf(event.pid);
    // Labels and sort indices are applied at the end: rows may appear after their metadata.
    if (event.name == "process_labels") {
      process_labels_[pid].assign(event.args_labels);
      return;
    }
    if (event.name == "process_sort_index") {
      if (std::optional<int64_t> sort_index = SortIndexOf(event)) process_sort_[pid] = *sort_index;
      return;
    }
    if (event.name == "tfprof_process_group") {
      // A merged trace's recording of origin (see Process::group).
      for (size_t index = 0; index < event.number_count; ++index) {
        const auto &[key, value] = event.numbers[index];
        if (key == "group" && value >= 0 && value < 1e9) {
          process_group_[pid] = static_cast<uint32_t>(value);
        }
        if (key == "rank") process_rank_[pid] = static_cast<int64_t>(value);
      }
      return;
    }
    if (event.name == "thread_sort_index") {
      if (std::optional<int64_t> sort_index = SortIndexOf(event)) {
        thread_sort_[{pid, IdOf(event.tid)}] = *sort_index;
      }
      return;
    }
    const bool process_name = event.name == "process_name";
    if (!process_name && event.name != "thread_name") return;
    if (process_name) {
      if (auto found = process_index_.find(pid); found != process_index_.end()) {
        trace_->processes[found->second].name.assign(event.args_name);
      } else {
        pending_process_names_[pid].assign(event.args_name);
      }
      return;
    }
    const auto key = std::make_pair(pid, IdOf(event.tid));
    if (auto found = track_index_.find(key); found != track_index_.end()) {
      trace_->tracks[found->second].name.assign(event.args_name);
    } else {
      pending_thread_names_[key].assign(event.args_name);
    }
  }

  // ---- the end ----

  void Finish() {
    // Spans still open when the file ends (a killed writer) end at its last timestamp.
    for (TrackState &state : track_states_) {
      for (const OpenSpan &span : state.open) {
        if (span.role != Role::kIgnored) Emit(span, max_ns_);
      }
      state.open.clear();
    }
    for (auto &[key, spans] : open_ranges_) {
      for (const OpenSpan &span : spans) Emit(span, max_ns_);
    }
    open_ranges_.clear();
    ResolveGpuRows();
    DropUnknownOnGpuProcesses();
    ApplyRowMetadata();
    ReadTimelineRows();
    NoteUnknownCategories();
    LinkLaunches(*trace_);

    if (tfprof_seen_) {
      trace_->producer = Producer::kTfprof;
      if (has_start_unix_ && has_start_monotonic_) {
        trace_->wall_offset_ns = start_unix_ns_ - start_monotonic_ns_;
        trace_->start_ns = start_monotonic_ns_;
      }
      if (has_end_monotonic_) trace_->end_ns = end_monotonic_ns_;
      if (has_header_pid_) trace_->pid = header_pid_;
      if (has_events_recorded_) trace_->events_recorded = events_recorded_;
      trace_->hostname = hostname_;
      trace_->clock = clock_;
      trace_->command_line = command_line_;
      trace_->gpu = gpu_status_;
      if (has_header_pid_) {
        if (auto main = process_index_.find(header_pid_); main != process_index_.end()) {
          trace_->process_name = trace_->processes[main->second].name;
        }
      }
    } else if (pytorch_seen_) {
      trace_->producer = Producer::kPytorch;
      if (has_base_time_) {
        // Kineto writes ts relative to baseTimeNanoseconds, a Unix time (output_json.cpp).
        trace_->wall_offset_ns = base_time_ns_;
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
    if (rank_) trace_->rank = rank_;
    // Only a file that states its losses reports them: tfprof writes its header also for traces
    // converted from formats that record none.
    if (losses_stated_) {
      TraceLosses &losses = trace_->losses;
      losses.reported = true;
      losses.dropped_events = dropped_events_;
      losses.gpu_records_dropped = gpu_records_dropped_;
      losses.unmatched_span_ends = unmatched_span_ends_;
      losses.unmatched_step_ends = unmatched_step_ends_;
      losses.memory_dropped_events = memory_dropped_events_;
      losses.discarded_events = discarded_events_;
      losses.gpu_buffers_refused = gpu_buffers_refused_;
      losses.gpu_records_unparsed = gpu_records_unparsed_;
      losses.gpu_late_records = gpu_late_records_;
      losses.unreported_inputs =
          static_cast<uint32_t>(std::min<uint64_t>(unreported_inputs_, UINT32_MAX));
    }
    trace_->devices = devices_;
    std::stable_sort(trace_->steps.begin(), trace_->steps.end(),
                     [](const Step &a, const Step &b) { return a.begin_ns < b.begin_ns; });
  }

  void NoteUnknownCategories() {
    trace_->unknown_categories.assign(unknown_categories_.begin(), unknown_categories_.end());
  }

  void ApplyRowMetadata() {
    for (Process &process : trace_->processes) {
      if (auto labels = process_labels_.find(process.pid); labels != process_labels_.end()) {
        process.labels = labels->second;
      }
      if (auto sort = process_sort_.find(process.pid); sort != process_sort_.end()) {
        process.sort_index = sort->second;
      }
      if (auto group = process_group_.find(process.pid); group != process_group_.end()) {
        process.group = group->second;
      }
      if (auto rank = process_rank_.find(process.pid); rank != process_rank_.end()) {
        process.rank = rank->second;
      }
    }
    for (Track &track : trace_->tracks) {
      const int64_t pid = trace_->processes[track.process].pid;
      if (auto sort = thread_sort_.find({pid, track.tid}); sort != thread_sort_.end()) {
        track.sort_index = sort->second;
      }
    }
  }

  // A GPU row's device and stream, when its events did not say: from "GPU N" process names,
  // the pid and the tid (Kineto: pid = device, tid = stream); named "stream N" when unnamed.
  void ResolveGpuRows() {
    for (size_t index = 0; index < trace_->tracks.size(); ++index) {
      Track &track = trace_->tracks[index];
      if (track.kind != TrackKind::kGpuStream) continue;
      const TrackState &state = track_states_[index];
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
  // parse kept about rows is renumbered with them.
  void ReadTimelineRows() {
    if (timeline_ops_.empty()) return;
    const bool applied = ApplyTimelineRows(timeline_ops_, trace_);
    timeline_ops_ = {};
    if (!applied) return;
    timeline_seen_ = true;
    unknown_categories_.erase("Op");  // TensorFlow's nodes
    process_index_.clear();
    for (uint32_t index = 0; index < trace_->processes.size(); ++index) {
      process_index_.emplace(trace_->processes[index].pid, index);
    }
    track_index_.clear();
    track_states_.assign(trace_->tracks.size(), TrackState());
    has_last_track_ = false;
  }

  // ts in Unix-epoch microseconds: every time between the years 2000 and 2100.
  bool TimesAreUnixMicros() const {
    return has_time_ && min_ns_ > kYear2000Ns && max_ns_ < kYear2100Ns;
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
  const bool gzip_;
  const uint64_t file_size_;
  ProgressListener *const progress_;
  Trace *const trace_;
  std::string progress_what_;
  uint64_t progress_done_ = 0;

  // The window: bytes [0, end_) of it are the data from window_offset_ on; pos_ is where the
  // next unit starts.
  std::unique_ptr<char[]> window_;
  size_t capacity_;
  size_t pos_ = 0;
  size_t end_ = 0;
  uint64_t window_offset_ = 0;
  bool eof_ = false;
  State state_ = State::kDocumentStart;
  bool bare_array_ = false;
  bool saw_events_ = false;
  absl::Status error_;
  uint64_t error_at_ = 0;  // where error_ found the data wrong (decompressed offset)
  // Whether the last events read were steps, and the earliest of them (for a cut).
  bool steps_since_activity_ = false;
  int64_t first_step_since_activity_ns_ = 0;

  // Decoded strings of the event being parsed.
  std::string text_key_, text_phase_, text_name_, text_category_, text_id_, text_pid_, text_tid_,
      text_args_name_, text_args_kind_, text_args_op_, text_args_labels_;
  std::array<std::string, 4> number_keys_;

  // The header.
  bool tfprof_seen_ = false;
  bool pytorch_seen_ = false;
  bool losses_stated_ = false;  // the file gives its losses (tfprof writes them, when known)
  uint64_t dropped_events_ = 0;
  uint64_t gpu_records_dropped_ = 0;
  uint64_t unmatched_span_ends_ = 0;
  uint64_t unmatched_step_ends_ = 0;
  uint64_t memory_dropped_events_ = 0;
  uint64_t discarded_events_ = 0;
  uint64_t unreported_inputs_ = 0;
  int64_t header_pid_ = 0;
  bool has_header_pid_ = false;
  int64_t start_unix_ns_ = 0;
  int64_t start_monotonic_ns_ = 0;
  bool has_start_unix_ = false;
  bool has_start_monotonic_ = false;
  int64_t base_time_ns_ = 0;
  bool has_base_time_ = false;
  std::optional<int64_t> rank_;
  std::string hostname_;
  std::string clock_;
  std::vector<std::string> command_line_;
  int64_t end_monotonic_ns_ = 0;
  bool has_end_monotonic_ = false;
  uint64_t events_recorded_ = 0;
  bool has_events_recorded_ = false;
  uint64_t gpu_buffers_refused_ = 0;
  uint64_t gpu_records_unparsed_ = 0;
  uint64_t gpu_late_records_ = 0;
  GpuTracingStatus gpu_status_;
  std::vector<DeviceProperties> devices_;

  // Rows.
  absl::flat_hash_map<int64_t, uint32_t> process_index_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> track_index_;
  std::vector<TrackState> track_states_;
  absl::flat_hash_map<int64_t, std::string> pending_process_names_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, std::string> pending_thread_names_;
  absl::flat_hash_map<int64_t, std::string> process_labels_;
  absl::flat_hash_map<int64_t, int64_t> process_sort_;
  absl::flat_hash_map<int64_t, uint32_t> process_group_;
  absl::flat_hash_map<int64_t, int64_t> process_rank_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> thread_sort_;
  absl::flat_hash_map<std::string, int64_t> text_ids_;
  std::vector<std::string> text_id_names_;
  bool has_last_track_ = false;
  int64_t last_pid_ = 0;
  int64_t last_tid_ = 0;
  uint32_t last_track_ = 0;

  // Spans.
  absl::flat_hash_map<std::string, std::vector<OpenSpan>> open_ranges_;
  std::string async_key_;
  std::vector<uint32_t> unknown_activities_;  // indices, ascending
  std::vector<TimelineOp> timeline_ops_;
  bool timeline_seen_ = false;  // timeline.py's device processes were found
  std::map<std::string, uint64_t> unknown_categories_;  // events each
  int64_t min_ns_ = 0;
  int64_t max_ns_ = 0;
  bool has_time_ = false;
};

#undef TFPROF_SCAN

}  // namespace

bool JsonMicrosToNanos(std::string_view text, int64_t *nanos) {
  return DecimalToScaledInt(text, 3, nanos);
}

absl::Status ReadChromeTrace(int fd, bool gzip, uint64_t file_size, ProgressListener *progress,
                             Trace *trace, size_t window_bytes) {
  std::unique_ptr<ByteSource> source;
  if (gzip) {
    source = std::make_unique<GzipSource>(fd, trace->path);
  } else {
    source = std::make_unique<PlainSource>(fd, trace->path);
  }
  trace->format = gzip ? Format::kChromeJsonGzip : Format::kChromeJson;
  ChromeJsonReader reader(*source, gzip, file_size, progress, window_bytes, trace);
  return reader.Read();
}

}  // namespace tfprof
