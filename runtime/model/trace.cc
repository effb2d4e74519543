#include "runtime/model/trace.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/common/insert_or_reset.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

const char *ActivityKindName(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kHostOp: return "host_op";
    case ActivityKind::kPythonFunction: return "python_function";
    case ActivityKind::kRuntimeApi: return "runtime_api";
    case ActivityKind::kKernel: return "kernel";
    case ActivityKind::kMemcpy: return "memcpy";
    case ActivityKind::kMemset: return "memset";
    case ActivityKind::kGpuAnnotation: return "gpu_annotation";
    case ActivityKind::kRange: return "range";
    case ActivityKind::kInstant: return "instant";
    case ActivityKind::kSync: return "sync";
    case ActivityKind::kOverhead: return "overhead";
  }
  return "unknown";
}

const char *InputFormatName(const Trace &trace) {
  if (IsChromeJson(trace.format)) {
    switch (trace.producer) {
      case Producer::kTfprof: return "tfprof Chrome trace";
      case Producer::kPytorch: return "PyTorch profiler Chrome trace";
      case Producer::kTensorFlow: return "TensorFlow timeline Chrome trace";
      default: return "Chrome trace";
    }
  }
  if (trace.format == Format::kPerfetto) {
    switch (trace.producer) {
      case Producer::kTfprof: return "tfprof Perfetto trace";
      case Producer::kPytorch: return "PyTorch profiler Perfetto trace";
      default: return "Perfetto trace";
    }
  }
  return FormatName(trace.format);
}

