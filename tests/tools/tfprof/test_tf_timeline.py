"""`tfprof summary`, `convert` and `merge` on TensorFlow timeline.py Chrome traces (the real files
in tests/data/real/tensorflow/, TF 1.0). Every figure is computed again here from the file's events:
the GPU tracer's processes "/gpu:N/stream:S Compute" hold every kernel and copy once, and repeat
the kernels on "/gpu:N/stream:all Compute" and the copies on "/gpu:N/memcpy Compute"; the
executor's "<device> Compute" processes hold the host side of each op.
"""

from __future__ import annotations

import collections
import decimal
import gzip
import json
import pathlib
import re
import sys
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof

REAL = ROOT / "tests" / "data" / "real"
TIMELINES = sorted((REAL / "tensorflow" / "ikhlestov_tensorflow_profiling").rglob("*.json"))
PYTORCH_TRACE = REAL / "kineto" / "tb_plugin" / "test" / "gpu_metrics_input.json"

STREAM = re.compile(r"^/(?:gpu|device:GPU):(\d+)/stream:(\d+) Compute$")
ALL_STREAMS = re.compile(r"^/(?:gpu|device:GPU):(\d+)/stream:all Compute$")
MEMCPY = re.compile(r"^/(?:gpu|device:GPU):(\d+)/memcpy Compute$")
HOST = re.compile(r"^/job:[^ ]+ Compute$")


