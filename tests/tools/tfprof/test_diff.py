"""`tfprof diff A B`: a trace against itself changes nothing; one op made twice as slow comes
first with +100%; a PyTorch trace against its `tfprof convert` changes nothing (the comparison
goes through each side's summary, whatever the format); the HTML page holds the rows; errors."""

from __future__ import annotations

import gzip
import html.parser
import json
import pathlib
import statistics
from typing import Dict, List

import pytest

from conftest import ROOT, build_dir, run_tfprof
# The report's browser fixture and helpers (the browser test skips, saying why, without
# chromium, chromedriver or selenium).
from test_report import browser, console_errors, open_page, requested_urls  # noqa: F401
from tfprof_trace_builder import MS, US, TfprofTrace

REAL = ROOT / "tests" / "data" / "real"
PYTORCH_TRACES = [
    "kineto/tb_plugin/test/gpu_metrics_input.json",
    "kineto/tb_plugin/samples/resnet50_num_workers_0/"
    "worker0.1623143089861.pt.trace.trimmed-1step.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
]

STEPS = 5


def program(conv_ns: int, steps: int = STEPS) -> TfprofTrace:
    """A training loop: each step runs forward (conv, then relu) and optimizer back to back on
    the main thread, and two kernels; only conv's length depends on `conv_ns`."""
    trace = TfprofTrace().thread(1, "MainThread")
    at = 0
    for index in range(steps):
        begin = at
        trace.span("forward", at, at + conv_ns + 1 * MS)
        trace.span("conv", at, at + conv_ns)
        trace.kernel("sgemm_kernel", at + 100 * US, at + 2 * MS, correlation=2 * index + 1)
        at += conv_ns
        trace.span("relu", at, at + 1 * MS)
        at += 1 * MS
        trace.span("optimizer", at, at + 2 * MS)
        trace.kernel("adam_kernel", at + 100 * US, at + 600 * US, correlation=2 * index + 2)
        at += 2 * MS
        trace.step(index + 1, begin, at)
    return trace


def diff_json(exe, a, b, *extra) -> dict:
    return json.loads(run_tfprof(exe, "diff", "--json", *extra, str(a), str(b)).stdout)


def section(diff: dict, key: str) -> List[dict]:
    [found] = [s for s in diff["sections"] if s["key"] == key]
    return found["rows"]


def rows_by_name(diff: dict, key: str) -> Dict[str, dict]:
    return {row["name"]: row for row in section(diff, key)}


