// `tfprof diff`'s comparison on hand-built summaries with known answers: per-step figures for runs
// of different lengths, new and gone rows, the order of rows, the headline, whole-trace figures
// when a side has no steps, and the text, JSON and HTML made from it.
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "doctest/doctest.h"
#include "tools/tfprof/analysis/diff_json.h"
#include "tools/tfprof/analysis/diff_text.h"
#include "tools/tfprof/analysis/trace_diff.h"
#include "tools/tfprof/report/diff_html.h"

namespace tfprof::cli {
namespace {

constexpr int64_t kMs = 1'000'000;

StepBreakdown Step(int64_t duration_ns) {
  StepBreakdown step;
  step.duration_ns = duration_ns;
  return step;
}

// Steps of the given lengths; the categories of step_total set by the caller.
TraceSummary WithSteps(const std::string &path, std::initializer_list<int64_t> durations) {
  TraceSummary s;
  s.path = path;
  s.format = "tfprof Chrome trace";
  s.has_steps = durations.size() > 0;
  s.step_total.number = -1;
  for (int64_t duration : durations) {
    s.steps.push_back(Step(duration));
    s.step_total.duration_ns += duration;
  }
  return s;
}

OpStat Op(const std::string &name, uint64_t count, int64_t self_ns, int64_t total_ns) {
  OpStat op;
  op.name = name;
  op.count = count;
  op.self_ns = self_ns;
  op.total_ns = total_ns;
  return op;
}

KernelStat Kernel(const std::string &name, uint64_t count, int64_t total_ns) {
  KernelStat kernel;
  kernel.name = name;
  kernel.count = count;
  kernel.total_ns = total_ns;
  return kernel;
}

// A: two steps (10 and 14 ms); B: four of 16 ms, `conv` twice as slow per step, relu replaced by
// gelu, kernel k1 a third slower per step.
TraceSummary Before() {
  TraceSummary a = WithSteps("a.json", {10 * kMs, 14 * kMs});
  a.step_total.gpu_compute_ns = 6 * kMs;
  a.step_total.host_compute_ns = 10 * kMs;
  a.step_total.input_wait_ns = 4 * kMs;
  a.step_total.memcpy_ns = 2 * kMs;
  a.step_total.idle_ns = 2 * kMs;
  a.top_ops_by_total = {Op("train_step", 2, 4 * kMs, 20 * kMs), Op("conv", 4, 8 * kMs, 10 * kMs),
                        Op("relu", 4, 2 * kMs, 2 * kMs)};
  a.top_kernels = {Kernel("k1", 8, 6 * kMs)};
  return a;
}

TraceSummary After() {
  TraceSummary b = WithSteps("b.json", {16 * kMs, 16 * kMs, 16 * kMs, 16 * kMs});
  b.step_total.gpu_compute_ns = 16 * kMs;
  b.step_total.host_compute_ns = 32 * kMs;
  b.step_total.input_wait_ns = 8 * kMs;
  b.step_total.memcpy_ns = 4 * kMs;
  b.step_total.idle_ns = 4 * kMs;
  b.top_ops_by_total = {Op("train_step", 4, 8 * kMs, 56 * kMs), Op("conv", 8, 32 * kMs, 36 * kMs),
                        Op("gelu", 8, 4 * kMs, 4 * kMs)};
  b.top_kernels = {Kernel("k1", 16, 16 * kMs)};
  return b;
}

const DiffSection &SectionOf(const TraceDiff &diff, const std::string &key) {
  for (const DiffSection &section : diff.sections) {
    if (section.key == key) return section;
  }
  FAIL("no section " << key);
  return diff.sections.front();
}

const DiffRow &RowOf(const DiffSection &section, const std::string &name) {
  for (const DiffRow &row : section.rows) {
    if (row.name == name) return row;
  }
  FAIL("no row " << name << " in " << section.key);
  return section.rows.front();
}

// The cells (split at spaces) of the row named `name` in the table titled `title` (the line that
// is `title`, or `title` and a parenthesis); empty when the table has no such row.
std::vector<std::string> CellsOf(const std::string &text, const std::string &title,
                                 const std::string &name) {
  std::istringstream lines(text);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line == title || line.rfind(title + " (", 0) == 0) {
      inside = true;
    } else if (inside && line.empty()) {
      break;
    } else if (inside && line.rfind("  " + name + " ", 0) == 0) {
      std::istringstream words(line);
      std::vector<std::string> cells;
      for (std::string cell; words >> cell;) cells.push_back(cell);
      return cells;
    }
  }
  return {};
}

