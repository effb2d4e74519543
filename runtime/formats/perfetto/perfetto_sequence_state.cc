#include "runtime/formats/perfetto/perfetto_sequence_state.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "runtime/common/proto_wire.h"
#include "runtime/common/string_view_bridge.h"
#include "runtime/formats/perfetto/perfetto_annotations.h"

namespace tfprof {

using namespace perfetto_fields;  // NOLINT: the field numbers, by message

// ---- interned ids ----

void IidTable::Set(uint64_t iid, uint32_t value) {
  ++entries_;
  if (iid >= dense_.size() && iid < 64 + 4 * entries_) {
    dense_.resize(static_cast<size_t>(iid) + 1, kAbsent);
    for (auto entry = sparse_.begin(); entry != sparse_.end();) {
      if (entry->first < dense_.size()) {
        dense_[entry->first] = entry->second;
        sparse_.erase(entry++);
      } else {
        ++entry;
      }
    }
  }
  if (iid < dense_.size()) {
    dense_[iid] = value;
  } else {
    sparse_[iid] = value;
  }
}

void IidTable::Clear() {
  dense_.clear();
  sparse_.clear();
  entries_ = 0;
}

void SequenceState::ClearIncremental() {
  names.Clear();
  categories.Clear();
  arg_names.Clear();
  arg_strings.Clear();
  has_default_clock = false;
  has_default_track = false;
  valid = true;
}

namespace {

// One interned entry: its iid and its text (field 2 of EventName, EventCategory,
// DebugAnnotationName and InternedString alike).
bool InternedEntry(std::string_view bytes, uint64_t *iid, std::string_view *text) {
  size_t at = 0;
  WireField field;
  *iid = 0;
  *text = {};
  while (NextWireField(bytes, &at, &field)) {
    if (field.number == 1 && field.wire_type == 0) *iid = field.varint;
    if (field.number == 2 && field.wire_type == 2) *text = field.payload;
  }
  return at == bytes.size();
}

}  // namespace

bool ReadInternedData(std::string_view bytes, SequenceState &sequence, CategoryTable &categories,
                      NameInterner &names, AnnotationTables &annotations) {
  size_t at = 0;
  WireField field;
  while (NextWireField(bytes, &at, &field)) {
    if (field.wire_type != 2) continue;
    uint64_t iid = 0;
    std::string_view text;
    switch (field.number) {
      case interned::kEventCategories:
        if (!InternedEntry(field.payload, &iid, &text)) return false;
        sequence.categories.Set(iid, categories.For(text));
        break;
      case interned::kEventNames:
        if (!InternedEntry(field.payload, &iid, &text)) return false;
        sequence.names.Set(iid, names.Intern(text));
        break;
      case interned::kAnnotationNames:
        if (!InternedEntry(field.payload, &iid, &text)) return false;
        sequence.arg_names.Set(iid, annotations.NameFor(text));
        break;
      case interned::kAnnotationStrings:
        if (!InternedEntry(field.payload, &iid, &text)) return false;
        sequence.arg_strings.Set(iid, annotations.StringFor(text));
        break;
      default:
        break;
    }
  }
  return at == bytes.size();
}

// ---- categories ----

uint32_t CategoryTable::For(std::string_view text) {
  auto [entry, added] = index_.try_emplace(ToAbsl(text), 0);
  if (added) {
    entry->second = static_cast<uint32_t>(categories_.size());
    Category category;
    category.text.assign(text);
    category.role = RoleOfCategory(text);
    category.driver = IsDriverCategory(text);
    static constexpr std::string_view kPytorch[] = {
        "cpu_op", "kernel", "cuda_runtime", "cuda_driver", "gpu_memcpy", "gpu_memset",
        "python_function", "gpu_user_annotation", "user_annotation", "ac2g", "Trace",
        "cuda_profiler_range", "Operator", "Runtime", "Kernel", "Memcpy", "Memset"};
    category.pytorch = std::find(std::begin(kPytorch), std::end(kPytorch), text) != std::end(kPytorch);
    categories_.push_back(std::move(category));
  }
  return entry->second;
}

// ---- clocks ----

int64_t PerfettoClocks::OtherClockToTraceTime(SequenceState &sequence, uint32_t clock,
                                              uint64_t raw) {
  if (clock >= kFirstSequenceClock && clock < kFirstSequenceClock + kSequenceClocks) {
    SequenceClock &state = sequence.clocks[clock - kFirstSequenceClock];
    uint64_t ns = raw * state.multiplier;
    if (state.incremental) {
      state.last_ns += ns;
      ns = state.last_ns;
    }
    return static_cast<int64_t>(state.offset_known ? ns + state.offset : ns);
  }
  auto found = global_offsets_.find(clock);
  return static_cast<int64_t>(found == global_offsets_.end() ? raw : raw + found->second);
}

void PerfettoClocks::Snapshot(const tfprof::perfetto::ClockSnapshot &snapshot,
                              SequenceState &sequence) {
  if (snapshot.has_primary_trace_clock() && !trace_clock_fixed_ &&
      snapshot.primary_trace_clock() != 0) {
    trace_clock_ = snapshot.primary_trace_clock();
  }
  trace_clock_fixed_ = true;
  // The trace clock's time at the snapshot, from the trace clock itself or a clock whose
  // offset an earlier snapshot gave.
  std::optional<uint64_t> anchor;
  std::optional<uint64_t> realtime;
  for (const auto &clock : snapshot.clocks()) {
    const uint64_t multiplier = clock.unit_multiplier_ns() != 0 ? clock.unit_multiplier_ns() : 1;
    const uint64_t ns = clock.timestamp() * multiplier;
    const uint32_t id = clock.clock_id();
    if (id == kRealTime) realtime = ns;
    if (id >= kFirstSequenceClock && id < kFirstSequenceClock + kSequenceClocks) {
      SequenceClock &state = sequence.clocks[id - kFirstSequenceClock];
      state.incremental = clock.is_incremental();
      state.multiplier = multiplier;
      state.last_ns = ns;
      continue;
    }
    if (id == trace_clock_) {
      anchor = ns;
    } else if (!anchor) {
      if (auto found = global_offsets_.find(id); found != global_offsets_.end()) {
        anchor = ns + found->second;
      }
    }
  }
  if (!anchor) return;
  for (const auto &clock : snapshot.clocks()) {
    const uint64_t multiplier = clock.unit_multiplier_ns() != 0 ? clock.unit_multiplier_ns() : 1;
    const uint64_t ns = clock.timestamp() * multiplier;
    const uint32_t id = clock.clock_id();
    if (id >= kFirstSequenceClock && id < kFirstSequenceClock + kSequenceClocks) {
      SequenceClock &state = sequence.clocks[id - kFirstSequenceClock];
      state.offset = *anchor - ns;
      state.offset_known = true;
    } else if (id != trace_clock_) {
      global_offsets_[id] = *anchor - ns;
    }
  }
  if (realtime && !snapshot_wall_offset_) {
    snapshot_wall_offset_ = static_cast<int64_t>(*realtime - *anchor);
  }
}

}  // namespace tfprof