def table_rows(text: str, title: str) -> List[List[str]]:
    """The rows (cells split at spaces, header first) of the text table under `title`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line == title or line.startswith(title + " ("))
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("  ") or line.startswith("  ("):
            break
        rows.append(line.split())
    return rows


def test_a_trace_against_itself_is_all_zeros_in_text_and_json(tfprof_exe, tmp_path):
    path = program(4 * MS).write(tmp_path / "run.json")
    diff = diff_json(tfprof_exe, path, path)
    assert diff["tfprof_diff_version"] == 1
    assert diff["whole_trace"] is False
    assert diff["a"]["steps"] == diff["b"]["steps"] == STEPS
    assert [s["key"] for s in diff["sections"]] == [
        "step_time", "categories", "op_self", "op_total", "kernels", "op_gpu", "layer_gpu",
        "memory_peak"]
    assert section(diff, "memory_peak") == []  # the trace says nothing of memory
    rows = [row for s in diff["sections"] for row in s["rows"]]
    assert len(rows) >= 3 + 5 + 4 + 4 + 2
    for row in rows:
        assert row["change"] == 0, row
        assert row["status"] == "same", row
        assert row["a"] == row["b"], row
    assert diff["headline"] == "Step time unchanged (7 ms); no figure changed"

    text = run_tfprof(tfprof_exe, "diff", str(path), str(path)).stdout
    assert text.splitlines()[0] == diff["headline"]
    for title in ("Step time", "Where the step time went", "Ops by self time",
                  "Ops by total time", "Kernels by time"):
        table = table_rows(text, title)
        assert len(table) >= 3, title
        for cells in table[1:]:
            # change and change % are the last cells ("0.000 ms" in mixed tables).
            change = cells[-3] if cells[-2] == "ms" else cells[-2]
            assert change in ("0", "0.000"), (title, cells)
            assert cells[-1] == "0.0%", (title, cells)


def test_the_op_made_twice_as_slow_comes_first_with_plus_100_percent(tfprof_exe, tmp_path):
    before = program(4 * MS).write(tmp_path / "before.json")
    after_trace = program(8 * MS)
    after = after_trace.write(tmp_path / "after.json")
    diff = diff_json(tfprof_exe, before, after)

    # Independently of tfprof: conv's time per step in each file's events.
    def conv_per_step(path: pathlib.Path) -> float:
        events = json.loads(path.read_text())["traceEvents"]
        return sum(e["dur"] * 1000 for e in events if e.get("name") == "conv") / STEPS

    first = section(diff, "op_self")[0]
    assert first["name"] == "conv"
    assert first["a"] == conv_per_step(before) == 4 * MS
    assert first["b"] == conv_per_step(after) == 8 * MS
    assert first["change"] == 4 * MS
    assert first["relative"] == 1
    assert first["status"] == "changed"
    assert first["a_calls"] == first["b_calls"] == STEPS
    # Nothing else's own time moved.
    for row in section(diff, "op_self")[1:]:
        assert row["change"] == 0, row
    total = rows_by_name(diff, "op_total")
    assert total["forward"]["change"] == 4 * MS  # it holds conv
    assert total["optimizer"]["change"] == 0
    steps = rows_by_name(diff, "step_time")
    assert steps["mean"]["a"] == 7 * MS and steps["mean"]["b"] == 11 * MS
    assert steps["median"]["change"] == 4 * MS
    assert section(diff, "kernels")[0]["change"] == 0
    assert diff["headline"] == (
        "Step time +57% (7 ms -> 11 ms); most of it: op conv self +4 ms per step")

    text = run_tfprof(tfprof_exe, "diff", str(before), str(after)).stdout
    assert text.splitlines()[0] == diff["headline"]
    header, first_row = table_rows(text, "Ops by self time")[:2]
    assert header[0] == "op"
    assert first_row == ["conv", "5", "5", "4.000", "8.000", "+4.000", "+100.0%"]


def test_runs_of_different_lengths_compare_per_step(tfprof_exe, tmp_path):
    short = program(4 * MS, steps=3).write(tmp_path / "short.json")
    long = program(4 * MS, steps=9).write(tmp_path / "long.json")
    diff = diff_json(tfprof_exe, short, long)
    assert diff["a"]["steps"] == 3 and diff["b"]["steps"] == 9
    assert rows_by_name(diff, "step_time")["steps"]["change"] == 6
    for key in ("categories", "op_self", "op_total", "kernels"):
        for row in section(diff, key):
            assert row["change"] == 0, (key, row)
            assert row["status"] == "same"
    assert rows_by_name(diff, "op_self")["conv"]["b_calls"] == 9


def test_a_new_and_a_gone_op_are_marked(tfprof_exe, tmp_path):
    a = program(4 * MS).write(tmp_path / "a.json")
    b_trace = program(4 * MS)
    b_trace.span("checkpoint", b_trace.end_ns, b_trace.end_ns + 5 * MS)  # after the last step
    document = b_trace.document()
    document["traceEvents"] = [e for e in document["traceEvents"] if e.get("name") != "relu"]
    b = tmp_path / "b.json"
    b.write_text(json.dumps(document))
    rows = rows_by_name(diff_json(tfprof_exe, a, b), "op_self")
    assert rows["relu"]["status"] == "gone"
    assert rows["relu"]["b"] is None and rows["relu"]["b_calls"] is None
    assert rows["relu"]["change"] == -1 * MS
    assert rows["relu"]["relative"] == -1
    assert rows["checkpoint"]["status"] == "new"
    assert rows["checkpoint"]["a"] is None and rows["checkpoint"]["relative"] is None
    assert rows["checkpoint"]["b"] == 1 * MS  # 5 ms over 5 steps
    text = run_tfprof(tfprof_exe, "diff", str(a), str(b)).stdout
    marks = {cells[0]: cells[-1] for cells in table_rows(text, "Ops by self time")[1:]}
    assert marks["relu"] == "gone" and marks["checkpoint"] == "new"


def ops_in(path: pathlib.Path) -> Dict[str, int]:
    """Operator spans per name, counted in the PyTorch file itself."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        document = json.load(f)
    events = document["traceEvents"] if isinstance(document, dict) else document
    counts: Dict[str, int] = {}
    for e in events:
        # ProfilerStep#N spans are the steps, not ops.
        if (e.get("ph") == "X" and e.get("cat", "").lower() in ("cpu_op", "operator")
                and not e["name"].startswith("ProfilerStep#")):
            counts[e["name"]] = counts.get(e["name"], 0) + 1
    return counts


