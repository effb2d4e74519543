"""`tfprof merge`: traces recorded with different clocks land at their wall-clock offsets, each
input a process group named by rank/host/pid with unique pids and its own steps; real library
traces, TensorFlow inputs, alignment without wall-clock time, bad input and the command line."""

from __future__ import annotations

import collections
import json
import os
import pathlib
import subprocess
import sys
import textwrap
from decimal import Decimal
from typing import Any, Dict, List

import pytest

from conftest import run_tfprof
from test_convert import load, ns, pytorch_trace, training_trace
from tfprof_trace_builder import MS, US, TfprofTrace

UNIX = 1_700_000_000_000_000_000
DOT = " \u00b7 "


def rank_trace(rank: int, host: str, pid: int, start_monotonic_ns: int, start_unix_ns: int,
               path: pathlib.Path) -> pathlib.Path:
    """Two 10 ms steps; in each a span at +1 ms and a kernel at +2 ms (times after the start)."""
    trace = TfprofTrace(pid=pid, start_monotonic_ns=start_monotonic_ns, start_unix_ns=start_unix_ns)
    trace.thread(pid + 1, "MainThread")
    for index in range(2):
        b = index * 10 * MS
        trace.step(index + 1, b, b + 10 * MS)
        trace.span(f"forward_rank{rank}", b + 1 * MS, b + 4 * MS + 250, tid=pid + 1)
        trace.kernel(f"gemm_rank{rank}", b + 2 * MS, b + 3 * MS + 1)
    document = trace.document()
    document["traceEvents"].append({"ph": "M", "pid": 0, "tid": 0, "name": "process_name",
                                    "args": {"name": "GPU 0"}})
    document["tfprof"]["hostname"] = host
    document["distributedInfo"] = {"rank": rank}
    path.write_text(json.dumps(document))
    return path


def process_names(doc: Dict[str, Any]) -> Dict[int, str]:
    return {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "process_name"}


