"""Memory in `tfprof summary --json` and `tfprof report` on the real PyTorch traces that hold
`[memory]` events, checked against figures computed here from the files' own events: bytes in use
are "Total Allocated" after each event (or, in traces without it, the running sum of "Bytes"),
per process and device; a step's peak is the most in use at any moment of its
`ProfilerStep#N` span, counting what was in use as it began."""

from __future__ import annotations

import decimal
import gzip
import html.parser
import json
import pathlib
import re
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof

REAL = ROOT / "tests" / "data" / "real"
MEMORY_TRACES = [
    REAL / "kineto/tb_plugin/samples/resnet50_num_workers_0/"
           "worker0.1623143089861.pt.trace.trimmed-1step.json.gz",
    REAL / "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    REAL / "tracelens/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
    REAL / "tracelens/perf_model/normalization/normalization_layer_test.json.gz",
]


def events_of(path: pathlib.Path) -> List[Dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        data = json.load(handle, parse_float=decimal.Decimal)
    return data["traceEvents"] if isinstance(data, dict) else data


def ns(ts: Any) -> int:
    return int((decimal.Decimal(ts) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def expected_memory(path: pathlib.Path) -> Dict[str, Dict[str, Any]]:
    """Per device label ("CPU", "GPU 0"): events, peak, the peak's time and each step's peak."""
    events = events_of(path)
    by_device: Dict[str, List[Tuple[int, int, Any]]] = {}
    for order, event in enumerate(events):
        if event.get("name") != "[memory]":
            continue
        args = event["args"]
        label = "CPU" if args.get("Device Type", 0) == 0 else f"GPU {args['Device Id']}"
        by_device.setdefault(label, []).append((ns(event["ts"]), order, args))
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), int(e["name"].split("#")[1]))
                   for e in events
                   if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")
                   and not str(e.get("cat", "")).startswith("gpu_"))
    expected = {}
    for label, items in by_device.items():
        items.sort(key=lambda item: (item[0], item[1]))
        totals = all("Total Allocated" in args for _, _, args in items)
        levels, running = [], 0
        for when, _, args in items:
            running += int(args["Bytes"])
            levels.append((when, int(args["Total Allocated"]) if totals else running))
        initial = levels[0][1] - int(items[0][2]["Bytes"])
        peak = max(value for _, value in levels)
        step_peaks = []
        for begin, end, number in steps:
            before = [value for when, value in levels if when < begin]
            inside = [value for when, value in levels if begin <= when < end]
            step_peaks.append({"number": number,
                               "peak_bytes": max([before[-1] if before else initial] + inside)})
        expected[label] = {
            "events": len(items),
            "relative": not totals,
            "peak_bytes": peak,
            "peak_ns": next(when for when, value in levels if value == peak),
            "steps": step_peaks,
        }
    return expected


def summary_of(exe: pathlib.Path, path: pathlib.Path) -> Dict[str, Any]:
    return json.loads(run_tfprof(exe, "summary", "--json", str(path)).stdout)["traces"][0]


@pytest.mark.parametrize("path", MEMORY_TRACES, ids=lambda p: p.parent.name)
def test_memory_peaks_match_the_files_own_totals(tfprof_exe: pathlib.Path,
                                                 path: pathlib.Path) -> None:
    expected = expected_memory(path)
    assert expected, "the trace holds [memory] events"
    devices = summary_of(tfprof_exe, path)["memory"]["devices"]
    got = {d["label"]: d for d in devices}
    assert sorted(got) == sorted(expected)
    for label, want in expected.items():
        device = got[label]
        assert device["source"] == "[memory] events"
        assert device["events"] == want["events"], label
        assert device["relative"] == want["relative"], label
        assert device["peak_bytes"] == want["peak_bytes"], label
        assert device["peak_ns"] == want["peak_ns"], label
        assert device["steps"] == want["steps"], label
        assert max(point["bytes"] for point in device["timeline"]) == want["peak_bytes"]


