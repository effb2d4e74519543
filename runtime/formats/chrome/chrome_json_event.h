// One element of a Chrome trace's "traceEvents" array, parsed into its members and the args
// tfprof and Kineto write, before the reader interprets it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/common/json_scanner.h"
#include "runtime/model/event_args.h"
#include "runtime/model/trace.h"

namespace tfprof {

// A pid or tid: a number, or a string (Kineto writes "Spans", "stream 7").
struct IdValue {
  bool present = false;
  bool is_text = false;
  int64_t number = 0;
  std::string_view text;
};

// One event as parsed. Views point into the scanner's window or into the parser's scratch
// strings, valid until the next event is parsed. A view added here must also be kept by
// KeepOutsideWindow() (chrome_json_batch.cc), which moves events off the parser's scratch.
struct ChromeJsonEvent {
  char phase = 0;
  std::string_view text;  // the whole event's JSON text (set by the reader)
  std::string_view name;
  std::string_view category;
  std::string_view id;
  bool id_is_text = false;     // "id" was a string
  bool id_after_category = false;  // "cat" came before "id", as in tfprof's own launch arrows
  bool binds_enclosing = false;  // a flow's "bp":"e"
  std::string_view args_name;
  IdValue pid;
  IdValue tid;
  int64_t ts = 0;  // ns
  int64_t dur = 0;  // ns
  int64_t step = 0;
  bool has_step = false;
  char scope = 0;  // an instant's "s": 't' thread, 'p' process, 'g' global
  DecodedArgs args;  // the args both readers decode (device, stream, bytes, GPU details, ...)
  std::string_view args_labels;  // process_labels metadata
  // Numeric args of other names, for counters ("C"): up to four series per event.
  std::array<std::pair<std::string_view, double>, 4> numbers;
  size_t number_count = 0;
};

class ChromeJsonEventParser {
 public:
  explicit ChromeJsonEventParser(JsonScanner &json) : json_(json) {}

  // The event object at `p` (on its '{') into `*event`, which starts empty.
  Scan Parse(const char *&p, const char *end, ChromeJsonEvent *event);

 private:
  // Member() and ArgsMember() run once per member: inlined into the walks over them (defined
  // in chrome_json_event.cc before their one caller each), they save a call's cost per member.
  // The member whose key has EventKey `code`.
  [[gnu::always_inline]] inline Scan Member(uint8_t code, const char *&p, const char *end,
                                            ChromeJsonEvent *event);
  Scan Args(const char *&p, const char *end, ChromeJsonEvent *event);
  Scan ReadMicros(const char *&p, const char *end, std::string_view what, int64_t *nanos);
  Scan ReadIdValue(const char *&p, const char *end, IdValue *id, std::string *scratch);
  Scan ReadId(const char *&p, const char *end, std::string_view *id);
  [[gnu::always_inline]] inline Scan ArgsMember(std::string_view key, EventArg arg,
                                                const char *&p, const char *end,
                                                ChromeJsonEvent *event);
  // The member `key` whose value is [value, value_end) kept for the event's file args.
  // (Most args are not kept: this short check is inlined, the copy is not.)
  void KeepFileArg(std::string_view key, EventArg arg, const char *value, const char *value_end);
  [[gnu::noinline]] void AppendFileArg(std::string_view key, EventArg arg, const char *value,
                                       const char *value_end);
  uint64_t args_not_kept_ = 0;  // ArgsNotKeptFor() the event's kind, while its args are read
  // A kept "shared memory" member's place in file_args_, dropped when the static and dynamic
  // parts come too (tfprof writes their sum again).
  size_t shared_begin_ = 0, shared_end_ = 0;
  bool saw_shared_parts_ = false;
  Scan DetailTriple(const char *&p, const char *end, ChromeJsonEvent *event, int32_t *field);
  Scan OtherNumber(std::string_view key, const char *&p, const char *end, ChromeJsonEvent *event);

  JsonScanner &json_;
  // The keys of the events' members and of their args, as they came before.
  JsonKeyMemory event_keys_, arg_keys_;
  // Decoded strings of the event being parsed.
  std::string text_phase_, text_name_, text_category_, text_id_, text_pid_, text_tid_,
      text_args_name_, text_args_kind_, text_args_op_, text_args_labels_;
  std::array<std::string, 4> number_keys_;
  std::string file_args_;  // DecodedArgs::file_args
};

}  // namespace tfprof