def load(path: pathlib.Path, exact: bool = False) -> Dict[str, Any]:
    """The file's JSON; `exact` keeps fractional numbers as decimals (ts in microseconds since a
    far origin hold more digits than a float)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as file:
        return json.load(file, parse_float=decimal.Decimal if exact else float)


def twin_key(event: Dict[str, Any]) -> Tuple[Any, ...]:
    return event["name"], event["args"]["name"], event["args"]["op"], event["ts"], event["dur"]


def node_name(event: Dict[str, Any]) -> str:
    node, op = event["args"]["name"], event["args"].get("op", "")
    return node if op in ("", "unknown", node) else f"{node}:{op}"


def union_us(intervals: List[Tuple[int, int]]) -> int:
    total, end = 0, None
    for begin, finish in sorted(intervals):
        if end is None or begin > end:
            total += finish - begin
            end = finish
        elif finish > end:
            total += finish - end
            end = finish
    return total


class Expected:
    """What the file holds, by the rule in the module docstring."""

    def __init__(self, path: pathlib.Path) -> None:
        data = load(path)
        events = data["traceEvents"]
        self.event_count = len(events)
        names = {e["pid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
        spans = [e for e in events if e.get("ph") == "X"]
        self.on_streams = [e for e in spans if STREAM.match(names[e["pid"]])]
        self.repeated_kernels = [e for e in spans if ALL_STREAMS.match(names[e["pid"]])]
        self.repeated_copies = [e for e in spans if MEMCPY.match(names[e["pid"]])]
        self.host = [e for e in spans if HOST.match(names[e["pid"]])]
        # Nothing else holds spans: Tensors and Allocators processes never do.
        assert len(spans) == (len(self.on_streams) + len(self.repeated_kernels) +
                              len(self.repeated_copies) + len(self.host))
        copy_keys = collections.Counter(twin_key(e) for e in self.repeated_copies)
        kernel_keys = collections.Counter(twin_key(e) for e in self.repeated_kernels)
        # Every repeat has its twin on a stream, and a twin is a kernel or a copy, not both.
        on_stream_keys = collections.Counter(twin_key(e) for e in self.on_streams)
        assert not (copy_keys + kernel_keys) - on_stream_keys
        assert on_stream_keys == copy_keys + kernel_keys
        self.kernels = len(self.repeated_kernels)
        self.copies = len(self.repeated_copies)
        self.per_stream: Dict[int, Dict[str, int]] = collections.defaultdict(
            lambda: {"kernels": 0, "copies": 0})
        for event in self.on_streams:
            stream = int(STREAM.match(names[event["pid"]]).group(2))
            kind = "copies" if copy_keys[twin_key(event)] else "kernels"
            self.per_stream[stream][kind] += 1
        self.copy_kinds = collections.Counter(
            {"MEMCPYHtoD": "HtoD", "MEMCPYDtoH": "DtoH"}.get(e["name"], "other")
            for e in self.repeated_copies)
        self.gpu_busy_us = union_us([(e["ts"], e["ts"] + e["dur"]) for e in self.on_streams])
        self.kernel_busy_us = union_us([(e["ts"], e["ts"] + e["dur"])
                                        for e in self.repeated_kernels])
        self.host_ops = collections.Counter(node_name(e) for e in self.host)
        self.first_us = min(e["ts"] for e in spans)
        self.first_kernel_us = min((e["ts"] for e in self.repeated_kernels), default=None)


def summary_of(tfprof_exe: pathlib.Path, path: pathlib.Path) -> Dict[str, Any]:
    result = run_tfprof(tfprof_exe, "summary", "--json", "--top", "100000", str(path))
    (trace,) = json.loads(result.stdout)["traces"]
    return trace


def check_figures(trace: Dict[str, Any], expected: Expected) -> None:
    """The GPU and host figures of a summary of the file or of a conversion of it."""
    assert trace["kernel_count"] == expected.kernels
    assert trace["has_gpu"] == bool(expected.on_streams)
    assert sum(c["count"] for c in trace["copies"]) == expected.copies
    assert {c["kind"]: c["count"] for c in trace["copies"]} == dict(expected.copy_kinds)
    streams = {s["stream"]: {"kernels": s["kernels"], "copies": s["copies"]}
               for s in trace["streams"]}
    assert streams == dict(expected.per_stream)
    assert {s["device"] for s in trace["streams"]} <= {0}
    if expected.on_streams:
        (device,) = trace["devices"]
        assert device["busy_ns"] == pytest.approx(expected.gpu_busy_us * 1000, rel=0.01)
        assert device["kernel_ns"] == pytest.approx(expected.kernel_busy_us * 1000, rel=0.01)
    else:
        assert trace["devices"] == []
    # Each op once: as often as the executor's rows hold it, never again for its GPU rows.
    ops = {op["name"]: op["count"] for op in trace["top_ops_by_total"] if op["kind"] == "host_op"}
    assert ops == dict(expected.host_ops)


@pytest.mark.parametrize("path", TIMELINES, ids=lambda p: str(p.relative_to(REAL)))
def test_summary_counts_each_kernel_copy_and_op_once(tfprof_exe: pathlib.Path,
                                                     path: pathlib.Path) -> None:
    expected = Expected(path)
    trace = summary_of(tfprof_exe, path)
    assert trace["format"] == "TensorFlow timeline Chrome trace"
    assert trace["events"] == expected.event_count
    assert trace["activities"] == len(expected.host) + len(expected.on_streams)
    check_figures(trace, expected)
    # timeline.py's ts are Unix-epoch microseconds.
    assert trace["wall_offset_ns"] == 0
    assert trace["begin_ns"] == expected.first_us * 1000
    assert not trace["has_steps"]
    assert not trace["losses"]["reported"]


@pytest.mark.parametrize("suffix", [".json", ".json.gz", ".pb", ".tfrecord"])
@pytest.mark.parametrize("path", TIMELINES, ids=lambda p: str(p.relative_to(REAL)))
def test_conversions_keep_the_figures(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path,
                                      path: pathlib.Path, suffix: str) -> None:
    expected = Expected(path)
    converted = tmp_path / f"converted{suffix}"
    run_tfprof(tfprof_exe, "convert", str(path), "-o", str(converted))
    trace = summary_of(tfprof_exe, converted)
    check_figures(trace, expected)
    # Still wall-clock time, and no step appears from nowhere.
    assert trace["begin_ns"] + trace["wall_offset_ns"] == expected.first_us * 1000
    assert not trace["has_steps"]
    assert not trace["losses"]["reported"]
    if suffix.startswith(".json"):
        back = tmp_path / "back.json"
        run_tfprof(tfprof_exe, "convert", str(converted), "-o", str(back))
        check_figures(summary_of(tfprof_exe, back), expected)


def test_merge_with_a_pytorch_trace_aligns_on_wall_clock_time(tfprof_exe: pathlib.Path,
                                                              tmp_path: pathlib.Path) -> None:
    timeline = REAL / "tensorflow" / "ikhlestov_tensorflow_profiling" / "GPU" / "timeline_01.json"
    expected = Expected(timeline)
    pytorch = [e for e in load(PYTORCH_TRACE)["traceEvents"]
               if e.get("ph") == "X" and e.get("cat") == "Kernel"]
    merged = tmp_path / "merged.json"
    run_tfprof(tfprof_exe, "merge", str(timeline), str(PYTORCH_TRACE), "-o", str(merged))
    data = load(merged, exact=True)
    header = data["tfprof"]
    to_unix_ns = header["start_time_unix_ns"] - header["start_time_monotonic_ns"]
    labels = [source["label"] for source in header["sources"]]
    assert [source["aligned_by"] for source in header["sources"]] == ["wall-clock"] * 2
    names = {e["pid"]: e["args"]["name"] for e in data["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}

    def first_kernel_unix_ns(label: str) -> int:
        return min(int(e["ts"] * 1000) + to_unix_ns for e in data["traceEvents"]
                   # (the PyTorch 1.8 input's own "Kernel", which the merge keeps)
                   if e.get("cat") in ("kernel", "Kernel") and names[e["pid"]].startswith(label))

    # Each input's first kernel at its own Unix time, to the nanosecond the files give.
    assert first_kernel_unix_ns(labels[0]) == expected.first_kernel_us * 1000
    assert first_kernel_unix_ns(labels[1]) == min(e["ts"] for e in pytorch) * 1000
    trace = summary_of(tfprof_exe, merged)
    assert trace["kernel_count"] == expected.kernels + len(pytorch)
    assert trace["begin_ns"] + trace["wall_offset_ns"] == expected.first_us * 1000


def test_the_timeline_layout_reads_back_like_its_step_statistics(tfprof_exe: pathlib.Path,
                                                                 tmp_path: pathlib.Path) -> None:
    """tfprof draws step statistics as timeline.py does (--layout timeline), tensors and memory
    counters included: read back, that is the run it was drawn from, and no tensor is an op."""
    # The hand-written StepStats of the tests.
    sys.path.insert(0, str(ROOT / "tests" / "bindings" / "python"))
    from step_stats_files import device, op, record, run_metadata  # noqa: E402

    host = "/job:localhost/replica:0/task:0/gpu:0"
    runs = []
    for index in range(2):
        base = 1_600_000_000_000_000 + index * 10_000
        launch = [op("step_%06d" % (index + 1), "step_%06d = TrainingStep()" % (index + 1), base,
                     5_000, 1),
                  op("x", "x = Const()", base + 10, 5, 1, [("gpu_bfc", 4096)]),
                  op("y", "y = MatMul(x, x)", base + 20, 30, 1, [("gpu_bfc", 4096)]),
                  op("z", "z = Relu(y)", base + 60, 10, 2, [("gpu_bfc", 4096)])]
        kernels = [op("y:MatMul", "volta_sgemm_128x64_nn", base + 100, 400),
                   op("z:Relu", "relu_kernel", base + 510, 40)]
        copies = [op("x:MEMCPYHtoD", "MEMCPYHtoD 4096 bytes", base + 50, 20),
                  op("z:MEMCPYDtoH", "MEMCPYDtoH 4096 bytes", base + 600, 20)]
        runs.append(run_metadata([
            device(host, launch, {1: "main", 2: "worker"}),
            device("/gpu:0/stream:all", kernels),
            device("/gpu:0/stream:12", kernels + copies[:1]),
            device("/gpu:0/stream:14", copies[1:]),
            device("/gpu:0/memcpy", copies)]))
    source = tmp_path / "runs.tfrecord"
    source.write_bytes(b"".join(record(run) for run in runs))
    drawn = tmp_path / "drawn.json"
    run_tfprof(tfprof_exe, "convert", str(source), "-o", str(drawn), "--layout", "timeline",
               "--show-memory")
    events = load(drawn)["traceEvents"]
    assert {e["ph"] for e in events} >= {"N", "O", "D", "C", "s", "t"}

    want, got = summary_of(tfprof_exe, source), summary_of(tfprof_exe, drawn)
    assert got["format"] == "tfprof Chrome trace"
    assert got["kernel_count"] == want["kernel_count"] == 4
    # timeline.py draws no copy sizes.
    copies = lambda trace: [(c["kind"], c["count"], c["total_ns"]) for c in trace["copies"]]
    assert copies(got) == copies(want) == [("DtoH", 2, 40_000), ("HtoD", 2, 40_000)]
    assert ([(s["stream"], s["kernels"], s["copies"]) for s in got["streams"]] ==
            [(s["stream"], s["kernels"], s["copies"]) for s in want["streams"]] ==
            [(12, 4, 2), (14, 0, 2)])
    assert ([(d["busy_ns"], d["kernel_ns"]) for d in got["devices"]] ==
            [(d["busy_ns"], d["kernel_ns"]) for d in want["devices"]])
    host_ops = lambda trace: {(o["name"], o["count"]) for o in trace["top_ops_by_total"]
                              if o["kind"] == "host_op"}
    assert host_ops(got) == host_ops(want) == {("x:Const", 2), ("y:MatMul", 2), ("z:Relu", 2)}
    assert [s["number"] for s in got["steps"]] == [s["number"] for s in want["steps"]] == [1, 2]
    # Tensors are objects and memory is counters: neither is an activity.
    assert got["activities"] == want["activities"]
    assert got["counter_samples"] == sum(1 for e in events if e["ph"] == "C") > 0
    assert got["wall_offset_ns"] == 0


def without_input_names(value: Any) -> Any:
    """`value` with the keys that name the input file and its format left out, at any depth."""
    if isinstance(value, dict):
        return {key: without_input_names(item) for key, item in value.items()
                if key not in ("file", "path", "format")}
    if isinstance(value, list):
        return [without_input_names(item) for item in value]
    return value


@pytest.mark.parametrize("source, twin_suffix", [
    (ROOT / "tests" / "golden" / "session.json", ".pftrace"),
    (ROOT / "tests" / "fuzz" / "corpus" / "tensorflow_profile.xplane.pb", ".tfrecord"),
])
def test_the_timeline_layout_draws_any_input_format(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path,
                                                    source: pathlib.Path, twin_suffix: str) -> None:
    """--layout timeline takes Perfetto and XPlane inputs as it takes Chrome JSON: each is made
    into step statistics first, so the same trace in two formats draws the same timeline (it once
    read a .pftrace as a RunMetadata and failed)."""
    twin = tmp_path / ("twin" + twin_suffix)
    run_tfprof(tfprof_exe, "convert", str(source), "-o", str(twin))
    # The step statistics are encoded in memory: a $TMPDIR that cannot be written is no obstacle
    # (the engine once wrote a scratch .tfrecord there and read it back).
    no_tmpdir = {"TMPDIR": str(tmp_path / "missing")}
    drawn = []
    for index, path in enumerate((source, twin)):
        out = tmp_path / f"drawn{index}.json"
        run_tfprof(tfprof_exe, "convert", str(path), "-o", str(out), "--layout", "timeline",
                   env=no_tmpdir)
        drawn.append(load(out))
    events = drawn[0]["traceEvents"]
    assert sum(1 for e in events if e["ph"] == "X") > 0
    assert without_input_names(drawn[0]) == without_input_names(drawn[1])


def test_a_merge_drawn_as_timelines_keeps_each_inputs_gpu_and_runs(tfprof_exe: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    """Two TensorFlow runs merged in timeline.py's layout: each input's GPU stays its own (the
    processes are prefixed with the file's name) and each run is a step, as in its .pb."""
    sys.path.insert(0, str(ROOT / "tests" / "bindings" / "python"))
    from step_stats_files import device, op, run_metadata  # noqa: E402

    inputs = []
    for name, base in [("a", 1_600_000_000_000_000), ("b", 1_600_000_000_500_000)]:
        kernels = [op("y:MatMul", "volta_sgemm_128x64_nn", base + 100, 400)]
        copies = [op("x:MEMCPYHtoD", "MEMCPYHtoD 4096 bytes", base + 50, 20)]
        path = tmp_path / f"{name}.pb"
        path.write_bytes(run_metadata([
            device("/job:localhost/replica:0/task:0/device:GPU:0",
                   [op("y", "y = MatMul(x, x)", base + 20, 30, 1)]),
            device("/device:GPU:0/stream:all", kernels),
            device("/device:GPU:0/stream:7", kernels + copies),
            device("/device:GPU:0/memcpy", copies)]))
        inputs.append(str(path))
    drawn = tmp_path / "drawn.json"
    run_tfprof(tfprof_exe, "merge", *inputs, "-o", str(drawn), "--layout", "timeline",
               "--rows", "lanes")
    trace = summary_of(tfprof_exe, drawn)
    assert [(s["process"], s["stream"], s["kernels"], s["copies"]) for s in trace["streams"]] == [
        ("a.pb: GPU 0", 7, 1, 1), ("b.pb: GPU 0", 7, 1, 1)]
    host = "/job:localhost/replica:0/task:0/device:GPU:0 Compute"
    assert [(s["number"], s["process"]) for s in trace["steps"]] == [
        (0, f"a.pb: {host}"), (0, f"b.pb: {host}")]
    assert [(o["name"], o["count"]) for o in trace["top_ops_by_total"]] == [("y:MatMul", 2)]