def test_the_resnet_trace_names_the_ops_allocating_at_the_gpu_peak(
        tfprof_exe: pathlib.Path) -> None:
    # No addresses in PyTorch 1.9's events: the top-level ops that allocated the most in the
    # peak's step, summed here from the events inside each outermost op of their thread (the
    # step's own span, of category Operator in this trace, is the step, not an op).
    path = MEMORY_TRACES[0]
    events = events_of(path)
    gpu = next(d for d in summary_of(tfprof_exe, path)["memory"]["devices"] if d["device"] == 0)
    step = next(e for e in events if e.get("name") == f"ProfilerStep#{gpu['peak_step']}")
    begin, end = ns(step["ts"]), ns(step["ts"]) + ns(step["dur"])
    ops: Dict[str, List[Tuple[int, int, str]]] = {}
    for event in events:
        if (event.get("cat") == "Operator" and event.get("ph") == "X"
                and not event["name"].startswith("ProfilerStep#")):
            ops.setdefault(str(event["tid"]), []).append(
                (ns(event["ts"]), ns(event["ts"]) + ns(event["dur"]), event["name"]))
    allocated: Dict[str, int] = {}
    for event in events:
        args = event.get("args", {})
        if event.get("name") != "[memory]" or args.get("Device Type") != 1 or args["Bytes"] <= 0:
            continue
        when = ns(event["ts"])
        if not begin <= when < end:
            continue
        holding = [op for op in ops.get(str(event["tid"]), []) if op[0] <= when < op[1]]
        outermost = min(holding, key=lambda op: (op[0], -op[1]))[2] if holding else "(no op)"
        allocated[outermost] = allocated.get(outermost, 0) + int(args["Bytes"])
    want = sorted(allocated.items(), key=lambda item: (-item[1], item[0]))[:5]
    assert gpu["top_ops_basis"] == "allocated in the peak's step"
    assert [(op["name"], op["bytes"]) for op in gpu["top_ops_at_peak"]] == want


class MemoryCharts(html.parser.HTMLParser):
    """The report's memory figures: per figure, its hover points and its line's segments."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: List[Dict[str, Any]] = []
        self.section = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Any]]) -> None:
        attributes = dict(attrs)
        if tag == "section":
            self.section = attributes.get("id") == "memory"
        if not self.section:
            return
        if tag == "figure" and "memory-chart" in attributes.get("class", ""):
            self.figures.append({"peak": int(attributes["data-peak-bytes"]), "points": 0,
                                 "segments": 0})
        elif tag == "rect" and attributes.get("class") == "point" and self.figures:
            self.figures[-1]["points"] += 1
        elif tag == "path" and attributes.get("class") == "line-path" and self.figures:
            self.figures[-1]["segments"] = len(re.findall("H", attributes["d"]))


@pytest.mark.parametrize("path", MEMORY_TRACES[:2], ids=lambda p: p.parent.name)
def test_the_report_draws_one_memory_chart_per_device(tfprof_exe: pathlib.Path,
                                                      path: pathlib.Path,
                                                      tmp_path: pathlib.Path) -> None:
    devices = summary_of(tfprof_exe, path)["memory"]["devices"]
    page = tmp_path / "report.html"
    run_tfprof(tfprof_exe, "report", str(path), "-o", str(page))
    charts = MemoryCharts()
    charts.feed(page.read_text(encoding="utf-8"))
    assert len(charts.figures) == len(devices)
    for figure, device in zip(charts.figures, devices):
        assert figure["peak"] == device["peak_bytes"]
        assert figure["points"] == len(device["timeline"]) == 200
        assert figure["segments"] == len(device["timeline"])


XPLANE_TRACES = sorted((REAL / "xplane").glob("*.xplane.pb"))


@pytest.mark.parametrize("path", XPLANE_TRACES, ids=lambda p: p.name)
def test_xplane_allocator_statistics_match_the_memory_profile_events(tfprof_exe: pathlib.Path,
                                                                     path: pathlib.Path) -> None:
    # TensorFlow's and JAX's memory profile: host events MemoryAllocation and MemoryDeallocation
    # whose bytes_allocated is the allocator's bytes in use after each.
    from xplane_file import decode
    expected: Dict[str, List[int]] = {}
    for plane in decode(path).planes:
        if not plane.name.startswith("/host:") or plane.name == "/host:metadata":
            continue
        for line in plane.lines:
            for event in line.events:
                if (event.name in ("MemoryAllocation", "MemoryDeallocation")
                        and "bytes_allocated" in event.stats):
                    allocator = str(event.stats.get("allocator_name", "allocator"))
                    expected.setdefault(allocator, []).append(int(event.stats["bytes_allocated"]))
    assert expected, f"{path.name} has memory profile events"
    devices = summary_of(tfprof_exe, path)["memory"]["devices"]
    got = {(d["label"]): d for d in devices if d["source"] == "allocator statistics"}
    assert sorted(got) == sorted(expected)
    for allocator, values in expected.items():
        assert got[allocator]["events"] == len(values), allocator
        assert got[allocator]["peak_bytes"] == max(values), allocator
