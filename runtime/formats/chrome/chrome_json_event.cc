#include "runtime/formats/chrome/chrome_json_event.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/json_text.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/common/text_excerpt.h"
#include "runtime/formats/chrome/chrome_categories.h"
#include "runtime/model/event_args.h"

namespace tfprof {

namespace {

// The members of an event the parser reads; the others are skipped.
enum class EventKey : uint8_t { kOther, kScope, kPhase, kTs, kId, kBinding, kCategory, kPid, kTid,
                                kDur, kId2, kName, kArgs };

EventKey EventKeyOf(std::string_view key) {
  switch (key.size()) {
    case 1: return key == "s" ? EventKey::kScope : EventKey::kOther;
    case 2:
      if (key == "ph") return EventKey::kPhase;
      if (key == "ts") return EventKey::kTs;
      if (key == "id") return EventKey::kId;
      if (key == "bp") return EventKey::kBinding;
      return EventKey::kOther;
    case 3:
      if (key == "cat") return EventKey::kCategory;
      if (key == "pid") return EventKey::kPid;
      if (key == "tid") return EventKey::kTid;
      if (key == "dur") return EventKey::kDur;
      if (key == "id2") return EventKey::kId2;
      return EventKey::kOther;
    case 4:
      if (key == "name") return EventKey::kName;
      if (key == "args") return EventKey::kArgs;
      return EventKey::kOther;
    default:
      return EventKey::kOther;
  }
}

}  // namespace

Scan ChromeJsonEventParser::Member(uint8_t code, const char *&p, const char *end,
                                   ChromeJsonEvent *event) {
  switch (static_cast<EventKey>(code)) {
    case EventKey::kScope:
      if (*p == '"' && end - p >= 3 && p[2] == '"') {
        event->scope = p[1];
        p += 3;
        return Scan::kOk;
      }
      break;
    case EventKey::kPhase: {
      std::string_view phase;
      TFPROF_SCAN(json_.ReadText(p, end, &phase, &text_phase_));
      event->phase = phase.size() == 1 ? phase[0] : '?';
      return Scan::kOk;
    }
    case EventKey::kTs:
      return ReadMicros(p, end, "\"ts\"", &event->ts);
    case EventKey::kId:
      event->id_is_text = *p == '"';
      event->id_after_category = !event->category.empty();
      return ReadId(p, end, &event->id);
    case EventKey::kBinding: {
      std::string_view binding;
      TFPROF_SCAN(json_.ReadText(p, end, &binding, &text_phase_));
      event->binds_enclosing = binding == "e";
      return Scan::kOk;
    }
    case EventKey::kCategory:
      return json_.ReadText(p, end, &event->category, &text_category_);
    case EventKey::kPid:
      return ReadIdValue(p, end, &event->pid, &text_pid_);
    case EventKey::kTid:
      return ReadIdValue(p, end, &event->tid, &text_tid_);
    case EventKey::kDur:
      return ReadMicros(p, end, "\"dur\"", &event->dur);
    case EventKey::kId2:
      return ReadId(p, end, &event->id);
    case EventKey::kName:
      return json_.ReadText(p, end, &event->name, &text_name_);
    case EventKey::kArgs:
      return Args(p, end, event);
    case EventKey::kOther:
      break;
  }
  return json_.SkipValue(p, end, 1);
}

Scan ChromeJsonEventParser::Parse(const char *&p, const char *end, ChromeJsonEvent *event) {
  file_args_.clear();
  shared_begin_ = shared_end_ = 0;
  saw_shared_parts_ = false;
  return json_.ForEachCodedMember(
      p, end, 0, event_keys_,
      [](std::string_view key) { return static_cast<uint8_t>(EventKeyOf(key)); },
      [&](uint8_t code, std::string_view, const char *&q, const char *e) {
        return Member(code, q, e, event);
      });
}

Scan ChromeJsonEventParser::ReadMicros(const char *&p, const char *end, std::string_view what,
                                       int64_t *nanos) {
  if (JsonScanner::ReadScaledFast(p, end, 3, nanos)) return Scan::kOk;
  if (*p != '-' && !IsDigit(*p)) {
    return json_.Fail(p, absl::StrCat(ToAbsl(what), " is not a number"));
  }
  const char *const start = p;
  JsonNumber number;
  TFPROF_SCAN(json_.Number(p, end, &number));
  if (!ToScaled(number, 3, nanos)) {
    return json_.Fail(start, absl::StrCat(ToAbsl(what), " ", TextExcerpt(number.text),
                                          " is out of range"));
  }
  return Scan::kOk;
}

Scan ChromeJsonEventParser::ReadIdValue(const char *&p, const char *end, IdValue *id,
                                        std::string *scratch) {
  if (*p == '"') {
    TFPROF_SCAN(json_.String(p, end, &id->text, scratch));
    id->present = true;
    id->is_text = true;
    return Scan::kOk;
  }
  if (JsonScanner::ReadScaledFast(p, end, 0, &id->number)) {
    id->present = true;
    return Scan::kOk;
  }
  if (*p != '-' && !IsDigit(*p)) return json_.SkipValue(p, end, 1);
  JsonNumber number;
  TFPROF_SCAN(json_.Number(p, end, &number));
  id->present = true;
  if (!ToScaled(number, 0, &id->number)) {  // too large for an int64: keep its text
    id->is_text = true;
    id->text = number.text;
  }
  return Scan::kOk;
}

// "id" (a string or a number) or "id2" (an object): its JSON text, which pairs "b" with "e".
Scan ChromeJsonEventParser::ReadId(const char *&p, const char *end, std::string_view *id) {
  if (*p == '"') return json_.String(p, end, id, &text_id_);
  const char *const start = p;
  TFPROF_SCAN(json_.SkipValue(p, end, 1));
  *id = std::string_view(start, static_cast<size_t>(p - start));
  return Scan::kOk;
}

void ChromeJsonEventParser::KeepFileArg(std::string_view key, EventArg arg, const char *value,
                                        const char *value_end) {
  // tfprof writes these from the model: a kept copy would repeat them.
  if (arg == EventArg::kStaticShared) saw_shared_parts_ = true;
  if ((args_not_kept_ >> static_cast<unsigned>(arg) & 1) != 0) return;
  AppendFileArg(key, arg, value, value_end);
}

void ChromeJsonEventParser::AppendFileArg(std::string_view key, EventArg arg, const char *value,
                                          const char *value_end) {
  if (arg == EventArg::kSharedMemory) shared_begin_ = file_args_.size();
  const std::string_view text(value, static_cast<size_t>(value_end - value));
  const auto add = [&](std::string &members) {
    if (!members.empty()) members.push_back(kFileArgsSeparator);
    AppendJsonString(members, key);
    members.push_back(':');
    members.append(text);
  };
  add(file_args_);
  if (arg == EventArg::kSharedMemory) shared_end_ = file_args_.size();
}

Scan ChromeJsonEventParser::ArgsMember(std::string_view key, EventArg arg, const char *&p,
                                       const char *end, ChromeJsonEvent *event) {
  bool present = false;
  switch (arg) {
    case EventArg::kName:
      return json_.ReadText(p, end, &event->args_name, &text_args_name_);
    case EventArg::kStep:
      TFPROF_SCAN(json_.ReadInteger(p, end, &event->step, &present));
      event->has_step = present;
      return Scan::kOk;
    case EventArg::kKind:  // a copy's direction as text, or CUPTI's number
      if (*p == '"') return json_.String(p, end, &event->args.kind_text, &text_args_kind_);
      [[fallthrough]];
    case EventArg::kCopyKind:
      TFPROF_SCAN(json_.ReadInteger(p, end, &event->args.copy_kind, &present));
      event->args.has_copy_kind = present;
      return Scan::kOk;
    case EventArg::kBytes: {
      uint64_t bytes = 0;
      TFPROF_SCAN(json_.ReadUnsigned(p, end, &bytes, &present));
      if (present) event->args.bytes = bytes;
      return Scan::kOk;
    }
    case EventArg::kDevice:
      TFPROF_SCAN(json_.ReadInteger(p, end, &event->args.device, &present));
      event->args.has_device = present;
      return Scan::kOk;
    case EventArg::kStream:
      TFPROF_SCAN(json_.ReadInteger(p, end, &event->args.stream, &present));
      event->args.has_stream = present;
      return Scan::kOk;
    case EventArg::kIncomplete:
      event->args.incomplete = end - p >= 4 && std::string_view(p, 4) == "true";
      return json_.SkipValue(p, end, 2);
    case EventArg::kOp:
      return json_.ReadText(p, end, &event->args.op, &text_args_op_);
    case EventArg::kLabels:
      return json_.ReadText(p, end, &event->args_labels, &text_args_labels_);
    case EventArg::kGrid:
    case EventArg::kBlock:
      return DetailTriple(p, end, event, GpuDetailTriple(arg, &event->args.shape));
    case EventArg::kCorrelation:
    case EventArg::kExternalId:
    case EventArg::kContext:
    case EventArg::kCbid:
    case EventArg::kRegisters:
    case EventArg::kStaticShared:
    case EventArg::kDynamicShared:
    case EventArg::kGraphId:
    case EventArg::kDstDevice:
    case EventArg::kThread: {
      int64_t value = 0;
      TFPROF_SCAN(json_.ReadInteger(p, end, &value, &present));
      if (present) {
        SetGpuDetailInteger(arg, value, &event->args.detail, &event->args.shape);
        event->args.has_detail = true;
      }
      return Scan::kOk;
    }
    default:
      return OtherNumber(key, p, end, event);
  }
}

Scan ChromeJsonEventParser::Args(const char *&p, const char *end, ChromeJsonEvent *event) {
  if (*p != '{') return json_.SkipValue(p, end, 1);
  // The category, when it came first (tfprof and Kineto write it first), says which args the
  // kind keeps: the others are never copied.
  const CategoryRole role = RoleOfCategory(event->category);
  event->args.file_args_filtered =
      !event->category.empty() && role.role == Role::kActivity && event->phase == 'X';
  args_not_kept_ = event->phase == 'C' || event->phase == 'M'
                       ? ~uint64_t{0}  // counters and metadata: nothing to keep
                   : event->args.file_args_filtered ? ArgsNotKeptFor(role.kind)
                                                    : ArgsNotKeptFor(ActivityKind::kHostOp);
  TFPROF_SCAN(json_.ForEachCodedMember(
      p, end, 1, arg_keys_,
      [](std::string_view key) { return static_cast<uint8_t>(EventArgOf(key)); },
      [&](uint8_t code, std::string_view arg_key, const char *&q, const char *e) {
        const auto arg = static_cast<EventArg>(code);
        const char *const value = q;
        const Scan scan = ArgsMember(arg_key, arg, q, e, event);
        if (scan == Scan::kOk) KeepFileArg(arg_key, arg, value, q);
        return scan;
      }));
  if (saw_shared_parts_ && shared_end_ > shared_begin_) {
    // The separator before it, or after it when it came first.
    const bool first = shared_begin_ == 0;
    const size_t from = first ? 0 : shared_begin_;
    const size_t to = first && shared_end_ < file_args_.size() ? shared_end_ + 1 : shared_end_;
    file_args_.erase(from, to - from);
  }
  event->args.file_args = file_args_;
  return Scan::kOk;
}

namespace {

// "[x,y,z]" at `p` as tfprof and Kineto write launch shapes (no spaces, each a non-negative
// integer of at most 9 digits, so an int32) into `field`, `p` moved past it; false, with
// nothing moved, for anything else. Reads at most 31 bytes from `p`.
bool ReadPlainTriple(const char *&p, int32_t *field) {
  const char *q = p + 1;
  int32_t values[3];
  for (int axis = 0; axis < 3; ++axis) {
    if (!IsDigit(*q) || (*q == '0' && IsDigit(q[1]))) return false;  // JSON has no leading 0
    int32_t value = 0;
    const char *const first = q;
    while (IsDigit(*q) && q - first < 9) value = value * 10 + (*q++ - '0');
    if (*q != (axis < 2 ? ',' : ']')) return false;  // a tenth digit, a space, another item
    values[axis] = value;
    ++q;
  }
  std::copy(values, values + 3, field);
  p = q;
  return true;
}

}  // namespace

// "grid":[x,y,z] and "block":[x,y,z]; another number of items is no launch shape.
Scan ChromeJsonEventParser::DetailTriple(const char *&p, const char *end, ChromeJsonEvent *event,
                                         int32_t *field) {
  if (*p != '[') return json_.SkipValue(p, end, 2);
  if (end - p >= 32 && ReadPlainTriple(p, field)) {  // the common spelling, read straight
    event->args.detail.fields |= kGpuHasLaunchShape;
    event->args.has_detail = true;
    return Scan::kOk;
  }
  int axis = 0;
  const auto axis_item = [&](const char *&q, const char *e) {
    int64_t value = 0;
    bool present = false;
    TFPROF_SCAN(json_.ReadInteger(q, e, &value, &present));
    if (present && axis < 3) {
      field[axis] = static_cast<int32_t>(std::clamp<int64_t>(value, INT32_MIN, INT32_MAX));
    }
    ++axis;
    return Scan::kOk;
  };
  TFPROF_SCAN(json_.ForEachItem(p, end, 2, axis_item));
  if (axis == 3) {
    event->args.detail.fields |= kGpuHasLaunchShape;
    event->args.has_detail = true;
  }
  return Scan::kOk;
}

// Any other number: a counter's series (and a memset's "value"). NaN and the infinities come
// quoted (FormatDouble's spellings).
Scan ChromeJsonEventParser::OtherNumber(std::string_view key, const char *&p, const char *end,
                                        ChromeJsonEvent *event) {
  if (event->number_count == event->numbers.size()) return json_.SkipValue(p, end, 2);
  const auto add_number = [&](double value) {
    // The key is in the window (or a scratch string) only until the next key is read.
    const size_t slot = event->number_count++;
    number_keys_[slot].assign(key);
    event->numbers[slot] = {number_keys_[slot], value};
  };
  if (*p == '-' || IsDigit(*p)) {
    JsonNumber number;
    TFPROF_SCAN(json_.Number(p, end, &number));
    double value = 0;
    if (absl::SimpleAtod(ToAbsl(number.text), &value)) add_number(value);
    return Scan::kOk;
  }
  size_t size = 0;
  const std::string_view rest(p, static_cast<size_t>(end - p));
  if (const std::optional<double> value = NonFiniteAt(rest, &size)) {
    p += size;
    add_number(*value);
    return Scan::kOk;
  }
  return json_.SkipValue(p, end, 2);
}

}  // namespace tfprof
