// What a Perfetto trace's packet sequences carry from packet to packet: interned ids, default
// clock and track, the sequence's pid, and the clocks that put each timestamp on the trace's clock
// (as Perfetto's track_event_sequence_state and clock_tracker do for the trace processor).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/formats/chrome/chrome_categories.h"
#include "runtime/formats/perfetto/perfetto_fields.h"
#include "runtime/model/trace.h"
#include "tfprof/perfetto/perfetto_trace.pb.h"

namespace tfprof {

class AnnotationTables;

// "No such entry" in the reader's tables.
inline constexpr uint32_t kAbsent = UINT32_MAX;
// The clocks of one sequence: ids 64..127.
inline constexpr uint32_t kSequenceClocks = 64;

// A sequence's iid -> value table: a vector while the ids are dense (writers count from 1), a hash
// map for the rest, so that a hostile iid costs no memory.
class IidTable {
 public:
  uint32_t Find(uint64_t iid) const {
    if (iid < dense_.size()) return dense_[iid];
    if (sparse_.empty()) return kAbsent;
    auto found = sparse_.find(iid);
    return found == sparse_.end() ? kAbsent : found->second;
  }

  void Set(uint64_t iid, uint32_t value);
  void Clear();

 private:
  std::vector<uint32_t> dense_;
  absl::flat_hash_map<uint64_t, uint32_t> sparse_;
  uint64_t entries_ = 0;
};

struct SequenceClock {
  bool incremental = false;
  bool offset_known = false;
  uint64_t multiplier = 1;
  uint64_t last_ns = 0;   // incremental: the last timestamp, in ns of this clock
  uint64_t offset = 0;    // trace clock = this clock + offset (wrapping)
};

// A packet sequence's state (trusted_packet_sequence_id).
struct SequenceState {
  IidTable names;       // -> Trace::names
  IidTable categories;  // -> CategoryTable
  IidTable arg_names;   // -> AnnotationTables::names
  IidTable arg_strings; // -> AnnotationTables::strings
  bool has_default_clock = false;
  uint32_t default_clock = 0;
  bool has_default_track = false;
  uint64_t default_track = 0;
  bool has_pid = false;
  int64_t pid = 0;
  bool valid = true;  // false from a lost packet to the next clearing of the incremental state
  std::array<SequenceClock, kSequenceClocks> clocks;

  void ClearIncremental();
};

// Every sequence of the file, by id.
class SequenceTable {
 public:
  SequenceState &Sequence(uint32_t id) {
    if (last_ != nullptr && last_id_ == id) return *last_;
    std::unique_ptr<SequenceState> &state = sequences_[id];
    if (state == nullptr) state = std::make_unique<SequenceState>();
    last_ = state.get();
    last_id_ = id;
    return *state;
  }

 private:
  absl::flat_hash_map<uint32_t, std::unique_ptr<SequenceState>> sequences_;
  SequenceState *last_ = nullptr;
  uint32_t last_id_ = 0;
};

// The trace's clock and every other clock's offset from it, as clock snapshots give them.
class PerfettoClocks {
 public:
  // `raw` on clock `clock` (0: already on the trace's clock) in ns on the trace's clock. Wrapping
  // arithmetic: a hostile file gets nonsense times, never undefined behaviour.
  int64_t ToTraceTime(SequenceState &sequence, uint32_t clock, uint64_t raw) {
    trace_clock_fixed_ = true;
    if (clock == 0 || clock == trace_clock_) return static_cast<int64_t>(raw);
    return OtherClockToTraceTime(sequence, clock, raw);
  }

  void Snapshot(const tfprof::perfetto::ClockSnapshot &snapshot, SequenceState &sequence);

  // Wall clock - trace clock, from the first snapshot that gave both.
  std::optional<int64_t> wall_offset() const { return snapshot_wall_offset_; }

 private:
  int64_t OtherClockToTraceTime(SequenceState &sequence, uint32_t clock, uint64_t raw);

  uint32_t trace_clock_ = perfetto_fields::kBootTime;
  bool trace_clock_fixed_ = false;
  absl::flat_hash_map<uint32_t, uint64_t> global_offsets_;  // trace clock = clock + offset
  std::optional<int64_t> snapshot_wall_offset_;
};

// A category of the file (an interned EventCategory or an event's inline one).
struct Category {
  std::string text;
  CategoryRole role;
  bool driver = false;
  bool pytorch = false;  // one the PyTorch profiler writes
  bool used = false;
  uint64_t unknown_events = 0;
};

// The file's categories; index 0 is "no category".
class CategoryTable {
 public:
  CategoryTable() { For(""); }

  uint32_t For(std::string_view text);
  Category &operator[](uint32_t index) { return categories_[index]; }
  const std::vector<Category> &all() const { return categories_; }

 private:
  std::vector<Category> categories_;
  absl::flat_hash_map<std::string, uint32_t> index_;
};

// An InternedData message's entries, into the sequence's iid tables (and the tables they point
// into). False when its bytes are damaged.
bool ReadInternedData(std::string_view bytes, SequenceState &sequence, CategoryTable &categories,
                      NameInterner &names, AnnotationTables &annotations);

}  // namespace tfprof
