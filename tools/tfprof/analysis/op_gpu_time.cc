#include "tools/tfprof/analysis/op_gpu_time.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace tfprof::cli {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr size_t kKernelsPerRow = 5;

bool IsOpSpan(ActivityKind kind) {
  return kind == ActivityKind::kHostOp || kind == ActivityKind::kPythonFunction;
}

bool IsIdentifier(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// What one span (or the work of no known op) launched, by kind.
struct Figures {
  uint64_t launches = 0;
  uint64_t kernels = 0;
  uint64_t copies = 0;
  int64_t gpu_ns = 0;
  int64_t copy_ns = 0;
  void Add(const Figures &other) {
    launches += other.launches;
    kernels += other.kernels;
    copies += other.copies;
    gpu_ns += other.gpu_ns;
    copy_ns += other.copy_ns;
  }
  void AddWork(const Activity &work) {
    const int64_t duration = work.end_ns - work.begin_ns;
    gpu_ns += duration;
    if (work.kind == ActivityKind::kKernel) {
      ++kernels;
    } else {
      ++copies;
      copy_ns += duration;
    }
  }
  bool Empty() const { return launches == 0 && kernels == 0 && copies == 0; }
};

// A host span open at some launch: spans are made nodes only when work is launched under them,
// parents before their children.
struct Node {
  uint32_t name = 0;
  uint32_t parent = kNone;
  bool outermost = true;  // no span of its name encloses it (recursion counts a name once)
};

// Where a launch call stood: the innermost open span, and the innermost op and layer among the
// open spans (kNone: none open).
struct LaunchedUnder {
  uint32_t innermost = kNone;
  uint32_t op = kNone;
  uint32_t layer = kNone;
};

bool operator==(const LaunchedUnder &a, const LaunchedUnder &b) {
  return a.innermost == b.innermost && a.op == b.op && a.layer == b.layer;
}

// One piece of GPU work (a Trace::activities index) and where it was launched:
// Attribution::unders_[under]. Launches under the same open spans share one entry there, and the
// pieces are listed by their `under` alone (Attribution::ForEachWork), 4 bytes each.
struct Work {
  uint32_t activity = 0;
  uint32_t under = 0;
};

class Attribution {
 public:
  Attribution(const Trace &trace, const HostSpansByTrack &spans)
      : trace_(trace), spans_(spans), unders_(1),  // unders_[0]: under no span
        is_layer_(trace.names.size(), -1), is_frame_(trace.names.size(), false) {}

  void Run() {
    for (const Process &process : trace_.processes) {
      single_recording_ = single_recording_ && process.group == 0;
    }
    dense_limit_ = 4 * trace_.gpu_details.size() + 1024;
    SizeLists();
    WalkThreads();
    AttributeWork();
  }

  bool IsLayer(uint32_t name) {
    if (is_layer_[name] < 0) is_layer_[name] = IsLayerSpanName(trace_.names.Get(name)) ? 1 : 0;
    return is_layer_[name] == 1;
  }

  const Trace &trace_;
  const HostSpansByTrack &spans_;
  std::vector<Node> nodes_;
  std::vector<Figures> direct_;  // by node: what was launched while it was the innermost span
  // Each piece of GPU work with its unders_ index, in the trace's order.
  template <typename Fn>
  void ForEachWork(Fn fn) const {
    size_t next = 0;
    for (uint32_t index = 0; index < trace_.activities.size(); ++index) {
      if (IsGpuWork(trace_.activities[index].kind)) fn(Work{index, under_of_work_[next++]});
    }
  }

  std::vector<uint32_t> under_of_work_;  // by piece of GPU work, in the trace's order
  std::vector<LaunchedUnder> unders_;  // what Work::under and the launch tables point at
  Figures no_op_;  // launched under no known op (perhaps inside a layer or Python frame)
  Figures all_;    // all GPU work
  std::vector<int64_t> self_ns_;         // by name id: op (or layer) self time
  std::vector<int8_t> is_layer_;         // by name id; -1 not yet known
  // By name id: a Python frame (with_stack, function tracing), which is code, not an op: work
  // under it counts for the ops and layers around and inside it, and it has no row.
  std::vector<bool> is_frame_;

 private:
  uint64_t Key(uint32_t track, uint32_t correlation) const {
    return (static_cast<uint64_t>(trace_.processes[trace_.tracks[track].process].group) << 32) |
           correlation;
  }

  std::optional<GpuDetail> DetailOf(const Activity &activity) const {
    return ActivityGpuDetail(trace_, activity);
  }

  uint32_t NewNode(uint32_t name, uint32_t parent, bool outermost) {
    nodes_.push_back({name, parent, outermost});
    direct_.emplace_back();
    return static_cast<uint32_t>(nodes_.size() - 1);
  }

  // The launch table and the work list sized once: grown by doubling, each would hold its old
  // and new copies at once, and both hold millions of entries in a large trace.
  void SizeLists() {
    size_t work = 0;
    uint32_t largest = 0;  // the largest correlation id of a launch kept in `dense_`
    for (const Activity &activity : trace_.activities) {
      if (IsGpuWork(activity.kind)) {
        ++work;
        continue;
      }
      if (activity.kind != ActivityKind::kRuntimeApi || !single_recording_) continue;
      const std::optional<GpuDetail> detail = DetailOf(activity);
      if (detail && (detail->fields & kGpuLaunchesWork) != 0 &&
          (detail->fields & kGpuHasCorrelation) != 0 && detail->correlation < dense_limit_) {
        largest = std::max(largest, detail->correlation);
      }
    }
    under_of_work_.reserve(work);
    if (largest > 0) dense_.assign(static_cast<size_t>(largest) + 1, kNone);
  }

  // Each thread's host spans in begin order with a stack of the open ops: a launch call makes
  // nodes of the spans open around it and records them under its correlation id.
  void WalkThreads() {
    struct Open {
      uint32_t activity;
      uint32_t node;
      bool outermost;
    };
    std::vector<Open> stack;
    std::vector<uint32_t> open_of_name(trace_.names.size(), 0);
    for (size_t track = 0; track + 1 < spans_.offsets.size(); ++track) {
      stack.clear();
      for (uint32_t i = spans_.offsets[track]; i < spans_.offsets[track + 1]; ++i) {
        const uint32_t index = spans_.order[i];
        const Activity &span = trace_.activities[index];
        while (!stack.empty() && trace_.activities[stack.back().activity].end_ns <= span.begin_ns) {
          --open_of_name[trace_.activities[stack.back().activity].name];
          stack.pop_back();
        }
        if (IsOpSpan(span.kind)) {
          stack.push_back({index, kNone, open_of_name[span.name] == 0});
          ++open_of_name[span.name];
          continue;
        }
        const std::optional<GpuDetail> detail = DetailOf(span);
        if (span.kind != ActivityKind::kRuntimeApi || !detail ||
            (detail->fields & kGpuLaunchesWork) == 0 ||
            (detail->fields & kGpuHasCorrelation) == 0) {
          continue;
        }
        LaunchedUnder under;
        uint32_t parent = kNone;
        for (Open &open : stack) {
          const Activity &op = trace_.activities[open.activity];
          if (open.node == kNone) open.node = NewNode(op.name, parent, open.outermost);
          parent = open.node;
          if (IsLayer(op.name)) {
            under.layer = open.node;
          } else if (op.kind == ActivityKind::kPythonFunction) {
            is_frame_[op.name] = true;
          } else {
            under.op = open.node;
          }
        }
        under.innermost = parent;
        if (parent != kNone) direct_[parent].launches += 1;
        if (under.op == kNone) no_op_.launches += 1;
        RememberLaunch(span.track, detail->correlation, under);
      }
      for (const Open &open : stack) --open_of_name[trace_.activities[open.activity].name];
    }
  }

  // Each piece of GPU work goes to its launch call's spans; without one, to the host op its
  // producer named (GpuDetail::op: tfprof's recorder, XPlane's tf_op) as a span of its own.
  void AttributeWork() {
    std::vector<uint32_t> named_node(trace_.names.size(), kNone);
    std::vector<uint32_t> named_under(trace_.names.size(), kNone);  // unders_ index by name
    self_ns_.assign(trace_.names.size(), 0);
    for (uint32_t index = 0; index < trace_.activities.size(); ++index) {
      const Activity &work = trace_.activities[index];
      if (!IsGpuWork(work.kind)) continue;
      uint32_t under_id = 0;
      bool found = false;
      if (const std::optional<GpuDetail> detail = DetailOf(work)) {
        if (detail->fields & kGpuHasCorrelation) {
          const uint32_t call = FindLaunch(work.track, detail->correlation);
          if (call != kNone) {
            under_id = call;
            found = unders_[call].innermost != kNone;
          }
        }
        // A call under no span has nothing open: its under is unders_[0]'s, all kNone.
        if (!found && detail->op != kNoName && detail->op < trace_.names.size()) {
          uint32_t &node = named_node[detail->op];
          if (node == kNone) node = NewNode(detail->op, kNone, true);
          uint32_t &named = named_under[detail->op];
          if (named == kNone) {
            LaunchedUnder under;
            under.innermost = node;
            (IsLayer(detail->op) ? under.layer : under.op) = node;
            named = static_cast<uint32_t>(unders_.size());
            unders_.push_back(under);
          }
          under_id = named;
        }
      }
      const LaunchedUnder under = unders_[under_id];
      const int64_t duration = work.end_ns - work.begin_ns;
      if (under.innermost != kNone) direct_[under.innermost].AddWork(work);
      if (under.op == kNone) no_op_.AddWork(work);
      all_.AddWork(work);
      if (under.op != kNone) self_ns_[nodes_[under.op].name] += duration;
      if (under.layer != kNone) self_ns_[nodes_[under.layer].name] += duration;
      under_of_work_.push_back(under_id);
    }
  }

  // Launch calls by correlation id: CUPTI counts them up from 1 in each recording, so a trace
  // of one recording indexes a vector by them; a merge's, or ids far sparser than the trace's
  // GPU records, go to a map by (recording, id). Id 0 is no id (CUPTI's ids start at 1; Kineto
  // and others write 0 where there is none): it links nothing (LinkLaunches' rule).
  void RememberLaunch(uint32_t track, uint32_t correlation, const LaunchedUnder &under) {
    if (correlation == 0) return;
    if (single_recording_ && correlation < dense_limit_) {
      if (correlation >= dense_.size()) {
        dense_.resize(std::min<size_t>(dense_limit_, std::max<size_t>(correlation + 1,
                                                                      2 * dense_.size())),
                      kNone);
      }
      uint32_t &slot = dense_[correlation];
      if (slot == kNone) slot = UnderId(under);
      return;
    }
    const uint64_t key = Key(track, correlation);
    if (!sparse_.contains(key)) sparse_.emplace(key, UnderId(under));
  }
  // The launch's unders_ index, kNone when none is known.
  uint32_t FindLaunch(uint32_t track, uint32_t correlation) const {
    if (correlation == 0) return kNone;
    if (correlation < dense_.size() && dense_[correlation] != kNone) return dense_[correlation];
    if (sparse_.empty()) return kNone;
    const auto found = sparse_.find(Key(track, correlation));
    return found == sparse_.end() ? kNone : found->second;
  }
  // Consecutive launches under the same open spans share the last entry.
  uint32_t UnderId(const LaunchedUnder &under) {
    if (!(unders_.back() == under)) unders_.push_back(under);
    return static_cast<uint32_t>(unders_.size() - 1);
  }

  bool single_recording_ = true;
  size_t dense_limit_ = 0;
  std::vector<uint32_t> dense_;  // unders_ index by correlation id; kNone: no launch
  absl::flat_hash_map<uint64_t, uint32_t> sparse_;
};

// The name scopes of TensorFlow op names, interned apart from the trace's names (they are not
// span names).
class Scopes {
 public:
  explicit Scopes(const Trace &trace) : trace_(trace), of_name_(trace.names.size()) {}
  // The scope ids of a name, outermost first.
  const std::vector<uint32_t> &Of(uint32_t name) {
    Cached &cached = of_name_[name];
    if (!cached.done) {
      cached.done = true;
      for (std::string_view scope : NameScopesOf(trace_.names.Get(name))) {
        const auto [it, added] = ids_.try_emplace(scope, static_cast<uint32_t>(names_.size()));
        if (added) names_.push_back(scope);
        cached.scopes.push_back(it->second);
      }
    }
    return cached.scopes;
  }
  const std::vector<std::string_view> &names() const { return names_; }

 private:
  struct Cached {
    bool done = false;
    std::vector<uint32_t> scopes;
  };
  const Trace &trace_;
  std::vector<Cached> of_name_;
  absl::flat_hash_map<std::string_view, uint32_t> ids_;
  std::vector<std::string_view> names_;  // views of the trace's names
};

OpGpuTime RowOf(std::string name, const Figures &total, int64_t self_ns, uint64_t calls,
                int64_t host_ns, int64_t gpu_work_ns) {
  OpGpuTime row;
  row.name = std::move(name);
  row.calls = calls;
  row.host_ns = host_ns;
  row.launches = total.launches;
  row.kernels = total.kernels;
  row.copies = total.copies;
  row.copy_ns = total.copy_ns;
  row.gpu_self_ns = self_ns;
  row.gpu_total_ns = total.gpu_ns;
  row.share = gpu_work_ns > 0
                  ? static_cast<double>(total.gpu_ns) / static_cast<double>(gpu_work_ns)
                  : 0;
  return row;
}

// Most GPU time first (ties: by name), at most `top` rows.
void SortAndCut(std::vector<OpGpuTime> *rows, size_t top) {
  std::sort(rows->begin(), rows->end(), [](const OpGpuTime &a, const OpGpuTime &b) {
    return a.gpu_total_ns != b.gpu_total_ns ? a.gpu_total_ns > b.gpu_total_ns : a.name < b.name;
  });
  if (rows->size() > top) rows->resize(top);
}

// The name with the most time in `by_name` (ties: the lowest id), kNone when all are 0.
uint32_t ArgMax(const std::vector<int64_t> &by_name) {
  uint32_t best = kNone;
  for (uint32_t name = 0; name < by_name.size(); ++name) {
    if (by_name[name] > 0 && (best == kNone || by_name[name] > by_name[best])) best = name;
  }
  return best;
}

}  // namespace

