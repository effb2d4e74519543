"""tfprof.summarize and Trace.summary: the figures of `tfprof summary --json` as objects, against
the command run directly, known answers for a trace written here and independent counts of a real
PyTorch trace."""

from __future__ import annotations

import gzip
import html
import json
import pathlib
import re
import subprocess
import sys
import warnings
from collections import Counter
from html.parser import HTMLParser
from typing import Any, Dict, List

import pytest

import tfprof
from tfprof import _cli

REPO = pathlib.Path(__file__).resolve().parents[3]
# Rank 0 of a DLRM training job (PARAM, Kineto, V100): one step, ProfilerStep#10, with NCCL
# SendRecv x5 and AllReduce x3 (tests/data/real/README.md).
DLRM = REPO / "tests/data/real/param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz"

STEPS = 4
LOADS_PER_STEP = 2


def command_json(path: pathlib.Path, *options: str) -> Dict[str, Any]:
    """`tfprof summary --json` run directly: the trace's object."""
    done = subprocess.run([_cli._executable_path(), "summary", "--json", *options, str(path)],
                          capture_output=True, text=True, check=True)
    document = json.loads(done.stdout)
    assert document["errors"] == []
    return document["traces"][0]  # type: ignore[no-any-return]


def write_trace(path: pathlib.Path) -> None:
    """STEPS steps, each a "forward" span holding LOADS_PER_STEP "load" spans."""
    with tfprof.trace(path):
        for number in range(STEPS):
            with tfprof.step(number), tfprof.span("forward"):
                for _ in range(LOADS_PER_STEP):
                    with tfprof.span("load"):
                        pass


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("summarize") / "trace.json"
    write_trace(path)
    return path


def test_a_written_trace_has_the_known_figures_and_the_command_s_json(written):
    summary = tfprof.summarize(written)
    assert isinstance(summary, tfprof.Summary)
    assert summary.to_dict() == command_json(written)
    assert summary.path == str(written)
    assert [step.number for step in summary.steps] == list(range(STEPS))
    assert len(summary.steps) == STEPS
    assert all(step.duration_ns > 0 for step in summary.steps)
    assert sum(step.duration_ns for step in summary.steps) == summary.step_total.duration_ns
    calls = {op.name: op.count for op in summary.top_ops_by_total}
    assert calls["forward"] == STEPS
    assert calls["load"] == STEPS * LOADS_PER_STEP
    forward = next(op for op in summary.top_ops_by_total if op.name == "forward")
    load = next(op for op in summary.top_ops_by_total if op.name == "load")
    # forward's own time is its total less the loads nested in it.
    assert forward.self_ns == forward.total_ns - load.total_ns
    # Every key of the JSON is an attribute, nested objects too.
    for key, value in command_json(written).items():
        assert key in summary.keys()
        got = getattr(summary, key)
        if isinstance(value, dict):
            assert got.to_dict() == value
        elif isinstance(value, list) and all(isinstance(row, dict) for row in value):
            assert got.to_dicts() == value
        else:
            assert got == value
    assert summary.losses.dropped_events == 0


def test_options_reach_the_command(written):
    summary = tfprof.summarize(written, top=1)
    assert summary.to_dict() == command_json(written, "--top", "1")
    assert len(summary.top_ops_by_total) == 1
    # Options the command gains need no Python change: any keyword becomes --name value.
    with pytest.raises(ValueError, match=r"tfprof.summarize: .*unknown option '--no-such-option'"):
        tfprof.summarize(written, no_such_option=3)
    with pytest.raises(TypeError, match="no_such_option"):
        tfprof.summarize(written, no_such_option=1.5)  # type: ignore[arg-type]


def test_str_is_the_command_s_text_summary(written):
    done = subprocess.run([_cli._executable_path(), "summary", str(written)], capture_output=True, text=True,
                          check=True)
    summary = tfprof.summarize(written)
    assert str(summary) == done.stdout
    assert "forward" in str(summary)
    assert repr(summary).startswith(f"<tfprof Summary of {str(written)!r}: {STEPS} steps; median step ")


def test_a_real_pytorch_trace_against_its_events():
    summary = tfprof.summarize(DLRM)
    assert summary.to_dict() == command_json(DLRM)
    with gzip.open(DLRM, "rt") as file:
        events = json.load(file)["traceEvents"]
    kernels = [event for event in events if event.get("cat") == "kernel" and event.get("ph") == "X"]
    steps = [event for event in events if event.get("name", "").startswith("ProfilerStep#")]
    assert [step.number for step in summary.steps] == [int(s["name"].split("#")[1]) for s in steps] == [10]
    assert summary.kernel_count == len(kernels)
    by_name = Counter(event["name"] for event in kernels)
    ns_by_name: Counter[str] = Counter()
    for event in kernels:
        ns_by_name[event["name"]] += round(event["dur"] * 1000)
    for kernel in summary.top_kernels:
        assert (kernel.count, kernel.total_ns) == (by_name[kernel.name], ns_by_name[kernel.name]), kernel.name
    nccl = {kernel.name.split("(")[0]: kernel for kernel in summary.top_kernels if kernel.communication}
    assert nccl["ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"].count == 5
    assert nccl["ncclKernel_AllReduce_RING_LL_Sum_float"].count == 3
    assert [finding.kind for finding in summary.findings]
    assert all(finding.steps == [10] for finding in summary.findings if finding.steps)
    assert summary.devices[0].utilization == pytest.approx(summary.devices[0].busy_ns / summary.devices[0].window_ns,
                                                           rel=1e-5)