TEST_CASE("diff: figures per step compare runs of different lengths") {
  const TraceDiff diff = DiffSummaries(Before(), After());
  CHECK_FALSE(diff.whole_trace);
  CHECK(diff.a.steps == 2);
  CHECK(diff.b.divisor == 4);

  const DiffSection &steps = SectionOf(diff, "step_time");
  REQUIRE(steps.rows.size() == 3);
  CHECK(steps.rows[0].name == "mean");
  CHECK(*steps.rows[0].a == 12 * kMs);
  CHECK(*steps.rows[0].b == 16 * kMs);
  CHECK(steps.rows[0].change == 4 * kMs);
  CHECK(*steps.rows[0].relative == doctest::Approx(1.0 / 3));
  CHECK(steps.rows[1].name == "median");
  CHECK(*steps.rows[1].a == 12 * kMs);  // the mean of the two middle values
  CHECK(steps.rows[2].name == "steps");
  CHECK(steps.rows[2].unit == DiffUnit::kCount);
  CHECK(steps.rows[2].change == 2);

  const DiffSection &categories = SectionOf(diff, "categories");
  CHECK(RowOf(categories, "compute").a == 8 * kMs);  // (6 + 10) / 2
  CHECK(RowOf(categories, "compute").b == 12 * kMs);  // (16 + 32) / 4
  CHECK(RowOf(categories, "input").change == 0);  // 4/2 and 8/4 ms per step
  CHECK(RowOf(categories, "input").status == "same");
  CHECK(RowOf(categories, "communication").status == "same");
  CHECK_FALSE(RowOf(categories, "communication").relative.has_value());

  const DiffSection &self = SectionOf(diff, "op_self");
  REQUIRE(self.rows.size() == 4);
  // Most changed first: conv 4 -> 8 ms per step, then gelu (new, 1 ms), relu (gone, 1 ms), then
  // train_step (2 -> 2 ms per step).
  CHECK(self.rows[0].name == "conv");
  CHECK(*self.rows[0].a == 4 * kMs);
  CHECK(*self.rows[0].b == 8 * kMs);
  CHECK(*self.rows[0].relative == 1.0);
  CHECK(self.rows[0].status == "changed");
  CHECK(*self.rows[0].a_calls == 4);
  CHECK(*self.rows[0].b_calls == 8);
  CHECK(self.rows[1].name == "gelu");
  CHECK(self.rows[1].status == "new");
  CHECK_FALSE(self.rows[1].a.has_value());
  CHECK_FALSE(self.rows[1].a_calls.has_value());
  CHECK(self.rows[1].change == 1 * kMs);
  CHECK_FALSE(self.rows[1].relative.has_value());
  CHECK(self.rows[2].name == "relu");
  CHECK(self.rows[2].status == "gone");
  CHECK(self.rows[2].change == -1 * kMs);
  CHECK(*self.rows[2].relative == -1.0);
  CHECK(self.rows[3].name == "train_step");
  CHECK(self.rows[3].status == "same");

  const DiffSection &total = SectionOf(diff, "op_total");
  CHECK(RowOf(total, "conv").change == 4 * kMs);  // 5 -> 9 ms per step
  CHECK(RowOf(total, "train_step").change == 4 * kMs);  // 10 -> 14 ms per step
  const DiffSection &kernels = SectionOf(diff, "kernels");
  CHECK(RowOf(kernels, "k1").a == 3 * kMs);
  CHECK(RowOf(kernels, "k1").b == 4 * kMs);

  CHECK(diff.headline == "Step time +33% (12 ms -> 16 ms); most of it: op conv self +4 ms per step");
}