def complete(doc: Dict[str, Any], name: str) -> List[Dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name") == name]


def merge(exe, out: pathlib.Path, *inputs, extra=(), check: int = 0) -> subprocess.CompletedProcess:
    return run_tfprof(exe, "merge", "-o", str(out), *extra, *[str(p) for p in inputs], check=check)


def test_three_files_with_different_clocks_line_up_on_wall_clock(tfprof_exe, tmp_path):
    # Monotonic clocks that started far apart (and one pid shared by two hosts); the wall-clock
    # starts are 2 ms, 0 ms and 1.5 ms after UNIX.
    a = rank_trace(0, "node-a", 100, 5_000_000_000_000, UNIX + 2 * MS, tmp_path / "a.json")
    b = rank_trace(1, "node-b", 100, 42, UNIX, tmp_path / "b.json")
    c = rank_trace(2, "node-c", 7, 987_654_321_000, UNIX + 1_500 * US, tmp_path / "c.json")
    out = tmp_path / "merged.json"
    result = merge(tfprof_exe, out, a, b, c)
    assert result.stderr == ""
    doc = load(out)

    header = doc["tfprof"]
    assert int(header["start_time_unix_ns"]) - int(header["start_time_monotonic_ns"]) == UNIX
    assert [s["aligned_by"] for s in header["sources"]] == ["wall-clock"] * 3

    names = process_names(doc)
    assert sorted(names.values()) == sorted([
        f"rank 0{DOT}node-a{DOT}pid 100", f"rank 0{DOT}node-a{DOT}pid 100{DOT}GPU 0",
        f"rank 1{DOT}node-b{DOT}pid 100", f"rank 1{DOT}node-b{DOT}pid 100{DOT}GPU 0",
        f"rank 2{DOT}node-c{DOT}pid 7", f"rank 2{DOT}node-c{DOT}pid 7{DOT}GPU 0"])
    assert len(names) == 6  # one pid per process: no two inputs share one
    pid_of = {name: pid for pid, name in names.items()}
    assert pid_of[f"rank 0{DOT}node-a{DOT}pid 100"] == 100  # the first keeps its own

    starts_ms = {"a": 2, "b": 0, "c": Decimal("1.5")}
    for rank, key in enumerate("abc"):
        spans = complete(doc, f"forward_rank{rank}")
        kernels = complete(doc, f"gemm_rank{rank}")
        # Time 0 of the output is the earliest input's first event: b's start.
        assert [ns(e["ts"]) for e in spans] == [int((starts_ms[key] + 1) * MS),
                                                int((starts_ms[key] + 11) * MS)]
        assert [ns(e["dur"]) for e in spans] == [3 * MS + 250] * 2
        assert [ns(e["ts"]) for e in kernels] == [int((starts_ms[key] + 2) * MS),
                                                  int((starts_ms[key] + 12) * MS)]
        assert [ns(e["dur"]) for e in kernels] == [1 * MS + 1] * 2
        host = f"rank {rank}{DOT}node-{key}{DOT}pid {7 if key == 'c' else 100}"
        assert {e["pid"] for e in spans} == {pid_of[host]}
        assert {e["pid"] for e in kernels} == {pid_of[host + DOT + "GPU 0"]}
        # Steps stay steps, on the input's own Steps row.
        steps = [e for e in doc["traceEvents"] if e.get("cat") == "step" and e["pid"] == pid_of[host]]
        assert [(e["args"]["step"], ns(e["ts"]), ns(e["dur"])) for e in steps] == [
            (1, int(starts_ms[key] * MS), 10 * MS), (2, int((starts_ms[key] + 10) * MS), 10 * MS)]
        assert {e["tid"] for e in steps} == {2000000000}
        assert all(e["args"]["step"] == i + 1 for i, e in enumerate(spans))

    rows = collections.Counter((e["pid"], e["args"]["name"]) for e in doc["traceEvents"]
                               if e.get("name") == "thread_name")
    assert sum(1 for (_, name) in rows if name == "Steps") == 3
    assert all(count == 1 for count in rows.values())


REAL_SESSION = textwrap.dedent("""
    import sys, time, tfprof
    with tfprof.trace(sys.argv[1], cuda="off"):
        for n in range(2):
            with tfprof.step(n):
                with tfprof.span("work"):
                    time.sleep(0.003)
""")


def test_real_traces_of_separate_processes_keep_their_wall_clock_distance(tfprof_exe, tmp_path):
    paths = []
    for rank in range(3):
        path = tmp_path / f"rank{rank}.json.gz"
        subprocess.run([sys.executable, "-c", REAL_SESSION, str(path)], check=True, timeout=120,
                       env={**os.environ, "RANK": str(rank), "TFPROF_LOG_LEVEL": "error"})
        paths.append(path)
    inputs = [load(p) for p in paths]
    out = tmp_path / "job.json.gz"
    merge(tfprof_exe, out, *reversed(paths))
    doc = load(out)
    offset = int(doc["tfprof"]["start_time_unix_ns"]) - int(doc["tfprof"]["start_time_monotonic_ns"])

    names = process_names(doc)
    for path, source in zip(paths, inputs):
        # What the file records of its rank (distributedInfo, in newer versions of the library)
        # and its process.
        [host_pid] = {e["pid"] for e in source["traceEvents"] if e.get("ph") == "X"}
        parts = []
        if "rank" in source.get("distributedInfo", {}):
            parts.append(f"rank {source['distributedInfo']['rank']}")
        parts.append(f"pid {source['tfprof'].get('pid', host_pid)}")
        label = DOT.join(parts)
        pid = [p for p, n in names.items() if n == label]
        assert len(pid) == 1, (label, names)
        own = int(source["tfprof"]["start_time_unix_ns"]) - int(source["tfprof"]["start_time_monotonic_ns"])
        expected = sorted((e["name"], ns(e["ts"]) + own, ns(e["dur"])) for e in source["traceEvents"]
                          if e.get("ph") == "X")
        merged = sorted((e["name"], ns(e["ts"]) + offset, ns(e["dur"])) for e in doc["traceEvents"]
                        if e.get("ph") == "X" and e["pid"] == pid[0])
        assert merged == expected  # every event at its own wall-clock time, to the nanosecond
        assert sum(1 for name, _, _ in merged if name.startswith("step ")) == 2


def test_tensorflow_and_pytorch_inputs_merge_by_file_name(tfprof_exe, tmp_path):
    source = training_trace().write(tmp_path / "source.json")
    pb = tmp_path / "run.pb"
    run_tfprof(tfprof_exe, "convert", str(source), "-o", str(pb))
    torch = pytorch_trace(tmp_path / "torch.json")
    out = tmp_path / "both.json"
    merge(tfprof_exe, out, pb, torch)
    doc = load(out)
    names = set(process_names(doc).values())
    assert "run.pb" in names  # TensorFlow files know no pid, host or rank
    assert f"run.pb{DOT}GPU 0" in names
    assert f"rank 2{DOT}pid 321" in names  # the PyTorch trace's rank and host process
    # The TensorFlow run's steps on tfprof's Steps rows, the PyTorch trace's as it drew them.
    steps = collections.Counter(e["pid"] for e in doc["traceEvents"] if e.get("cat") == "step"
                                or (e.get("cat") == "user_annotation"
                                    and e["name"].startswith("ProfilerStep#")))
    assert sorted(steps.values()) == [2, 3]
    # Both files are wall-clock: the PyTorch trace starts 5 ms + 1 ms after UNIX, the TF run at
    # UNIX, so the TF run's first step is time 0.
    first = min(ns(e["ts"]) for e in doc["traceEvents"] if e.get("cat") == "step")
    assert first == 0
    torch_steps = sorted(ns(e["ts"]) for e in doc["traceEvents"]
                         if e.get("cat") in ("step", "user_annotation")
                         and e["name"] in ("step 1", "ProfilerStep#1"))
    assert 6 * MS in torch_steps


def test_an_input_without_wall_clock_is_aligned_with_a_note(tfprof_exe, tmp_path):
    late = rank_trace(0, "node-a", 100, 777, UNIX + 3 * MS, tmp_path / "late.json")
    early = rank_trace(1, "node-b", 200, 5, UNIX + 1 * MS, tmp_path / "early.json")
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "foo", "name": "other", "pid": 9, "tid": 9, "ts": 500.5, "dur": 2}]}))
    out = tmp_path / "out.json"
    result = merge(tfprof_exe, out, late, plain, early)
    assert f"note: {plain}: records no wall-clock time" in result.stderr
    doc = load(out)
    [other] = complete(doc, "other")
    assert ns(other["ts"]) == 0  # with the earliest input's first event (early's step 1)
    assert min(ns(e["ts"]) for e in complete(doc, "step 1")) == 0
    assert [ns(e["ts"]) for e in complete(doc, "forward_rank0")] == [3 * MS, 13 * MS]
    assert "pid 9" in process_names(doc).values()