def step_durations_ns(path: pathlib.Path) -> List[float]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        document = json.load(f)
    events = document["traceEvents"] if isinstance(document, dict) else document
    return [e["dur"] * 1000 for e in events
            if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]


@pytest.mark.parametrize("relative", PYTORCH_TRACES)
def test_a_pytorch_trace_against_its_conversion_changes_nothing(tfprof_exe, tmp_path, relative):
    original = REAL / relative
    converted = tmp_path / "converted.json"
    run_tfprof(tfprof_exe, "convert", str(original), "-o", str(converted))
    diff = diff_json(tfprof_exe, original, converted)
    assert diff["a"]["format"] == "PyTorch profiler Chrome trace"
    assert diff["b"]["format"] == "tfprof Chrome trace"
    for key in ("step_time", "categories", "op_self", "op_total", "kernels", "op_gpu",
                "layer_gpu", "memory_peak"):
        for row in section(diff, key):
            assert row["change"] == 0, (key, row)
            assert row["status"] == "same", (key, row)
    # The summary's memory peaks (its own figures, checked against the files elsewhere) are the
    # diff's A.
    summary = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(original)).stdout)
    devices = summary["traces"][0]["memory"]["devices"] if summary["traces"][0]["memory"] else []
    assert sorted(row["a"] for row in section(diff, "memory_peak")) == sorted(
        d["peak_bytes"] for d in devices)
    # A's figures against the file itself: the steps' mean and median, op calls.
    durations = step_durations_ns(original)
    steps = rows_by_name(diff, "step_time")
    assert diff["a"]["steps"] == len(durations)
    assert steps["mean"]["a"] == pytest.approx(statistics.mean(durations), abs=1)
    assert steps["median"]["a"] == pytest.approx(statistics.median(durations), abs=1)
    ops = rows_by_name(diff, "op_self")
    for name, count in ops_in(original).items():
        assert ops[name]["a_calls"] == count, name


