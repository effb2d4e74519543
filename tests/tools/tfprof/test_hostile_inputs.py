"""Hostile inputs (issue 32, items 6 and 7): shapes that made a reader or writer quadratic, or
made it hold each name once per event, run at sizes where the quadratic code took 5 to 40 s and
the linear code takes a fraction of one. Each run has a time limit and a memory limit (the bound
docs/cli.md states: peak resident memory at most 64 MiB + 3 x (input + output bytes) + 128 bytes
an event, the input counted uncompressed), and what it wrote is read back and counted.

The shapes come from hostile_traces.py; benchmarks/bench_hostile_inputs.py measures them at two
sizes (benchmarks/RESULTS.md, "Hostile inputs").
"""

from __future__ import annotations

import gzip
import json
import pathlib
import shutil
from typing import Iterator

import pytest

import hostile_traces
from conftest import run_tfprof
from peak_memory import run_measured

TIME_LIMIT_S = 5.0
MEMORY_FLOOR_MIB = 64
MEMORY_MULTIPLE = 3
MEMORY_PER_EVENT = 128
ADDRESS_SPACE_CAP = 8 << 30  # a runaway run fails instead of taking the machine's memory

# (shape, events, input file suffix, what is run on it)
CASES = [
    ("overlapping", 100_000, ".json", "pftrace"),
    ("overlapping", 100_000, ".json", "timeline"),
    ("overlapping", 100_000, ".json", "lanes"),
    ("overlapping", 100_000, ".xplane.pb", "pftrace"),
    ("repeated_steps", 40_000, ".json", "tensorboard"),
    ("repeated_steps", 40_000, ".pb", "tensorboard"),
    ("many_threads", 100_000, ".pb", "summary"),
    ("many_threads", 100_000, ".tfrecord", "timeline"),
    ("many_threads", 100_000, ".json.gz", "pftrace"),
    ("many_processes", 20_000, ".pftrace", "json"),
    ("deep_nesting", 50_000, ".json", "pftrace"),
    ("deep_nesting", 50_000, ".pftrace", "tfrecord"),
    ("distinct_names", 100_000, ".json", "tensorboard"),
    ("long_names", 5_000, ".json", "pb"),
    ("many_events", 300_000, ".xplane.pb", "summary"),  # 15 bytes an event: the model dominates
    ("one_long_name", 10, ".xplane.pb", "pb"),
    ("one_long_name", 10, ".xplane.pb", "tfrecord"),
    ("one_long_name", 10, ".xplane.pb", "tensorboard"),
]


def make_input(tfprof_exe: pathlib.Path, tmp: pathlib.Path, shape: str, events: int,
               suffix: str) -> pathlib.Path:
    if suffix in (".json", ".json.gz", ".xplane.pb"):
        return hostile_traces.write(shape, events, tmp / f"{shape}{suffix}")
    source = hostile_traces.write_json(shape, events, tmp / f"{shape}-source.json")
    target = tmp / f"{shape}{suffix}"
    run_tfprof(tfprof_exe, "convert", str(source), "-o", str(target))
    source.unlink()
    return target


def uncompressed_size(path: pathlib.Path) -> int:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as compressed:
            return sum(len(chunk) for chunk in iter(lambda: compressed.read(1 << 20), b""))
    return path.stat().st_size


def written_size(path: pathlib.Path) -> int:
    if path.is_dir():
        return sum(child.stat().st_size for child in path.iterdir())
    return path.stat().st_size if path.exists() else 0


def summary_of(tfprof_exe: pathlib.Path, path: pathlib.Path) -> dict:
    result = run_tfprof(tfprof_exe, "summary", "--json", str(path))
    report = json.loads(result.stdout)
    assert report["errors"] == []
    return report["traces"][0]


def timeline_ops(path: pathlib.Path) -> int:
    """Op spans in a --layout timeline file, less tfprof's losses node (one per run)."""
    events = json.loads(path.read_text())["traceEvents"]
    return sum(1 for event in events if event.get("ph") == "X" and event.get("cat") == "Op" and
               event.get("name") != "Losses")


@pytest.fixture
def scratch(tmp_path: pathlib.Path) -> Iterator[pathlib.Path]:
    """tmp_path, emptied after the test: the outputs reach hundreds of MB, and pytest keeps the
    directories of its last three sessions."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.parametrize("shape,events,suffix,run", CASES,
                         ids=[f"{c[0]}{c[2]}-{c[3]}" for c in CASES])
def test_a_hostile_input_is_read_and_written_within_its_time_and_memory(
        tfprof_exe, scratch, shape, events, suffix, run):
    tmp_path = scratch
    source = make_input(tfprof_exe, tmp_path, shape, events, suffix)
    expected = summary_of(tfprof_exe, source)
    assert expected["activities"] > 0
    if run == "summary":
        output = None
        command = [str(tfprof_exe), "summary", str(source)]
    elif run in ("timeline", "lanes"):
        output = tmp_path / "out.json"
        command = [str(tfprof_exe), "convert", str(source), "-o", str(output),
                   "--layout", "timeline"]
        if run == "lanes":
            command += ["--rows", "lanes"]
    elif run == "tensorboard":
        output = tmp_path / "logs"
        command = [str(tfprof_exe), "convert", str(source), "-o", f"{output}/"]
    else:
        output = tmp_path / f"out.{run}"
        command = [str(tfprof_exe), "convert", str(source), "-o", str(output)]

    seconds, peak_mib, code, stderr = run_measured(command, 2 * TIME_LIMIT_S, ADDRESS_SPACE_CAP)
    assert code == 0, stderr
    assert seconds < TIME_LIMIT_S, f"{seconds:.1f} s"
    moved = uncompressed_size(source) + (written_size(output) if output else 0)
    bound_mib = MEMORY_FLOOR_MIB + (MEMORY_MULTIPLE * moved + MEMORY_PER_EVENT * events) / (1 << 20)
    assert peak_mib <= bound_mib, f"peak {peak_mib} MiB, bound {bound_mib:.0f} MiB"

    if output is None:
        return
    if run in ("timeline", "lanes"):
        assert timeline_ops(output) == expected["activities"]
        return
    back = summary_of(tfprof_exe, output)
    assert back["activities"] == expected["activities"]
    assert len(back["steps"]) == len(expected["steps"])