def test_to_pandas_rows_are_the_json_rows(written):
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (it is in the test extra)")
    summary = tfprof.summarize(DLRM)
    raw = command_json(DLRM)
    steps = summary.to_pandas("steps")
    assert isinstance(steps, pandas.DataFrame)
    assert steps.to_dict("records") == raw["steps"]
    kernels = summary.top_kernels.to_pandas()
    assert list(kernels.columns) == list(raw["top_kernels"][0])
    assert kernels.to_dict("records") == raw["top_kernels"]
    every = summary.to_pandas()
    assert set(every) == set(summary.tables())
    assert {name for name in every if "." not in name} == {
        key for key, value in raw.items() if isinstance(value, list) and all(isinstance(row, dict) for row in value)}
    assert len(every["top_ops_by_self"]) == len(raw["top_ops_by_self"])
    with pytest.raises(KeyError, match="no table 'path'.*steps"):
        summary.to_pandas("path")


def test_to_pandas_without_pandas_says_what_to_install(written, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    monkeypatch.delitem(__import__("sys").modules, "pandas", raising=False)
    summary = tfprof.summarize(written)
    with pytest.raises(ImportError, match="to_pandas\\(\\) needs pandas.*pip install pandas"):
        summary.to_pandas("steps")
    assert len(summary.steps) == STEPS  # the figures need no pandas


class _Cells(HTMLParser):
    """The text of each table's cells, and that every tag opened is closed."""

    def __init__(self) -> None:
        super().__init__()
        self.open: List[str] = []
        self.rows: List[List[str]] = []
        self.headings: List[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "br":
            return
        self.open.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        if self.open and self.open[-1] == "td":
            self.rows[-1][-1] += data
        elif self.open and self.open[-1] == "h4":
            self.headings.append(data)


def test_the_jupyter_display_holds_the_steps_findings_and_top_ops(written):
    for path in (written, DLRM):
        summary = tfprof.summarize(path)
        parser = _Cells()
        parser.feed(summary._repr_html_())
        parser.close()
        assert parser.open == []
        step_rows = [row for row in parser.rows if row and row[0].isdigit()]
        expected_steps = [step.number for step in summary.steps]
        assert [int(row[0]) for row in step_rows[:len(expected_steps)]] == expected_steps
        for row, step in zip(step_rows, summary.steps):
            assert row[2] == f"{step.duration_ns / 1e6:.3f}"
        assert "Top ops by self time" in parser.headings
        assert any(row and row[0] == summary.top_ops_by_self[0].name for row in parser.rows)
        if summary.findings:
            assert "Findings" in parser.headings
            assert summary.findings[0].title in summary._repr_html_()


def test_new_json_keys_appear_without_python_changes():
    # What another part of the command adds (invented names): a table, an object, a number.
    data = dict(command_json(DLRM))
    data["invented_by_layer"] = [{"name": "encoder", "gpu_ns": 5, "kernels": 2},
                                 {"name": "decoder", "gpu_ns": 7, "kernels": 3}]
    data["invented_memory"] = {"peak_bytes": 1024, "devices": [{"device": 0, "peak_bytes": 1024}]}
    data["new_figure"] = 3
    summary = tfprof.Summary(data)
    assert summary.new_figure == 3
    assert isinstance(summary.invented_by_layer, tfprof.Table)
    assert [row.gpu_ns for row in summary.invented_by_layer] == [5, 7]
    assert summary.invented_by_layer[1].name == "decoder"
    assert summary.invented_memory.peak_bytes == 1024 and summary.invented_memory.devices[0].device == 0
    assert "invented_by_layer" in summary.tables() and "invented_memory.devices" in summary.tables()
    with pytest.raises(AttributeError, match="no field 'no_such_table'.*invented_by_layer"):
        summary.no_such_table  # noqa: B018
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (it is in the test extra)")
    assert summary.to_pandas("invented_by_layer").to_dict("records") == data["invented_by_layer"]
    assert isinstance(summary.to_pandas()["invented_by_layer"], pandas.DataFrame)
    assert summary.to_pandas("invented_memory.devices").to_dict("records") == data["invented_memory"]["devices"]


def test_the_jupyter_display_shows_gpu_time_by_op_when_the_command_gives_it():
    data = dict(command_json(DLRM))
    data["gpu_time_by_op"] = [{"name": "aten::conv2d", "calls": 3, "gpu_total_ns": 2500000, "share": 0.25,
                               "top_kernels": [{"name": "k", "count": 3}]}]
    parser = _Cells()
    parser.feed(tfprof.Summary(data)._repr_html_())
    assert "GPU time by op" in parser.headings
    assert ["aten::conv2d", "3", "2.500", "0.25"] in parser.rows


def test_errors_are_the_package_s_kinds_with_the_command_s_message(tmp_path):
    with pytest.raises(FileNotFoundError, match="tfprof.summarize: no such trace file"):
        tfprof.summarize(tmp_path / "missing.json")
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"traceEvents": [{"ph": "X", @@@}]}')
    with pytest.raises(ValueError, match=r"tfprof.summarize: .*damaged.json: byte 29"):
        tfprof.summarize(damaged)
    not_a_trace = tmp_path / "notes.txt"
    not_a_trace.write_text("hello\n")
    with pytest.raises(ValueError, match="tfprof.summarize: .*notes.txt"):
        tfprof.summarize(not_a_trace)


def test_a_file_cut_short_is_summarized_to_its_last_whole_step(written, tmp_path):
    text = written.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[:text.rindex('"name":"forward"')])
    with pytest.warns(RuntimeWarning, match=r"tfprof.summarize: .*cut.json: the file ends at byte"):
        summary = tfprof.summarize(cut)
    assert summary.cut.last_whole_step == len(summary.steps) - 1
    assert 0 < len(summary.steps) < STEPS


