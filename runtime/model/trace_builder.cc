#include "runtime/model/trace_builder.h"

#include <algorithm>

#include "runtime/common/string_view_bridge.h"
#include "runtime/model/launch_links.h"
#include "runtime/model/step_index.h"

namespace tfprof {

namespace {

void Report(bool *added, bool value) {
  if (added != nullptr) *added = value;
}

}  // namespace

uint32_t TraceBuilder::MakeProcess(Process process) {
  trace_->processes.push_back(std::move(process));
  return static_cast<uint32_t>(trace_->processes.size() - 1);
}

uint32_t TraceBuilder::MakeRow(Track row) {
  trace_->tracks.push_back(std::move(row));
  return static_cast<uint32_t>(trace_->tracks.size() - 1);
}

uint32_t TraceBuilder::ProcessFor(int64_t pid, bool *added) {
  auto [entry, made] = process_by_pid_.try_emplace(pid, 0);
  Report(added, made);
  if (made) {
    Process process;
    process.pid = pid;
    entry->second = MakeProcess(std::move(process));
  }
  return entry->second;
}

std::optional<uint32_t> TraceBuilder::FindProcess(int64_t pid) const {
  auto found = process_by_pid_.find(pid);
  if (found == process_by_pid_.end()) return std::nullopt;
  return found->second;
}

uint32_t TraceBuilder::NamedProcess(std::string_view name, uint32_t group, bool *added) {
  auto [entry, made] = process_by_name_.try_emplace(std::make_pair(group, std::string(name)), 0);
  Report(added, made);
  if (made) {
    Process process;
    process.pid = static_cast<int64_t>(trace_->processes.size()) + first_pid_;
    process.name = std::string(name);
    process.group = group;
    entry->second = MakeProcess(std::move(process));
  }
  return entry->second;
}

uint32_t TraceBuilder::ThreadRow(uint32_t process, int64_t tid, bool *added) {
  auto [entry, made] = row_by_tid_.try_emplace(std::make_pair(process, tid), 0);
  Report(added, made);
  if (made) entry->second = NewRow(process, tid);
  return entry->second;
}

uint32_t TraceBuilder::ThreadRowByPid(int64_t pid, int64_t tid, bool *added) {
  auto [entry, made] = row_by_pid_tid_.try_emplace(std::make_pair(pid, tid), 0);
  if (made) {
    entry->second = ThreadRow(ProcessFor(pid), tid, added);
  } else {
    Report(added, false);
  }
  return entry->second;
}

std::optional<uint32_t> TraceBuilder::FindThreadRowByPid(int64_t pid, int64_t tid) const {
  auto found = row_by_pid_tid_.find(std::make_pair(pid, tid));
  if (found == row_by_pid_tid_.end()) return std::nullopt;
  return found->second;
}

uint32_t TraceBuilder::NamedRow(uint32_t process, std::string_view name, TrackKind kind,
                                int64_t tid, bool *added) {
  auto [entry, made] = row_by_name_.try_emplace(std::make_pair(process, std::string(name)), 0);
  Report(added, made);
  if (made) entry->second = NewRow(process, tid, name, kind);
  return entry->second;
}

uint32_t TraceBuilder::CounterRow(uint32_t process, bool *added) {
  auto [entry, made] = counter_rows_.try_emplace(process, 0);
  Report(added, made);
  if (made) entry->second = NewRow(process, 0, {}, TrackKind::kCounters);
  return entry->second;
}

uint32_t TraceBuilder::NewRow(uint32_t process, int64_t tid, std::string_view name,
                              TrackKind kind) {
  Track row;
  row.process = process;
  row.tid = tid;
  row.name = std::string(name);
  row.kind = kind;
  return MakeRow(std::move(row));
}

uint8_t TraceBuilder::Category(std::string_view category, std::string_view own) {
  if (category == own) return kDefaultCategory;
  auto found = category_index_.find(ToAbsl(category));
  if (found != category_index_.end()) return found->second;
  if (trace_->categories.size() >= 255) return kDefaultCategory;  // a producer gone wild
  trace_->categories.emplace_back(category);
  const auto index = static_cast<uint8_t>(trace_->categories.size());
  category_index_.emplace(std::string(category), index);
  return index;
}

void TraceBuilder::Finish() {
  std::stable_sort(trace_->steps.begin(), trace_->steps.end(),
                   [](const Step &a, const Step &b) { return a.begin_ns < b.begin_ns; });
  if (!unknown_categories_.empty()) {
    trace_->unknown_categories.assign(unknown_categories_.begin(), unknown_categories_.end());
  }
  if (!trace_->gpu_details.empty()) LinkLaunches(*trace_);  // nothing to link without details
  AssignSteps(*trace_);
}

}  // namespace tfprof
