// Debug annotations (a TrackEvent's args): what the reader understands of them on the hot path
// (one name, one scalar or a launch shape's three integers, straight into EventArgs), and a whole
// annotation tree read for the trace info (as Perfetto's args_parser reads them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/perfetto/perfetto_sequence_state.h"
#include "runtime/model/event_args.h"
#include "runtime/model/trace.h"

namespace tfprof {

// The annotations the reader understands: the event args up to the trace-info dict, under the
// keys of runtime/model/event_args.h (the later ones are written for people, or are metadata).
using Arg = EventArg;

Arg ArgOf(std::string_view name);

// One annotation's value, as the hot path reads it (arrays: their first integers only). Only the
// member `type` names is set: one of these is made per annotation, and the rest is left alone.
struct ArgValue {
  enum Type : uint8_t { kNone, kInt, kUint, kDouble, kBool, kText } type = kNone;
  bool is_array = false;
  bool is_dict = false;
  int item_count = 0;  // > 3: more than a launch shape has
  int64_t i;
  uint64_t u;
  double d;
  std::string_view text;
  int32_t items[3];
};

// The value as an integer, when it is a number (or a bool).
bool AsInt(const ArgValue &value, int64_t *out);
bool AsDouble(const ArgValue &value, double *out);

// What a step's or a range's begin (or a range's end) said beyond a span's, kept per event.
struct Extra {
  int64_t step = 0;
  int64_t thread = 0;
  int64_t end_thread = 0;
  bool has_step = false;
  bool has_thread = false;
  bool has_end_thread = false;
};

// What an event's annotations said: the args both readers decode, and Perfetto's own.
struct EventArgs : DecodedArgs {
  Extra extra;
  double value = 0;  // a counter's, or a memset's
  bool has_value = false;
  bool has_tfprof = false;
  std::string_view tfprof;  // the "tfprof" annotation's bytes (the trace info's dict)

  // Back to no args: what an event without annotations reads.
  void Clear() {
    DecodedArgs::Clear();
    extra.has_step = extra.has_thread = extra.has_end_thread = false;
    has_value = has_tfprof = false;
  }
};

// A DebugAnnotation read whole (the trace info; never on the hot path).
struct ArgNode {
  std::string name;
  ArgValue::Type type = ArgValue::kNone;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string text;
  std::vector<ArgNode> entries;  // a dict's, or an array's items
  bool is_dict = false;
  bool is_array = false;

  const ArgNode *Find(std::string_view key) const;
  std::optional<int64_t> Int() const;
  std::optional<uint64_t> Uint() const;
};

// What an annotation means, as the Chrome reader reads the same arg (`bytes`: the annotation's).
void ApplyArg(Arg key, const ArgValue &value, std::string_view bytes, EventArgs *args);

// The file's annotation names and interned string values (each sequence's iids point here), and
// the readers of an annotation that need them.
class AnnotationTables {
 public:
  uint32_t NameFor(std::string_view text);
  uint32_t StringFor(std::string_view text) { return strings_.Intern(text); }

  // One annotation of the hot path: its name and value. False when its bytes are damaged.
  bool ScanArg(std::string_view bytes, const SequenceState &sequence, Arg *key,
               ArgValue *value) const;

  // A whole annotation, nested dicts and arrays included (to a depth). False when damaged.
  bool ReadArgNode(std::string_view bytes, const SequenceState &sequence, int depth,
                   ArgNode *node) const;

 private:
  // The arg an annotation's interned name stands for (kOther for an iid never interned).
  Arg KeyOfNameIid(const SequenceState &sequence, uint64_t iid) const {
    const uint32_t name = sequence.arg_names.Find(iid);
    return name == kAbsent ? Arg::kOther : keys_[name];
  }
  [[gnu::always_inline]] inline bool ScanPlainArg(std::string_view bytes,
                                                  const SequenceState &sequence, Arg *key,
                                                  ArgValue *value) const;
  bool ScanArgItem(std::string_view bytes, const SequenceState &sequence, ArgValue *value) const;
  bool ReadScalar(const WireField &field, const SequenceState &sequence, ArgValue *value) const;

  NameInterner names_;
  std::vector<Arg> keys_;  // per names_ index
  NameInterner strings_;
};

}  // namespace tfprof