std::optional<TimeExtent> EventExtent(const Trace &trace) {
  if (trace.activities.empty() && trace.steps.empty()) return std::nullopt;
  TimeExtent extent{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  const auto extend = [&](int64_t begin_ns, int64_t end_ns) {
    extent.begin_ns = std::min(extent.begin_ns, begin_ns);
    extent.end_ns = std::max(extent.end_ns, end_ns);
  };
  for (const Activity &activity : trace.activities) extend(activity.begin_ns, activity.end_ns);
  for (const Step &step : trace.steps) extend(step.begin_ns, step.end_ns);
  return extent;
}

FileFactsMap AppendFileFacts(const Trace &input, const std::vector<uint32_t> &names,
                             const std::vector<uint32_t> &track_at, GpuDetails::Bases detail_bases,
                             int64_t shift_ns, Trace *merged) {
  FileFactsMap map;
  map.category_at.assign(input.categories.size() + 1, kDefaultCategory);
  for (size_t index = 0; index < input.categories.size(); ++index) {
    const auto found =
        std::find(merged->categories.begin(), merged->categories.end(), input.categories[index]);
    if (found != merged->categories.end()) {
      map.category_at[index + 1] = static_cast<uint8_t>(found - merged->categories.begin() + 1);
    } else if (merged->categories.size() < 255) {
      merged->categories.push_back(input.categories[index]);
      map.category_at[index + 1] = static_cast<uint8_t>(merged->categories.size());
    }
  }
  map.args_base = static_cast<uint32_t>(merged->file_args.size());
  for (uint32_t index = 0; index < input.file_args.size(); ++index) {
    merged->file_args.Add(input.file_args.Get(index));
  }
  for (const auto &[detail, args] : input.gpu_file_args) {
    merged->gpu_file_args.emplace(GpuDetails::Rebased(detail, detail_bases), args + map.args_base);
  }
  merged->flows_as_read = merged->flows_as_read || input.flows_as_read;
  for (Flow flow : input.flows) {
    flow.ns += shift_ns;
    flow.name = names[flow.name];
    if ((flow.flags & kFlowIdIsText) != 0 && flow.id < names.size()) flow.id = names[flow.id];
    flow.track = track_at[flow.track];
    flow.category = map.Category(flow.category);
    merged->flows.push_back(flow);
  }
  return map;
}

NameInterner &NameInterner::operator=(const NameInterner &other) {
  // Copied whole first: a failed copy leaves this one as it was, its index still viewing its own
  // names.
  if (this != &other) *this = NameInterner(other);
  return *this;
}

void NameInterner::Reindex() {
  // Sized first, in one allocation; a failure leaves an empty index (InsertOrReset), never a
  // corrupt one that the destructor would then walk.
  InsertOrReset(index_, [&] {
    index_.clear();
    index_.reserve(names_.size());
    for (size_t index = 0; index < names_.size(); ++index) {
      index_.emplace(ToAbsl(names_[index]), static_cast<uint32_t>(index));
    }
  });
}

size_t NameInterner::RecentSlot(std::string_view name) {
  uint64_t first = 0;
  uint64_t last = 0;
  if (name.size() >= 8) {
    std::memcpy(&first, name.data(), 8);
    std::memcpy(&last, name.data() + name.size() - 8, 8);
  } else if (!name.empty()) {
    std::memcpy(&first, name.data(), name.size());
  }
  // Names that differ only in their middle share a slot; Intern's comparison tells them apart.
  const uint64_t mixed = (first ^ (last * 0x9E3779B97F4A7C15ull) ^ name.size()) *
                         0xBF58476D1CE4E5B9ull;
  return static_cast<size_t>(mixed >> 55) % kRecentSlots;
}

uint32_t NameInterner::Intern(std::string_view name) {
  uint32_t &recent = recent_[RecentSlot(name)];
  // (Checked against the size, not kNoName alone: a moved-from interner keeps its slots.)
  if (recent < names_.size() && names_[recent] == name) return recent;
  if (auto found = index_.find(ToAbsl(name)); found != index_.end()) {
    recent = found->second;
    return recent;
  }
  const auto index = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  InsertOrReset(index_, [&] { return index_.emplace(ToAbsl(names_.back()), index); });
  recent = index;
  return index;
}

namespace {

// Whether `detail` holds nothing beyond a CallDetail's members.
bool FitsCallDetail(const GpuDetail &detail) {
  return detail.launch_ns == kNoStep && detail.thread_id == 0 && detail.op == kNoName &&
         detail.shape == 0 && detail.copy_direction == 0;
}

}  // namespace

uint32_t GpuDetails::Add(ActivityKind kind, const GpuDetail &detail) {
  if (!IsGpuWork(kind) && FitsCallDetail(detail) && calls_.size() < kCallBit - 1) {
    calls_.push_back({detail.external_id, detail.correlation, detail.context, detail.callback_id,
                      detail.fields});
    return kCallBit | static_cast<uint32_t>(calls_.size() - 1);
  }
  // Whole ones' indices must leave the top bit clear (past 2^31 details, ~100 GB: kept none).
  if (work_.size() >= kCallBit) return kNoDetail;
  work_.push_back(detail);
  return static_cast<uint32_t>(work_.size() - 1);
}

void GpuDetails::AddFields(uint32_t index, uint8_t fields) {
  if ((index & kCallBit) == 0) {
    if (index < work_.size()) work_[index].fields |= fields;
  } else if (const uint32_t at = index & ~kCallBit; at < calls_.size()) {
    calls_[at].fields |= fields;
  }
}

void GpuDetails::Append(const GpuDetails &other) {
  work_.insert(work_.end(), other.work_.begin(), other.work_.end());
  calls_.insert(calls_.end(), other.calls_.begin(), other.calls_.end());
}

GpuWorkShapes &GpuWorkShapes::operator=(const GpuWorkShapes &other) {
  // Copied whole first: a failed copy leaves this one as it was, its index still pointing at
  // its own shapes.
  if (this != &other) *this = GpuWorkShapes(other);
  return *this;
}

void GpuWorkShapes::Reindex() {
  last_ = 0;
  // Sized first, in one allocation; a failure leaves an empty index (InsertOrReset), never a
  // corrupt one, so the destructor that runs when a copy fails is safe.
  InsertOrReset(index_, [&] {
    index_.clear();
    index_.reserve(shapes_.size());
    for (size_t at = 0; at < shapes_.size(); ++at) {
      index_.emplace(&shapes_[at], static_cast<uint32_t>(at + 1));
    }
  });
}

size_t GpuWorkShapes::PointeeHash::operator()(const GpuWorkShape *shape) const {
  // The shape's seven words, multiplied and folded: cheaper than a general hash of 56 bytes,
  // and shapes differ in a few small numbers, which the multiplications spread.
  uint64_t words[sizeof(GpuWorkShape) / 8];
  std::memcpy(words, shape, sizeof(words));
  uint64_t hash = 0x9e3779b97f4a7c15ULL;
  for (const uint64_t word : words) hash = (hash ^ word) * 0xff51afd7ed558ccdULL;
  return static_cast<size_t>(hash ^ (hash >> 32));
}

uint32_t GpuWorkShapes::Intern(const GpuWorkShape &shape) {
  // Most details (API calls, syncs, copies) have no shape: index 0, found without a lookup.
  if (shape == Get(0)) return 0;
  if (last_ != 0 && shape == Get(last_)) return last_;
  if (auto found = index_.find(&shape); found != index_.end()) return last_ = found->second;
  const auto index = static_cast<uint32_t>(shapes_.size() + 1);
  shapes_.push_back(shape);
  InsertOrReset(index_, [&] { return index_.emplace(&shapes_.back(), index); });
  return last_ = index;
}

}  // namespace tfprof