TEST_CASE("diff: equal changes rank the larger figure first, then by name") {
  const TraceDiff diff = DiffSummaries(Before(), After());
  const DiffSection &total = SectionOf(diff, "op_total");
  // conv 5 -> 9 and train_step 10 -> 14 ms per step both move 4 ms: train_step is larger.
  REQUIRE(total.rows.size() == 4);
  CHECK(total.rows[0].name == "train_step");
  CHECK(total.rows[1].name == "conv");
}

TEST_CASE("diff: a summary against itself changes nothing") {
  const TraceDiff diff = DiffSummaries(After(), After());
  for (const DiffSection &section : diff.sections) {
    for (const DiffRow &row : section.rows) {
      CHECK_MESSAGE(row.change == 0, section.key << " " << row.name);
      CHECK(row.status == "same");
    }
  }
  CHECK(diff.headline == "Step time unchanged (16 ms); no figure changed");
}

TEST_CASE("diff: a side without steps compares whole-trace figures") {
  TraceSummary a = Before();
  OutsideSteps before;
  before.where = "before_first_step";
  before.breakdown.duration_ns = 6 * kMs;
  before.breakdown.host_compute_ns = 6 * kMs;
  a.outside_steps.push_back(before);
  TraceSummary b = WithSteps("b.json", {});
  b.step_total.duration_ns = 40 * kMs;
  b.step_total.host_compute_ns = 40 * kMs;
  b.top_ops_by_total = {Op("conv", 8, 20 * kMs, 20 * kMs)};

  const TraceDiff diff = DiffSummaries(a, b);
  CHECK(diff.whole_trace);
  CHECK(diff.a.divisor == 1);
  const DiffSection &steps = SectionOf(diff, "step_time");
  CHECK(steps.rows[0].name == "trace time");
  CHECK(*steps.rows[0].a == 30 * kMs);  // the steps' 24 ms and 6 ms before them
  CHECK(*steps.rows[0].b == 40 * kMs);
  CHECK(RowOf(SectionOf(diff, "categories"), "compute").a == 22 * kMs);  // 6 + 10 + 6
  CHECK(RowOf(SectionOf(diff, "op_self"), "conv").change == 12 * kMs);  // 8 -> 20 ms
  CHECK(diff.headline ==
        "Trace time +33% (30 ms -> 40 ms); most of it: op conv self +12 ms over the trace");
  const std::string text = DiffToText(diff, {});
  CHECK(text.find("B has no steps: the figures are over each whole trace") != std::string::npos);
}

TEST_CASE("diff: the headline names the largest change in the step time's direction") {
  TraceSummary faster = After();
  faster.top_ops_by_total.push_back(Op("sync", 4, 40 * kMs, 40 * kMs));  // 10 ms per step
  // Step time went up 4 ms; sync (new, +10 ms) moved more than conv (+4 ms) and in that direction.
  TraceDiff diff = DiffSummaries(Before(), faster);
  CHECK(diff.headline ==
        "Step time +33% (12 ms -> 16 ms); most of it: op sync self +10 ms per step");
  // Only a decrease against a step-time increase: nothing named "most of it".
  TraceSummary b = Before();
  b.steps[1].duration_ns += 2 * kMs;
  b.step_total.duration_ns += 2 * kMs;
  b.top_ops_by_total[1].self_ns -= 2 * kMs;
  diff = DiffSummaries(Before(), b);
  CHECK(diff.headline == "Step time +8.3% (12 ms -> 13 ms); no op or kernel time moved with it");
}

DeviceMemory Memory(const std::string &process, const std::string &label,
                    const std::string &source, int64_t peak_bytes) {
  DeviceMemory memory;
  memory.process_name = process;
  memory.label = label;
  memory.source = source;
  memory.peak_bytes = peak_bytes;
  return memory;
}