def test_salvage_warns_and_summarizes_what_precedes_the_damage(written, tmp_path):
    text = written.read_text()
    # Damage the middle of the file: the first steps stay readable.
    damaged = tmp_path / "damaged.json"
    middle = text.index('"name":"load"', len(text) // 2)
    damaged.write_text(text[:middle] + "@@@" + text[middle:])
    with pytest.raises(ValueError):
        tfprof.summarize(damaged)
    with pytest.warns(RuntimeWarning, match="tfprof.summarize: salvaged what precedes the damage"):
        summary = tfprof.summarize(damaged, salvage=True)
    assert summary.damage
    assert len(summary.steps) <= STEPS


def test_trace_summary_after_stop(tmp_path):
    with tfprof.trace(tmp_path / "t.json") as trace:
        with pytest.raises(RuntimeError, match="cannot summarize a trace that is running"):
            trace.summary()
        for number in range(3):
            with tfprof.step(number), tfprof.span("work"):
                pass
    summary = trace.summary()
    assert summary.path == str(tmp_path / "t.json")
    assert summary.to_dict() == command_json(tmp_path / "t.json")
    assert [op.count for op in summary.top_ops_by_total if op.name == "work"] == [3]


def test_trace_summary_of_a_trace_written_nowhere():
    with tfprof.trace() as trace:
        for number in range(5):
            with tfprof.step(number), tfprof.span("work"):
                pass
    summary = trace.summary()
    assert [step.number for step in summary.steps] == list(range(5))
    # The temporary export lives as long as the summary, so its text can still be read.
    assert pathlib.Path(summary.path).exists()
    assert "work" in str(summary)
    with pytest.raises(RuntimeError, match="never started"):
        tfprof.trace().summary()


def test_a_file_that_changed_has_no_text(tmp_path):
    path = tmp_path / "t.json"
    write_trace(path)
    summary = tfprof.summarize(path)
    path.unlink()
    with pytest.raises(ValueError, match="changed or went away"):
        summary.text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "no text summary" in str(summary)


def test_the_notebook_example_finds_its_input_wait(tmp_path):
    example = REPO / "examples/python/summary_notebook.py"
    path = tmp_path / "nb.json"
    result = subprocess.run([sys.executable, str(example), str(path)], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "input_bound: Input-bound" in result.stdout
    assert tfprof.summarize(path).findings[0].kind == "input_bound"
    assert "8 steps" in result.stdout


def test_the_docs_example_runs(written, tmp_path):
    pytest.importorskip("pandas", reason="the example ends with to_pandas(); pandas is in the test extra")
    docs = (REPO / "docs/python.md").read_text()
    block = next(code for code in re.findall(r"```python\n(.*?)```", docs, re.S) if "tfprof.summarize(" in code)
    (tmp_path / "run.json").write_bytes(written.read_bytes())
    result = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("== run.json ==")


def test_the_jupyter_display_of_many_steps_stays_compact(tmp_path):
    data = command_json(DLRM)
    data["steps"] = [dict(data["steps"][0], number=n) for n in range(100)]
    parser = _Cells()
    parser.feed(tfprof.Summary(data)._repr_html_())
    step_rows = [row for row in parser.rows if row and row[0].isdigit()]
    assert [int(row[0]) for row in step_rows] == list(range(20))
    assert "80 more steps" in tfprof.Summary(data)._repr_html_()


def test_long_names_are_cut_in_the_html_and_whole_in_the_tooltip():
    summary = tfprof.summarize(DLRM)
    page = summary._repr_html_()
    longest = max((kernel.name for kernel in summary.top_kernels), key=len)
    assert len(longest) > 80
    assert f'title="{html.escape(longest)}">{html.escape(longest[:77])}...</td>' in page