bool IsLayerSpanName(std::string_view name) {
  if (name.starts_with("nn.Module: ")) return name.size() > 11;
  // tfprof's module spans: "Net.encoder.0: Linear", "Net.fc: Linear (backward)": a dotted path
  // without spaces or brackets (a Python frame "model.py(28): forward" has them; an annotation
  // "epoch: train" has no dot).
  const size_t colon = name.find(": ");
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view path = name.substr(0, colon);
  if (path.find('.') == std::string_view::npos ||
      path.find_first_of(" ()[]<>:") != std::string_view::npos) {
    return false;
  }
  std::string_view cls = name.substr(colon + 2);
  if (cls.ends_with(" (backward)")) cls.remove_suffix(11);
  return IsIdentifier(cls);
}

std::vector<std::string_view> NameScopesOf(std::string_view name) {
  std::vector<std::string_view> scopes;
  if (name.find_first_of(" \t()<>") != std::string_view::npos ||
      name.find("::") != std::string_view::npos || name.find("//") != std::string_view::npos ||
      name.starts_with("/") || name.ends_with("/")) {
    return scopes;
  }
  const size_t last_slash = name.rfind('/');
  if (last_slash == std::string_view::npos) return scopes;
  // XPlane's tf_op "scope/name:OpType": the type after the last component is not a scope.
  const size_t type = name.find(':', last_slash);
  if (type != std::string_view::npos) name = name.substr(0, type);
  for (size_t slash = name.find('/'); slash != std::string_view::npos && slash < last_slash;
       slash = name.find('/', slash + 1)) {
    scopes.push_back(name.substr(0, slash));
  }
  scopes.push_back(name.substr(0, last_slash));
  return scopes;
}