def test_the_html_page_parses_and_holds_the_rows(tfprof_exe, tmp_path):
    before = program(4 * MS).write(tmp_path / "before.json")
    after = program(8 * MS).write(tmp_path / "after.json")
    page = tmp_path / "diff.html"
    result = run_tfprof(tfprof_exe, "diff", str(before), str(after), "--html", str(page),
                        "--top", "3")
    assert result.stdout.splitlines()[0].startswith("Step time +57%")
    assert f"wrote {page}" in result.stderr

    class Page(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: Dict[str, List[Dict[str, str]]] = {}
            self.table = ""
            self.headline = ""
            self.in_headline = False
            self.sources: List[str] = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            for key in ("src", "href"):
                if key in a:
                    self.sources.append(a[key])
            if tag == "table":
                self.table = a["id"]
                self.tables[self.table] = []
            elif tag == "tr" and "data-name" in a:
                self.tables[self.table].append(a)
            elif tag == "h3" and a.get("id") == "headline":
                self.in_headline = True

        def handle_endtag(self, tag):
            if tag == "h3":
                self.in_headline = False

        def handle_data(self, data):
            if self.in_headline:
                self.headline += data

    parsed = Page()
    parsed.feed(page.read_text())
    parsed.close()
    assert parsed.headline == (
        "Step time +57% (7 ms -> 11 ms); most of it: op conv self +4 ms per step")
    assert set(parsed.tables) >= {"diff-step_time-table", "diff-categories-table",
                                  "diff-op_self-table", "diff-op_total-table",
                                  "diff-kernels-table"}
    assert [r["data-name"] for r in parsed.tables["diff-step_time-table"]] == [
        "mean", "median", "steps"]
    self_rows = parsed.tables["diff-op_self-table"]
    assert len(self_rows) == 3  # --top 3 of the 4 ops
    assert self_rows[0] == {"data-name": "conv", "data-status": "changed"}
    assert all(r["data-status"] == "same" for r in self_rows[1:])
    # Nothing is loaded from anywhere: only in-page links and the empty icon.
    assert all(s.startswith("#") or s == "data:," for s in parsed.sources), parsed.sources


def test_a_trace_without_steps_is_compared_whole(tfprof_exe, tmp_path):
    stepped = program(4 * MS).write(tmp_path / "stepped.json")
    document = program(4 * MS).document()
    document["traceEvents"] = [e for e in document["traceEvents"] if e.get("cat") != "step"]
    unstepped = tmp_path / "unstepped.json"
    unstepped.write_text(json.dumps(document))
    diff = diff_json(tfprof_exe, stepped, unstepped)
    assert diff["whole_trace"] is True
    assert diff["b"]["steps"] == 0 and diff["a"]["divisor"] == 1
    steps = rows_by_name(diff, "step_time")
    assert steps["trace time"]["a"] == steps["trace time"]["b"] == STEPS * 7 * MS
    assert rows_by_name(diff, "op_self")["conv"]["a"] == STEPS * 4 * MS
    assert rows_by_name(diff, "op_self")["conv"]["change"] == 0
    text = run_tfprof(tfprof_exe, "diff", str(stepped), str(unstepped)).stdout
    assert "B has no steps: the figures are over each whole trace, not per step." in text
    assert text.splitlines()[0].startswith("Trace time unchanged")


def test_errors(tfprof_exe, tmp_path):
    good = program(4 * MS).write(tmp_path / "good.json")
    missing = tmp_path / "missing.json"
    result = run_tfprof(tfprof_exe, "diff", str(good), str(missing), check=1)
    assert "tfprof diff:" in result.stderr and "missing.json" in result.stderr
    assert result.stdout == ""

    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\x01 this is no trace")
    result = run_tfprof(tfprof_exe, "diff", str(garbage), str(missing), check=1)
    assert "garbage.json" in result.stderr and "missing.json" in result.stderr  # both said

    result = run_tfprof(tfprof_exe, "diff", str(good), check=2)
    assert "two traces to compare, A and B, were expected; 1 given" in result.stderr
    run_tfprof(tfprof_exe, "diff", str(good), str(good), str(good), check=2)
    run_tfprof(tfprof_exe, "diff", check=2)
    result = run_tfprof(tfprof_exe, "diff", str(good), str(good), "--bogus", check=2)
    assert "unknown option '--bogus'" in result.stderr
    run_tfprof(tfprof_exe, "diff", str(good), str(good), "--html", str(good), check=2)

    result = run_tfprof(tfprof_exe, "diff", str(good), str(good), "--html",
                        str(tmp_path / "no" / "such" / "dir.html"), check=3)
    assert "dir.html" in result.stderr

    help_text = run_tfprof(tfprof_exe, "diff", "--help").stdout
    assert help_text.startswith("usage: tfprof diff")
    assert "--html PATH" in help_text
    assert "diff" in run_tfprof(tfprof_exe, "--help").stdout



def test_the_page_renders_in_chromium(tfprof_exe, tmp_path, browser):
    before = program(4 * MS).write(tmp_path / "before.json")
    after = program(8 * MS).write(tmp_path / "after.json")
    page = tmp_path / "diff.html"
    run_tfprof(tfprof_exe, "diff", str(before), str(after), "--html", str(page))
    open_page(browser, page)
    assert console_errors(browser) == []
    assert requested_urls(browser) == [page.resolve().as_uri()]  # nothing else is fetched
    run = browser.execute_script
    assert run("return document.getElementById('headline').textContent").startswith(
        "Step time +57%")
    # Every comparison's table is drawn with its rows.
    for key, rows in (("step_time", 3), ("categories", 5), ("op_self", 4), ("kernels", 2)):
        height = run(f"return document.getElementById('diff-{key}-table').offsetHeight")
        assert height > 20 * rows, key
        assert run(f"return document.querySelectorAll('#diff-{key}-table tbody tr').length") \
            == rows
    # The change bar of conv, the op that moved, is the widest; the others are slivers.
    widths = run("return Array.from(document.querySelectorAll('#diff-op_self-table .bar'))"
                 ".map(b => b.getBoundingClientRect().width)")
    assert widths[0] > 10 * max(widths[1:])
    # Sorting by A puts the op with the largest A first: conv (4 ms) then optimizer (2 ms).
    run("document.querySelectorAll('#diff-op_self-table thead th')[3].click()")
    names = run("return Array.from(document.querySelectorAll('#diff-op_self-table tbody tr'))"
                ".map(r => r.dataset.name)")
    assert names[:2] == ["conv", "optimizer"]
    run("document.querySelectorAll('#diff-op_self-table thead th')[3].click()")  # ascending
    names = run("return Array.from(document.querySelectorAll('#diff-op_self-table tbody tr'))"
                ".map(r => r.dataset.name)")
    assert names[-1] == "conv"
    shot = build_dir().parent / "diff-screenshot.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