TEST_CASE("diff: memory peaks by device, in bytes, not per step") {
  TraceSummary a = Before();
  a.memory = {Memory("python", "GPU 0", "[memory] events", 4'000'000'000),
              Memory("python", "CPU", "[memory] events", 1'000'000)};
  TraceSummary b = After();
  b.memory = {Memory("python", "GPU 0", "[memory] events", 5'000'000'000),
              Memory("rank 1", "GPU 0", "[memory] events", 2'000'000'000),
              Memory("rank 1", "GPU 0", "CUPTI", 3'000'000'000)};
  const TraceDiff diff = DiffSummaries(a, b);
  const DiffSection &memory = SectionOf(diff, "memory_peak");
  CHECK_FALSE(memory.per_step);
  REQUIRE(memory.rows.size() == 5);
  // A's GPU 0 is alone; B's three are told apart by process, then (rank 1's) by source. The
  // most changed first: +5 GB, -4 GB, +3 GB, +2 GB, -1 MB.
  CHECK(memory.rows[0].name == "python GPU 0");
  CHECK(memory.rows[0].status == "new");
  CHECK(memory.rows[0].unit == DiffUnit::kBytes);
  CHECK(memory.rows[1].name == "GPU 0");
  CHECK(memory.rows[1].status == "gone");
  CHECK(memory.rows[2].name == "rank 1 GPU 0 (CUPTI)");
  CHECK(memory.rows[3].name == "rank 1 GPU 0 ([memory] events)");
  CHECK(memory.rows[4].name == "CPU");
  CHECK(*memory.rows[4].a == 1'000'000);  // not divided by the 2 steps
  // The same devices on both sides match by label.
  b.memory = {Memory("python", "GPU 0", "[memory] events", 5'000'000'000)};
  const TraceDiff same_devices = DiffSummaries(a, b);  // held: `gpu` points into it
  const DiffRow &gpu = RowOf(SectionOf(same_devices, "memory_peak"), "GPU 0");
  CHECK(gpu.change == 1'000'000'000);
  CHECK(*gpu.relative == 0.25);
  CHECK(CellsOf(DiffToText(DiffSummaries(a, b), {}), "Memory peak", "GPU") ==
        std::vector<std::string>{"GPU", "0", "4.00", "GB", "5.00", "GB", "+1.00", "GB", "+25.0%"});
}

OpGpuTime GpuTime(const std::string &name, uint64_t calls, int64_t gpu_total_ns) {
  OpGpuTime op;
  op.name = name;
  op.calls = calls;
  op.gpu_total_ns = gpu_total_ns;
  op.gpu_self_ns = gpu_total_ns / 2;  // not what the diff compares
  return op;
}

TEST_CASE("diff: GPU time by op and by layer, per step") {
  TraceSummary a = Before();
  a.gpu_time_by_op = {GpuTime("aten::conv2d", 4, 6 * kMs), GpuTime("aten::relu", 4, 2 * kMs)};
  a.gpu_time_by_layer = {GpuTime("model.layer1", 2, 8 * kMs)};
  TraceSummary b = a;
  b.gpu_time_by_op[0].gpu_total_ns = 10 * kMs;  // 3 -> 5 ms per step
  b.gpu_time_by_layer[0].gpu_total_ns = 12 * kMs;
  b.steps[1].duration_ns += 4 * kMs;
  b.step_total.duration_ns += 4 * kMs;
  const TraceDiff diff = DiffSummaries(a, b);
  const DiffSection &ops = SectionOf(diff, "op_gpu");
  CHECK(ops.per_step);
  CHECK(ops.has_calls);
  REQUIRE(ops.rows.size() == 2);
  CHECK(ops.rows[0].name == "aten::conv2d");
  CHECK(*ops.rows[0].a == 3 * kMs);
  CHECK(*ops.rows[0].b == 5 * kMs);
  CHECK(*ops.rows[0].a_calls == 4);
  CHECK(ops.rows[1].status == "same");
  CHECK(RowOf(SectionOf(diff, "layer_gpu"), "model.layer1").change == 2 * kMs);
  // The op's GPU time is what moved: named, ahead of the layer (which a headline never names).
  CHECK(diff.headline ==
        "Step time +17% (12 ms -> 14 ms); most of it: op aten::conv2d GPU +2 ms per step");
}

TEST_CASE("diff: text, JSON and HTML carry the rows") {
  const TraceDiff diff = DiffSummaries(Before(), After());
  DiffTextOptions text_options;
  text_options.rows = 2;
  const std::string text = DiffToText(diff, text_options);
  CHECK(text.rfind(diff.headline + "\n", 0) == 0);
  CHECK(CellsOf(text, "Ops by self time", "conv") ==
        std::vector<std::string>{"conv", "4", "8", "4.000", "8.000", "+4.000", "+100.0%"});
  CHECK(CellsOf(text, "Ops by self time", "gelu") ==
        std::vector<std::string>{"gelu", "-", "8", "-", "1.000", "+1.000", "new"});
  CHECK(CellsOf(text, "Ops by self time", "relu").empty());  // past --top
  CHECK(CellsOf(text, "Step time", "mean") ==
        std::vector<std::string>{"mean", "12.000", "ms", "16.000", "ms", "+4.000", "ms", "+33.3%"});
  CHECK(text.find("(2 more, 1 of them changed; --top N shows more, --json lists all)") !=
        std::string::npos);

  const nlohmann::json json = nlohmann::json::parse(DiffToJson(diff));
  CHECK(json["tfprof_diff_version"] == 1);
  CHECK(json["a"]["path"] == "a.json");
  CHECK(json["b"]["steps"] == 4);
  CHECK(json["whole_trace"] == false);
  CHECK(json["headline"] == diff.headline);
  const nlohmann::json &self = json["sections"][2];
  CHECK(self["key"] == "op_self");
  CHECK(self["per_step"] == true);
  REQUIRE(self["rows"].size() == 4);  // every row, whatever the text shows
  CHECK(self["rows"][0] == nlohmann::json::parse(
                               R"({"name":"conv","unit":"ns","a":4000000,"b":8000000,)"
                               R"("change":4000000,"relative":1,"status":"changed",)"
                               R"("a_calls":4,"b_calls":8})"));
  CHECK(self["rows"][1]["a"].is_null());
  CHECK(self["rows"][1]["relative"].is_null());
  CHECK(json["sections"][0]["rows"][0].count("a_calls") == 0);  // step time has no calls

  DiffHtmlOptions html_options;
  html_options.rows = 2;
  const std::string html = RenderDiffHtml(diff, html_options);
  CHECK(html.find("<table id=\"diff-op_self-table\"") != std::string::npos);
  CHECK(html.find("<tr data-name=\"conv\" data-status=\"changed\">") != std::string::npos);
  CHECK(html.find("<tr data-name=\"gelu\" data-status=\"new\">") != std::string::npos);
  CHECK(html.find("<tr data-name=\"relu\"") == std::string::npos);  // past --top
  CHECK(html.find("://") == std::string::npos);  // nothing loaded from anywhere
}

TEST_CASE("diff: names are escaped in the page and quoted in JSON") {
  TraceSummary a = Before();
  a.top_ops_by_total[1].name = "<script>\"x\"";
  const TraceDiff diff = DiffSummaries(a, a);
  const std::string html = RenderDiffHtml(diff, {});
  CHECK(html.find("<script>\"x\"") == std::string::npos);
  CHECK(html.find("&lt;script&gt;&quot;x&quot;") != std::string::npos);
  const nlohmann::json json = nlohmann::json::parse(DiffToJson(diff));
  CHECK(json["sections"][2]["rows"].size() == 3);
}

}  // namespace
}  // namespace tfprof::cli
