// `tfprof report`'s page, rendered from hand-built summaries: the sections and hooks the
// Chromium test (tests/tools/tfprof/test_report.py) relies on, escaping, nothing external, and the
// caps for long traces. Also the number formatting and chart helpers behind it.
#include <string>
#include <string_view>

#include "doctest/doctest.h"
#include "tools/tfprof/report/html_report.h"
#include "tools/tfprof/report/html_text.h"
#include "tools/tfprof/report/svg_charts.h"

namespace tfprof::cli {
namespace {

size_t Count(std::string_view text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

StepBreakdown Step(int64_t number, int64_t begin_ns) {
  StepBreakdown step;
  step.number = number;
  step.begin_ns = begin_ns;
  step.duration_ns = 100'000'000;
  step.gpu_compute_ns = 50'000'000;
  step.memcpy_ns = 5'000'000;
  step.input_wait_ns = 40'000'000;
  step.host_compute_ns = 3'000'000;
  step.idle_ns = 2'000'000;
  step.gpu_idle_ns = 45'000'000;
  step.kernels = 20;
  step.longest_input_op = "IteratorGetNext";
  return step;
}

// An input-bound training loop of `steps` steps of 100 ms on one GPU.
TraceSummary InputBoundSummary(int steps) {
  TraceSummary summary;
  summary.path = "/tmp/run <1>/trace.json";
  summary.format = "tfprof Chrome trace";
  summary.wall_offset_ns = 1'700'000'000'000'000'000;
  summary.pid = 4242;
  summary.hostname = "trainer-0";
  summary.events = 12345;
  summary.activities = 12000;
  summary.begin_ns = 1'000'000'000;
  summary.end_ns = summary.begin_ns + int64_t{steps} * 100'000'000;
  summary.has_gpu = true;
  summary.has_steps = true;
  summary.step_total.number = -1;
  for (int i = 0; i < steps; ++i) {
    summary.steps.push_back(Step(i, summary.begin_ns + int64_t{i} * 100'000'000));
    const StepBreakdown &step = summary.steps.back();
    StepBreakdown &total = summary.step_total;
    total.duration_ns += step.duration_ns;
    total.gpu_compute_ns += step.gpu_compute_ns;
    total.memcpy_ns += step.memcpy_ns;
    total.input_wait_ns += step.input_wait_ns;
    total.host_compute_ns += step.host_compute_ns;
    total.idle_ns += step.idle_ns;
    total.gpu_idle_ns += step.gpu_idle_ns;
    total.kernels += step.kernels;
  }
  summary.top_ops_by_self = {{"IteratorGetNext", ActivityKind::kHostOp, 5, 200'000'000,
                              200'000'000, 41'000'000},
                             {"train_step", ActivityKind::kPythonFunction, 5, 480'000'000,
                              15'000'000, 99'000'000}};
  summary.top_ops_by_total = {summary.top_ops_by_self[1], summary.top_ops_by_self[0]};
  summary.top_kernels = {
      {"void gemm<float, 128>(float const*, float*) & co", 50, 200'000'000, 3'000'000, 5'000'000,
       0.8},
      {"relu_kernel", 50, 50'000'000, 900'000, 1'100'000, 0.2}};
  summary.kernel_count = 100;
  summary.kernel_total_ns = 250'000'000;
  DeviceUtilization device;
  device.device = 0;
  device.busy_ns = 275'000'000;
  device.kernel_ns = 250'000'000;
  device.window_ns = 500'000'000;
  device.utilization = 0.55;
  device.timeline_begin_ns = summary.begin_ns;
  device.bucket_ns = 5'000'000;
  for (int i = 0; i < 100; ++i) device.timeline.push_back(i % 20 < 11 ? 1.0 : 0.0);
  summary.devices.push_back(device);
  summary.streams.push_back({"", 0, 7, 100, 10, 275'000'000, 0.55});
  summary.idle_gaps.push_back({"", 0, 1'060'000'000, 40'000'000, 0, "IteratorGetNext"});
  summary.idle_gap_count = 5;
  summary.copies.push_back({CopyKind::kHostToDevice, "HtoD", 5, 5u << 20, 25'000'000, 0.2});
  summary.losses.reported = true;
  Finding finding;
  finding.kind = "input_bound";
  finding.title = "Input-bound: the GPU waits for input 40% of step time";
  finding.evidence = "IteratorGetNext ran 40 ms of each 100 ms step while the GPU was idle";
  finding.recommendations = {"Prefetch: dataset.prefetch(tf.data.AUTOTUNE)",
                             "Parallelise map() with num_parallel_calls"};
  finding.steps = {0, 1, 2, 3, 4};
  summary.findings.push_back(finding);
  return summary;
}

}  // namespace

TEST_CASE("tools/html_report: escaping keeps markup out and the page valid UTF-8") {
  CHECK(HtmlEscape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(HtmlEscape("µs \xE2\x80\x93 ok") == "µs \xE2\x80\x93 ok");
  CHECK(HtmlEscape("bad\xFFz") == "bad\xEF\xBF\xBDz");
  CHECK(HtmlEscape("cut\xE2\x80") == "cut\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(HtmlEscape("overlong\xC0\xAF") == "overlong\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(HtmlEscape(std::string("nul\0x", 5)) == "nul\xEF\xBF\xBDx");
}

TEST_CASE("tools/html_report: numbers for people") {
  CHECK(FormatDuration(0) == "0 ns");
  CHECK(FormatDuration(850) == "850 ns");
  CHECK(FormatDuration(12'345) == "12.3 \xC2\xB5s");
  CHECK(FormatDuration(4'560'000) == "4.56 ms");
  CHECK(FormatDuration(999'999'999) == "1.00 s");
  CHECK(FormatDuration(125e9) == "2 min 5 s");
  CHECK(FormatPercent(0.401) == "40.1%");
  CHECK(FormatPercent(0) == "0%");
  CHECK(FormatPercent(1) == "100%");
  CHECK(FormatPercent(0.0001) == "<0.1%");
  CHECK(FormatCount(1234567) == "1,234,567");
  CHECK(FormatCount(12) == "12");
  CHECK(FormatBytes(512) == "512 B");
  CHECK(FormatBytes(5u << 20) == "5.00 MiB");
  CHECK(SvgNumber(1.006) == "1.01");
  CHECK(SvgNumber(-0.001) == "0");
  CHECK(SvgNumber(12.5) == "12.5");
  CHECK(FormatOffset(1.5e9) == "+1.500 s");
  CHECK(FormatUtc(1'700'000'000'000'000'000) == "2023-11-14 22:13:20 UTC");
}

TEST_CASE("tools/html_report: axis ticks are round and cover the maximum") {
  CHECK(NiceTicks(100e6, 5) == std::vector<double>{0, 20e6, 40e6, 60e6, 80e6, 100e6});
  const std::vector<double> ticks = NiceTicks(123, 5);
  CHECK(ticks.back() >= 123);
  CHECK(ticks[1] == 50);
  CHECK(NiceTicks(0, 5) == std::vector<double>{0, 1});
  CHECK(AxisTimeLabel(250e6, AxisTimeUnit(1e9)) == "0.25 s");
  CHECK(AxisTimeLabel(250e6, AxisTimeUnit(300e6)) == "250 ms");
}

TEST_CASE("tools/html_report: the page has every section and one bar per step") {
  const TraceSummary summary = InputBoundSummary(5);
  const std::string html = RenderHtmlReport(summary, {});
  CHECK(html.starts_with("<!DOCTYPE html>"));
  for (const char *id : {"overview", "diagnosis", "step-time", "gpu-utilization", "top-ops",
                         "top-kernels", "streams", "idle-gaps", "copies", "losses"}) {
    INFO(id);
    CHECK(Count(html, std::string("<section id=\"") + id + "\"") == 1);
  }
  CHECK(Count(html, "<section") == Count(html, "</section>"));
  CHECK(Count(html, "<table") == Count(html, "</table>"));
  CHECK(Count(html, "<svg") == Count(html, "</svg>"));
  CHECK(Count(html, "class=\"step-bar\"") == 5);
  CHECK(Count(html, "data-step=\"4\"") == 2);  // its bar and its table row
  CHECK(Count(html, "class=\"seg seg-input_wait\"") == 5);
  CHECK(html.find("<article class=\"finding\" data-kind=\"input_bound\">") != std::string::npos);
  CHECK(html.find("Input-bound: the GPU waits for input 40% of step time") != std::string::npos);
  CHECK(html.find("class=\"util-line\"") != std::string::npos);
  CHECK(html.find("id=\"no-gpu\"") == std::string::npos);
  CHECK(html.find("id=\"no-losses\"") != std::string::npos);
  CHECK(html.find("2023-11-14 22:13:21 UTC") != std::string::npos);  // first activity
}

TEST_CASE("tools/html_report: names are escaped and nothing is fetched") {
  TraceSummary summary = InputBoundSummary(3);
  summary.top_kernels[1].name = "</script><img src=\"https://example.com/x.png\">";
  summary.hostname = "<b>host</b>";
  const std::string html = RenderHtmlReport(summary, {});
  CHECK(html.find("void gemm&lt;float, 128&gt;(float const*, float*) &amp; co") !=
        std::string::npos);
  CHECK(html.find("gemm<float") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<b>host</b>") == std::string::npos);
  CHECK(html.find("/tmp/run &lt;1&gt;/trace.json") != std::string::npos);
  CHECK(Count(html, "</script>") == 1);  // the page's own
  // Nothing that loads: no src attribute, no external link, a policy that forbids fetching.
  CHECK(html.find("src=\"") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("href=\"http") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("default-src 'none'") != std::string::npos);
}

TEST_CASE("tools/html_report: a trace without GPU or steps says so") {
  TraceSummary summary;
  summary.path = "cpu.json";
  summary.format = "Chrome trace";
  summary.end_ns = 1000;
  const std::string html = RenderHtmlReport(summary, {});
  CHECK(html.find("id=\"no-gpu\"") != std::string::npos);
  CHECK(html.find("No GPU activity in this trace") != std::string::npos);
  CHECK(html.find("id=\"no-steps\"") != std::string::npos);
  CHECK(html.find("data-kind=\"none\"") != std::string::npos);
  CHECK(html.find("class=\"step-bar") == std::string::npos);
  CHECK(html.find("does not say whether the recorder lost") != std::string::npos);
}

TEST_CASE("tools/html_report: the step table leaves out GPU columns without GPU activity") {
  TraceSummary summary = InputBoundSummary(3);
  CHECK(RenderHtmlReport(summary, {}).find("<th class=\"num\">GPU idle</th>") !=
        std::string::npos);
  summary.has_gpu = false;
  summary.devices.clear();
  summary.streams.clear();
  summary.top_kernels.clear();
  const std::string html = RenderHtmlReport(summary, {});
  CHECK(html.find("<th class=\"num\">GPU idle</th>") == std::string::npos);
  CHECK(html.find("<th class=\"num\">Kernels</th>") == std::string::npos);
  CHECK(html.find("<th class=\"num\">Input wait</th>") != std::string::npos);
  CHECK(html.find("id=\"no-gpu\"") != std::string::npos);
}

TEST_CASE("tools/html_report: time outside the steps has rows below the totals") {
  TraceSummary summary = InputBoundSummary(3);
  OutsideSteps before;
  before.where = "before_first_step";
  before.stretches = 1;
  before.breakdown.duration_ns = 812'000'000;
  before.breakdown.host_compute_ns = 800'000'000;
  before.top_ops = {{"build_model", 600'000'000}, {"initialize <vars>", 150'000'000}};
  OutsideSteps after;  // under 1 ms: no row
  after.where = "after_last_step";
  after.breakdown.duration_ns = 400'000;
  summary.outside_steps = {before, after};
  const std::string html = RenderHtmlReport(summary, {});
  const size_t row = html.find("<tr class=\"outside\" data-outside=\"before_first_step\">");
  REQUIRE(row != std::string::npos);
  CHECK(row > html.find("<tr class=\"total\">"));
  const std::string cells = html.substr(row, html.find("</tr>", row) - row);
  CHECK(cells.find("before steps") != std::string::npos);
  CHECK(cells.find("812") != std::string::npos);
  CHECK(cells.find("mostly build_model, initialize &lt;vars&gt;") != std::string::npos);
  CHECK(Count(html, "class=\"outside\"") == 1);
}

TEST_CASE("tools/html_report: long traces are drawn in groups and the table is capped") {
  TraceSummary summary = InputBoundSummary(1203);
  summary.damage = "trace.json: byte 99: unexpected end of file";
  const std::string html = RenderHtmlReport(summary, HtmlReportOptions{});
  // 1203 steps, at most 500 bars: groups of 3, so 401 bars.
  CHECK(Count(html, "class=\"step-bar step-group\"") == 401);
  CHECK(html.find("data-first-step=\"1200\" data-last-step=\"1202\" data-steps=\"3\"") !=
        std::string::npos);
  CHECK(html.find("id=\"step-chart-note\"") != std::string::npos);
  CHECK(Count(html, "<tr data-step=") == 1000);
  CHECK(html.find("id=\"step-table-note\"") != std::string::npos);
  CHECK(html.find("byte 99: unexpected end of file") != std::string::npos);
  CHECK(Count(html, "class=\"step-mark\"") == 0);  // too many steps to mark
}

TEST_CASE("tools/html_report: charts") {
  StackedBarChart chart;
  chart.id = "c";
  chart.series = {{"a", "A", "#000"}, {"b", "B", "#fff"}};
  chart.bars = {{" data-step=\"1\"", "1", "one", {1e6, 2e6}},
                {" data-step=\"2\"", "2", "two", {0, 4e6}}};
  const std::string svg = RenderStackedBarChart(chart);
  CHECK(Count(svg, "class=\"bar\" data-step=") == 2);
  CHECK(Count(svg, "class=\"seg seg-b\"") == 2);
  CHECK(Count(svg, "class=\"seg seg-a\"") == 1);  // zero parts are not drawn
  CHECK(svg.find("<title>one</title>") != std::string::npos);
  CHECK(svg.find(">4 ms<") != std::string::npos);  // the top tick

  TimelineChart timeline;
  timeline.id = "t";
  timeline.values = {0, 0.5, 1};
  timeline.bucket_ns = 1e6;
  timeline.mean = 0.5;
  const std::string line = RenderTimelineChart(timeline);
  CHECK(line.find("class=\"util-line\" d=\"M48 154H394.67V82H741.33V10H1088\"") !=
        std::string::npos);
  CHECK(Count(line, "class=\"bucket\"") == 3);
  CHECK(line.find("mean 50.0%") != std::string::npos);
}

}  // namespace tfprof::cli