void SummarizeGpuTimeByOp(const Trace &trace, const HostSpansByTrack &spans,
                          const StepIndex &step_index, const SummaryOptions &options,
                          TraceSummary *summary) {
  if (!summary->has_gpu) return;
  Attribution attribution(trace, spans);
  attribution.Run();
  const std::vector<Node> &nodes = attribution.nodes_;
  const size_t names = trace.names.size();
  const auto calls_of = [&](uint32_t name) {
    return name < spans.calls.size() ? spans.calls[name] : uint64_t{0};
  };
  const auto host_ns_of = [&](uint32_t name) {
    return name < spans.total_ns.size() ? spans.total_ns[name] : int64_t{0};
  };

  // Totals: each node's subtree (children come after their parents), summed per name over the
  // nodes no span of the same name encloses.
  std::vector<Figures> subtree = attribution.direct_;
  for (size_t node = nodes.size(); node-- > 0;) {
    if (nodes[node].parent != kNone) subtree[nodes[node].parent].Add(subtree[node]);
  }
  std::vector<Figures> total(names);
  std::vector<bool> has_node(names, false);
  for (size_t node = 0; node < nodes.size(); ++node) {
    has_node[nodes[node].name] = true;
    if (nodes[node].outermost) total[nodes[node].name].Add(subtree[node]);
  }
  const Figures &all = attribution.all_;
  summary->gpu_work_ns = all.gpu_ns;

  // TensorFlow name scopes: each piece of work counts once for every scope of the op it was
  // launched in (self: the op's own scope).
  Scopes scopes(trace);
  std::vector<Figures> scope_total;
  std::vector<int64_t> scope_self;
  attribution.ForEachWork([&](const Work &work) {
    const LaunchedUnder &under = attribution.unders_[work.under];
    if (under.op == kNone) return;
    const std::vector<uint32_t> &of = scopes.Of(nodes[under.op].name);
    if (of.empty()) return;
    if (scope_total.size() < scopes.names().size()) {
      scope_total.resize(scopes.names().size());
      scope_self.resize(scopes.names().size());
    }
    Figures figures;
    figures.AddWork(trace.activities[work.activity]);
    for (uint32_t scope : of) scope_total[scope].Add(figures);
    scope_self[of.back()] += figures.gpu_ns;
  });
  // A scope's calls, host time and launches are its ops': those of every name in it.
  std::vector<uint64_t> scope_calls(scope_total.size(), 0);
  std::vector<int64_t> scope_host_ns(scope_total.size(), 0);
  if (!scope_total.empty()) {
    for (uint32_t name = 0; name < names; ++name) {
      if (calls_of(name) == 0 && !has_node[name]) continue;
      for (uint32_t scope : scopes.Of(name)) {
        if (scope >= scope_total.size()) continue;
        scope_calls[scope] += calls_of(name);
        scope_host_ns[scope] += host_ns_of(name);
        if (!attribution.IsLayer(name)) scope_total[scope].launches += total[name].launches;
      }
    }
  }

  // The rows, and which row each name (scope) is, for the rows' top kernels.
  std::vector<OpGpuTime> ops, layers;
  for (uint32_t name = 0; name < names; ++name) {
    if (!has_node[name] || total[name].Empty() || attribution.is_frame_[name]) continue;
    (attribution.IsLayer(name) ? layers : ops)
        .push_back(RowOf(trace.names.Get(name), total[name], attribution.self_ns_[name],
                         calls_of(name), host_ns_of(name), all.gpu_ns));
  }
  if (!attribution.no_op_.Empty()) {
    ops.push_back(RowOf(std::string(kNoHostOpRow), attribution.no_op_, attribution.no_op_.gpu_ns, 0,
                        0, all.gpu_ns));
  }
  for (uint32_t scope = 0; scope < scope_total.size(); ++scope) {
    if (scope_total[scope].Empty()) continue;
    layers.push_back(RowOf(std::string(scopes.names()[scope]), scope_total[scope],
                           scope_self[scope], scope_calls[scope], scope_host_ns[scope], all.gpu_ns));
  }
  SortAndCut(&ops, options.top);
  SortAndCut(&layers, options.top);

  // Top kernels of the rows kept: each kernel walks up its spans once, counted once per row.
  std::vector<uint32_t> row_of_name(names, kNone);
  absl::flat_hash_map<std::string_view, uint32_t> row_of_scope;
  uint32_t no_op_row = kNone;
  std::vector<OpGpuTime *> rows;
  for (std::vector<OpGpuTime> *table : {&ops, &layers}) {
    for (OpGpuTime &row : *table) rows.push_back(&row);
  }
  {
    // Ops and module spans are rows of span names; the other layers are name scopes.
    absl::flat_hash_map<std::string_view, uint32_t> row_by_text;
    for (uint32_t row = 0; row < rows.size(); ++row) {
      if (row < ops.size() || IsLayerSpanName(rows[row]->name)) {
        row_by_text.emplace(rows[row]->name, row);
      } else {
        row_of_scope.emplace(rows[row]->name, row);
      }
    }
    for (uint32_t name = 0; name < names; ++name) {
      if (!has_node[name]) continue;
      const auto found = row_by_text.find(trace.names.Get(name));
      if (found != row_by_text.end()) row_of_name[name] = found->second;
    }
    if (const auto found = row_by_text.find(kNoHostOpRow); found != row_by_text.end()) {
      no_op_row = found->second;
    }
  }
  std::vector<uint32_t> scope_row(scopes.names().size(), kNone);
  for (uint32_t scope = 0; scope < scopes.names().size(); ++scope) {
    const auto found = row_of_scope.find(scopes.names()[scope]);
    if (found != row_of_scope.end()) scope_row[scope] = found->second;
  }
  absl::flat_hash_map<uint64_t, OpGpuTime::Kernel> row_kernels;  // (row, kernel name id)
  const auto add_kernel = [&](uint32_t row, const Activity &kernel) {
    OpGpuTime::Kernel &entry = row_kernels[(static_cast<uint64_t>(row) << 32) | kernel.name];
    ++entry.count;
    entry.total_ns += kernel.end_ns - kernel.begin_ns;
  };
  attribution.ForEachWork([&](const Work &work) {
    const Activity &kernel = trace.activities[work.activity];
    if (kernel.kind != ActivityKind::kKernel) return;
    const LaunchedUnder &under = attribution.unders_[work.under];
    if (under.op == kNone && no_op_row != kNone) add_kernel(no_op_row, kernel);
    for (uint32_t node = under.innermost; node != kNone; node = nodes[node].parent) {
      if (nodes[node].outermost && row_of_name[nodes[node].name] != kNone) {
        add_kernel(row_of_name[nodes[node].name], kernel);
      }
    }
    if (under.op == kNone || scope_row.empty()) return;
    for (uint32_t scope : scopes.Of(nodes[under.op].name)) {
      if (scope < scope_row.size() && scope_row[scope] != kNone) add_kernel(scope_row[scope], kernel);
    }
  });
  for (auto &[key, entry] : row_kernels) {
    entry.name = trace.names.Get(static_cast<uint32_t>(key & 0xffffffffu));
    rows[key >> 32]->top_kernels.push_back(entry);
  }
  for (OpGpuTime *row : rows) {
    std::sort(row->top_kernels.begin(), row->top_kernels.end(),
              [](const OpGpuTime::Kernel &a, const OpGpuTime::Kernel &b) {
                return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
              });
    if (row->top_kernels.size() > kKernelsPerRow) row->top_kernels.resize(kKernelsPerRow);
  }

  // By step (StepIndex's rule: the step of the launch), and the op that launched the most of
  // each top kernel. Name id `names` stands for "(no host op)".
  const uint32_t no_op_name = static_cast<uint32_t>(names);
  const auto op_name_of = [&](const Work &work) {
    const LaunchedUnder &under = attribution.unders_[work.under];
    return under.op == kNone ? no_op_name : nodes[under.op].name;
  };
  const auto name_text = [&](uint32_t name) {
    return name == no_op_name ? std::string(kNoHostOpRow) : trace.names.Get(name);
  };
  std::vector<int32_t> top_kernel_of_name(names, -1);
  {
    absl::flat_hash_map<std::string_view, int32_t> by_text;
    for (size_t index = 0; index < summary->top_kernels.size(); ++index) {
      by_text.emplace(summary->top_kernels[index].name, static_cast<int32_t>(index));
    }
    for (uint32_t name = 0; name < names && !by_text.empty(); ++name) {
      const auto found = by_text.find(trace.names.Get(name));
      if (found != by_text.end()) top_kernel_of_name[name] = found->second;
    }
  }
  absl::flat_hash_map<uint64_t, int64_t> by_step_and_op, by_kernel_and_op;
  std::vector<int64_t> in_steps_by_op(names + 1, 0);
  const bool per_step = summary->has_steps && summary->steps.size() == trace.steps.size();
  StepIndex::Hint step_hint;
  attribution.ForEachWork([&](const Work &work) {
    const Activity &activity = trace.activities[work.activity];
    const int64_t duration = activity.end_ns - activity.begin_ns;
    const uint32_t op = op_name_of(work);
    if (activity.kind == ActivityKind::kKernel && top_kernel_of_name[activity.name] >= 0) {
      by_kernel_and_op[(static_cast<uint64_t>(top_kernel_of_name[activity.name]) << 32) | op] +=
          duration;
    }
    if (!per_step) {
      in_steps_by_op[op] += duration;
      summary->step_total.gpu_launched_ns += duration;
      return;
    }
    const std::optional<size_t> step = step_index.Of(activity, &step_hint);
    if (!step) return;
    summary->steps[*step].gpu_launched_ns += duration;
    summary->step_total.gpu_launched_ns += duration;
    in_steps_by_op[op] += duration;
    by_step_and_op[(static_cast<uint64_t>(*step) << 32) | op] += duration;
  });
  const auto pick = [](absl::flat_hash_map<uint64_t, int64_t> &by_key, auto assign) {
    // The most time per first half of the key (ties: the lowest op id).
    absl::flat_hash_map<uint64_t, std::pair<int64_t, uint32_t>> best;
    for (const auto &[key, time] : by_key) {
      const uint32_t op = static_cast<uint32_t>(key & 0xffffffffu);
      auto [it, added] = best.try_emplace(key >> 32, time, op);
      if (!added && (time > it->second.first ||
                     (time == it->second.first && op < it->second.second))) {
        it->second = {time, op};
      }
    }
    for (const auto &[first, chosen] : best) {
      if (chosen.first > 0) assign(first, chosen.second);
    }
  };
  pick(by_step_and_op,
       [&](uint64_t step, uint32_t op) { summary->steps[step].top_gpu_op = name_text(op); });
  pick(by_kernel_and_op,
       [&](uint64_t kernel, uint32_t op) { summary->top_kernels[kernel].op = name_text(op); });
  if (const uint32_t best = ArgMax(in_steps_by_op); best != kNone) {
    summary->step_total.top_gpu_op = name_text(best);
  }
  summary->gpu_time_by_op = std::move(ops);
  summary->gpu_time_by_layer = std::move(layers);
}

}  // namespace tfprof::cli
