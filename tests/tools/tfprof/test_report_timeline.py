"""The report's step timelines: the median and the slowest step drawn from the trace, threads
and streams as rows, nested spans by depth, spans under a pixel merged into counted blocks, and
each kernel's tooltip naming the op that launched it. Checked on a trace with known answers and
on a real PyTorch GPU trace against an independent count of its file."""

from __future__ import annotations

import gzip
import html.parser
import json
import pathlib
import re

from conftest import ROOT, run_tfprof
from tfprof_trace_builder import MS, TfprofTrace

US = 1_000
BERT = ROOT / "tests/data/real/tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz"


class Timelines(html.parser.HTMLParser):
    """Each timeline figure: its step and role, its rows, and per row the rectangles by class
    (a merged block counts its data-count spans) and their tooltips."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list = []
        self._row = None
        self._title = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "figure" and "step-timeline-figure" in classes:
            self.figures.append({"step": int(a["data-step"]), "which": a["data-which"],
                                 "rows": []})
        elif tag == "g" and "tl-row" in classes:
            self._row = {"kind": classes[1], "rects": {}, "titles": []}
            self.figures[-1]["rows"].append(self._row)
        elif tag == "rect" and self._row is not None:
            kind = classes[0]
            count = int(a.get("data-count", 1))
            self._row["rects"][kind] = self._row["rects"].get(kind, 0) + count
        elif tag == "title" and self._row is not None:
            self._title = ""

    def handle_data(self, data):
        if self._title is not None:
            self._title += data

    def handle_endtag(self, tag):
        if tag == "title" and self._title is not None:
            self._row["titles"].append(self._title)
            self._title = None
        elif tag == "g":
            self._row = None


def timelines(tfprof_exe, trace: pathlib.Path, out: pathlib.Path) -> list:
    run_tfprof(tfprof_exe, "report", trace, "-o", out)
    parser = Timelines()
    parser.feed(out.read_text())
    return parser.figures


def test_known_layout(tfprof_exe, tmp_path):
    trace = TfprofTrace().thread(1, "MainThread")
    for step, length in enumerate((10, 30, 20)):  # median step 2 (20 ms), slowest step 1
        begin = sum((10, 30, 20)[:step]) * MS
        trace.step(step, begin, begin + length * MS)
        trace.span("train_step", begin, begin + length * MS - MS)
        trace.span("forward", begin + MS, begin + 5 * MS)
        trace.span("matmul", begin + 2 * MS, begin + 3 * MS)
        for k in range(400):  # 400 kernels of 1 us, 2 us apart: far under a pixel each
            trace.kernel("gemm", begin + 6 * MS + k * 2 * US, begin + 6 * MS + k * 2 * US + US,
                         correlation=0)
    figures = timelines(tfprof_exe, trace.write(tmp_path / "t.json"), tmp_path / "r.html")
    assert [(f["step"], f["which"]) for f in figures] == [(2, "median"), (1, "slowest")]
    for figure in figures:
        thread, stream = figure["rows"]
        assert (thread["kind"], stream["kind"]) == ("tl-thread", "tl-stream")
        assert thread["rects"] == {"tl-op": 3}  # train_step, forward, matmul at depths 0-2
        assert sum(stream["rects"].values()) == 400  # every kernel, alone or in a block
        assert stream["rects"].get("tl-block", 0) >= 390
        assert any(t.startswith("400 spans") or "spans, each under a pixel" in t
                   for t in stream["titles"])
    # Wide spans show their names inside; GPU work and narrow spans only in tooltips.
    page = (tmp_path / "r.html").read_text()
    names = re.findall(r'<text class="tl-name"[^>]*>([^<]*)</text>', page)
    assert {"train_step", "forward", "matmul"} <= set(names) and "gemm" not in names


def load_events(path: pathlib.Path) -> list:
    with gzip.open(path, "rt") as file:
        return json.load(file)["traceEvents"]


def test_real_pytorch_gpu_trace(tfprof_exe, tmp_path):
    figures = timelines(tfprof_exe, BERT, tmp_path / "r.html")
    (figure,) = figures  # one step: median and slowest
    events = load_events(BERT)
    (step,) = [e for e in events if e.get("ph") == "X" and
               re.fullmatch(r"ProfilerStep#\d+", e.get("name", ""))
               and e.get("cat") != "gpu_user_annotation"]
    assert figure["step"] == int(step["name"].split("#")[1])
    begin, end = step["ts"], step["ts"] + step["dur"]
    in_step = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
               and e["ts"] < end and e["ts"] + e["dur"] > begin]
    streams = {(e["args"]["device"], e["args"]["stream"]) for e in in_step}
    stream_rows = [r for r in figure["rows"] if r["kind"] == "tl-stream"]
    assert len(stream_rows) == len(streams) == 1
    drawn = sum(stream_rows[0]["rects"].get(kind, 0)
                for kind in ("tl-kernel", "tl-comm", "tl-block"))
    copies = [e for e in events if e.get("ph") == "X"
              and e.get("cat") in ("gpu_memcpy", "gpu_memset")
              and e["ts"] < end and e["ts"] + e["dur"] > begin]
    assert drawn + stream_rows[0]["rects"].get("tl-copy", 0) == len(in_step) + len(copies)
    # Kernels drawn alone name their launching op: the aten op around their launch call.
    ops = {e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"}
    launchers = [re.search(r"; launched by (.*?), [0-9.]+ .s after its launch$", t)
                 for t in stream_rows[0]["titles"] if "spans, each under a pixel" not in t]
    assert launchers and all(m and m[1] in ops for m in launchers), launchers[:3]
