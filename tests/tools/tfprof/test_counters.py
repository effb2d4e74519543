"""Counters that are not about memory (tfprof.counter, a file's "ph": "C" events): their range
and last value in `tfprof summary` (text and --json), and one chart each in `tfprof report`.
Counters about memory are the Memory section's and appear there only."""

from __future__ import annotations

import html.parser
import json
import pathlib
import subprocess

import pytest
from conftest import build_dir, run_tfprof
from tfprof_trace_builder import MS, TfprofTrace

LOSS = [2.5, 1.75, 1.25, 0.5, 0.875]  # one per step, sampled at the step's middle


def counter_trace(path: pathlib.Path) -> pathlib.Path:
    trace = TfprofTrace().thread(1, "MainThread")
    for step, loss in enumerate(LOSS):
        trace.step(step, step * 10 * MS, (step + 1) * 10 * MS)
        trace.span("forward", step * 10 * MS, step * 10 * MS + 4 * MS)
        for name, args in (("loss", {"value": loss}),
                           ("lr", {"value": 0.1 / (step + 1), "warmup": float(step)}),
                           ("host memory bytes", {"value": 1000.0 * (step + 1)})):
            trace.events.append({"ph": "C", "name": name, "pid": trace.pid, "tid": 1,
                                 "ts": (step * 10 + 5) * 1000.0, "args": args})
    return trace.write(path)


class Figures(html.parser.HTMLParser):
    """The report's counter charts: each figure's data attributes and its points."""

    def __init__(self) -> None:
        super().__init__()
        self.charts: list = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "figure" and "counter-chart" in (attributes.get("class") or ""):
            self.charts.append({"attributes": attributes, "points": 0})
        elif tag == "rect" and attributes.get("class") == "point" and self.charts:
            self.charts[-1]["points"] += 1

    def handle_endtag(self, tag):
        pass


def test_counters_in_the_summary(tfprof_exe, tmp_path):
    path = counter_trace(tmp_path / "counters.json")
    (summary,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", path).stdout)["traces"]
    by_key = {(c["name"], c["series"]): c for c in summary["counters"]}
    assert set(by_key) == {("loss", "value"), ("lr", "value"), ("lr", "warmup")}
    loss = by_key[("loss", "value")]
    assert (loss["samples"], loss["min"], loss["max"], loss["last"]) == (5, 0.5, 2.5, 0.875)
    assert loss["first_ns"] == 5 * MS and loss["last_ns"] == 45 * MS
    # 50 ms over 200 slices: each sample in a slice of its own, at the slice's start.
    assert [p["value"] for p in loss["timeline"]] == LOSS
    assert [p["ns"] for p in loss["timeline"]] == [(step * 10 + 5) * MS for step in range(5)]
    warmup = by_key[("lr", "warmup")]
    assert (warmup["min"], warmup["max"], warmup["last"]) == (0.0, 4.0, 4.0)
    # The memory counter is the Memory section's, not a counter row.
    assert [d["source"] for d in summary["memory"]["devices"]] == ["counter host memory bytes"]
    text = run_tfprof(tfprof_exe, "summary", path).stdout
    assert "Counters (3; `tfprof report` draws them over time)" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("loss "))
    assert row.split()[1:] == ["5", "0.5", "2.5", "0.875"]
    assert "Not analysed" not in text


def test_counters_drawn_in_the_report(tfprof_exe, tmp_path):
    path = counter_trace(tmp_path / "counters.json")
    run_tfprof(tfprof_exe, "report", path, "-o", tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    figures = Figures()
    figures.feed(page)
    charts = {(c["attributes"]["data-counter"], c["attributes"]["data-series"]): c
              for c in figures.charts}
    assert set(charts) == {("loss", "value"), ("lr", "value"), ("lr", "warmup")}
    for chart in charts.values():
        assert chart["attributes"]["data-samples"] == "5"
        assert chart["points"] == 5
    assert 'href="#counters"' in page and 'id="no-counters"' not in page


def test_a_trace_without_counters_says_so(tfprof_exe, tmp_path):
    trace = TfprofTrace().thread(1, "MainThread").step(0, 0, 10 * MS)
    path = trace.write(tmp_path / "plain.json")
    run_tfprof(tfprof_exe, "report", path, "-o", tmp_path / "report.html")
    assert 'id="no-counters"' in (tmp_path / "report.html").read_text()
    (summary,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", path).stdout)["traces"]
    assert summary["counters"] == []


def test_the_example_training_loops_queue_depth_drawn_with_its_dips(tfprof_exe, tmp_path):
    """A trace the runtime wrote (examples/training_loop.c: prof_counter("input_queue_depth")
    as the input thread fills and the compute thread drains): its chart has a point per slice of
    one value and two (lowest, highest) per slice where the queue moved, counted here from the
    file's "ph": "C" events."""
    example = build_dir() / "examples" / "training_loop"
    if not example.exists():
        pytest.skip(f"{example} is not built")
    path = tmp_path / "training_loop.json"
    subprocess.run([str(example), str(path), "150"], check=True, capture_output=True, timeout=60)
    samples = [e for e in json.loads(path.read_text())["traceEvents"]
               if e["ph"] == "C" and e["name"] == "input_queue_depth"]
    (summary,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", path).stdout)["traces"]
    begin, span = summary["begin_ns"], max(summary["end_ns"] - summary["begin_ns"], 1)
    slices: dict = {}
    for sample in samples:
        at = (round(sample["ts"] * 1000) - begin) / span * 200
        slices.setdefault(min(max(int(at), 0), 199), []).append(sample["args"]["value"])
    moved = sum(1 for values in slices.values() if min(values) != max(values))
    assert moved > 0, "the queue should move within some slices of a 150-step run"

    run_tfprof(tfprof_exe, "report", path, "-o", tmp_path / "report.html")
    figures = Figures()
    figures.feed((tmp_path / "report.html").read_text())
    (chart,) = [c for c in figures.charts
                if c["attributes"]["data-counter"] == "input_queue_depth"]
    assert chart["attributes"]["data-samples"] == str(len(samples))
    assert chart["points"] == len(slices) + moved