def test_align_start_puts_runs_of_different_days_side_by_side(tfprof_exe, tmp_path):
    day = 86_400 * 1_000_000_000
    monday = rank_trace(0, "node", 1, 0, UNIX, tmp_path / "monday.json")
    tuesday = rank_trace(0, "node", 1, 10**12, UNIX + day, tmp_path / "tuesday.json")
    out = tmp_path / "out.json"
    merge(tfprof_exe, out, monday, tuesday, extra=("--align=start",))
    doc = load(out)
    assert [ns(e["ts"]) for e in complete(doc, "step 1")] == [0, 0]
    assert "start_time_unix_ns" not in doc["tfprof"]
    names = sorted(process_names(doc).values())
    assert names[0] == f"rank 0{DOT}node{DOT}pid 1{DOT}{monday}"  # equal labels get their paths
    assert len(set(process_names(doc))) == 4


def test_merged_output_reads_back_and_converts(tfprof_exe, tmp_path):
    a = rank_trace(0, "node-a", 100, 10, UNIX, tmp_path / "a.json")
    b = rank_trace(1, "node-b", 200, 20, UNIX + 1 * MS, tmp_path / "b.json")
    out = tmp_path / "merged.json"
    merge(tfprof_exe, out, a, b)
    again = tmp_path / "again.json"
    run_tfprof(tfprof_exe, "convert", str(out), "-o", str(again))
    assert sorted(process_names(load(again)).values()) == sorted(process_names(load(out)).values())
    assert len(complete(load(again), "step 1")) == 2


# ---- bad input and the command line -----------------------------------------------------------------

def test_a_missing_or_damaged_input_exits_1_naming_it(tfprof_exe, tmp_path):
    good = rank_trace(0, "node-a", 100, 10, UNIX, tmp_path / "good.json")
    missing = tmp_path / "missing.json"
    out = tmp_path / "out.json"
    result = merge(tfprof_exe, out, good, missing, check=1)
    assert str(missing) in result.stderr
    assert not out.exists()

    data = good.read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(data[: len(data) // 2])
    # Cut short (a writer killed): merged without --salvage, with the warning.
    recovered = merge(tfprof_exe, out, good, cut)
    assert f"tfprof merge: warning: {cut}: the file ends at byte {len(data) // 2}" in recovered.stderr
    assert len(process_names(load(out))) >= 2
    out.unlink()

    damaged = tmp_path / "damaged.json"
    at = data.index(b",", len(data) // 2) + 1  # no JSON value starts with '@'
    damaged.write_bytes(data[:at] + b"@@@" + data[at:])
    result = merge(tfprof_exe, out, good, damaged, check=1)
    assert f"{damaged}: byte " in result.stderr
    assert not out.exists()
    salvaged = merge(tfprof_exe, out, good, damaged, extra=("--salvage",))
    assert "warning: " in salvaged.stderr
    assert len(process_names(load(out))) >= 2

    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02 not a trace")
    result = merge(tfprof_exe, out, junk, check=1)
    assert f"{junk}: not a trace" in result.stderr


def test_help_exits_0(tfprof_exe):
    text = run_tfprof(tfprof_exe, "merge", "--help").stdout
    assert text.startswith("usage: tfprof merge")
    for word in ("rank R", "--align", "wall-clock", "Exit status"):
        assert word in text


@pytest.mark.parametrize("args, message", [
    ([], "no input files given"),
    (["a.json"], "no output given"),
    (["-o", "out.json", "--align=middle", "a.json"], "--align 'middle' is not one of wall, start"),
    (["-o", "out.json", "--bogus", "a.json"], "unknown option '--bogus'"),
])
def test_usage_errors_exit_2(tfprof_exe, args, message):
    result = run_tfprof(tfprof_exe, "merge", *args, check=2)
    assert message in result.stderr


def test_the_output_may_not_be_an_input(tfprof_exe, tmp_path):
    a = rank_trace(0, "node-a", 100, 10, UNIX, tmp_path / "a.json")
    before = a.read_bytes()
    result = merge(tfprof_exe, a, a, check=2)
    assert "refusing to overwrite" in result.stderr
    assert a.read_bytes() == before


def test_an_unwritable_output_exits_3(tfprof_exe, tmp_path):
    a = rank_trace(0, "node-a", 100, 10, UNIX, tmp_path / "a.json")
    result = merge(tfprof_exe, tmp_path / "missing" / "out.json", a, check=3)
    assert str(tmp_path / "missing" / "out.json") in result.stderr
