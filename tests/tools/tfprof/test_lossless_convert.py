"""`tfprof convert` of PyTorch profiler traces to Chrome JSON keeps what the input had: every
event's name, category and args (tfprof adds only its own keys: the step, the launch shape split
into static and dynamic shared memory, a copy's direction), the same number of events of each
phase and category (metadata excepted: tfprof writes its own process and row names), the
ProfilerStep spans where the profiler drew them, the flows with their ids and binding points, and
Kineto's whole-trace events. Converting the converted file again gives the same bytes. A merge of
two ranks keeps the same per rank, less the whole-trace events (their times are the file's own).

The expected figures come from the input files, parsed here with the json module."""

from __future__ import annotations

import gzip
import json
import pathlib
from collections import Counter, defaultdict
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof

REAL = ROOT / "tests" / "data" / "real"
TRACES = [
    REAL / "hta" / "nccl_parser_config" / "nccl_data.json.gz",  # fwdbwd flows, NCCL args
    REAL / "hta" / "trace_filter" / "sampled_rank-0.json.gz",  # record_shapes
    REAL / "param" / "dlrm_kineto" / "worker0_step_12.1694128201545.pt.trace.json.gz",
    REAL / "hta" / "critical_path" / "alexnet" /
    "benchmark_result_2869224_1695835535_trace.json.gz",  # cuda_sync events
    REAL / "hta" / "trace_diff" / "control" / "control.trimmed-1step.json.gz",  # no ac2g flows
    REAL / "hta" / "amd_trace" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",  # hip_runtime
    REAL / "tracelens" / "h100" / "gaunernst_bert-small-uncased__1016001.json.gz",  # with_stack
]
# Keys tfprof writes from its model beside the file's own.
ADDED = {"step", "static shared memory", "dynamic shared memory", "kind", "device", "stream",
         "context", "op", "incomplete", "bytes", "memory bandwidth (GB/s)"}


def load(path: pathlib.Path) -> Dict[str, Any]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def key(event: Dict[str, Any]) -> Tuple:
    """Identifies an event in both files: phase, category, name, times (ns) and id."""
    return (event.get("ph"), event.get("cat"), event.get("name"),
            round(float(event.get("ts", 0)) * 1000), round(float(event.get("dur", 0)) * 1000),
            json.dumps(event.get("id")))


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1)
    return a == b


def differences(original: Dict[str, Any], converted: Dict[str, Any]) -> List[str]:
    """What the converted file lost or changed of the original's events (metadata aside)."""
    problems: List[str] = []
    before = Counter((e.get("ph"), e.get("cat")) for e in original["traceEvents"]
                     if e.get("ph") != "M")
    after = Counter((e.get("ph"), e.get("cat")) for e in converted["traceEvents"]
                    if e.get("ph") != "M")
    for group in sorted(set(before) | set(after), key=str):
        if before[group] != after[group]:
            problems.append(f"{group}: {before[group]} events in the input, {after[group]} written")
    written = defaultdict(list)
    for event in converted["traceEvents"]:
        if event.get("ph") != "M":
            written[key(event)].append(event)
    for event in original["traceEvents"]:
        if event.get("ph") == "M":
            continue
        matches = written.get(key(event))
        if not matches:
            problems.append(f"not written: {key(event)}")
            continue
        # Events alike in every key: the one whose args agree.
        args = event.get("args", {})
        best = max(range(len(matches)), key=lambda i: sum(
            same_value(matches[i].get("args", {}).get(k), v) for k, v in args.items()))
        copy = matches.pop(best)
        copy_args = copy.get("args", {})
        for name, value in args.items():
            if name not in copy_args:
                problems.append(f"{key(event)}: arg {name!r} lost")
            elif not same_value(copy_args[name], value):
                problems.append(f"{key(event)}: arg {name!r} {value!r} -> {copy_args[name]!r}")
        for name in copy_args:
            if name not in args and name not in ADDED:
                problems.append(f"{key(event)}: arg {name!r} added")
        for member in ("bp", "s", "pid", "tid"):
            if member in ("pid", "tid") and isinstance(event.get(member), int):
                continue  # tfprof renumbers a row only where two share an id
            if event.get(member) != copy.get(member):
                problems.append(f"{key(event)}: {member} {event.get(member)!r} -> "
                                f"{copy.get(member)!r}")
    return problems


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_converting_a_pytorch_trace_keeps_every_event(tfprof_exe: pathlib.Path,
                                                      tmp_path: pathlib.Path,
                                                      path: pathlib.Path) -> None:
    out = tmp_path / "converted.json"
    run_tfprof(tfprof_exe, "convert", str(path), "-o", str(out))
    original, converted = load(path), load(out)
    problems = differences(original, converted)
    assert not problems, "\n".join(problems[:40])
    # The steps are the profiler's spans, named as it named them: no "step N" rows of tfprof's.
    steps = sorted(e["name"] for e in original["traceEvents"]
                   if e.get("name", "").startswith("ProfilerStep#"))
    assert sorted(e["name"] for e in converted["traceEvents"]
                  if e.get("name", "").startswith("ProfilerStep#")) == steps
    assert not any(e.get("cat") == "step" for e in converted["traceEvents"])


@pytest.mark.parametrize("path", TRACES[:3], ids=lambda p: p.name)
def test_converting_the_converted_file_again_changes_nothing(tfprof_exe: pathlib.Path,
                                                             tmp_path: pathlib.Path,
                                                             path: pathlib.Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    run_tfprof(tfprof_exe, "convert", str(path), "-o", str(first))
    run_tfprof(tfprof_exe, "convert", str(first), "-o", str(second))
    once, twice = load(first), load(second)
    # The events in the same order; the metadata as a set (rows are named in the order they
    # were made, and the first conversion made them in the input's order); the header less its
    # "sources", which names each conversion's input.
    events = lambda d: [e for e in d["traceEvents"] if e.get("ph") != "M"]
    metadata = lambda d: sorted(json.dumps(e, sort_keys=True) for e in d["traceEvents"]
                                if e.get("ph") == "M")
    assert events(once) == events(twice)
    assert metadata(once) == metadata(twice)
    header = lambda d: {k: v for k, v in d.items() if k != "traceEvents"}
    for document in (once, twice):
        del document["tfprof"]["sources"]
    assert header(once) == header(twice)
    assert once["tfprof"].get("flows_as_read") is True


def test_the_summary_of_a_converted_trace_has_the_same_steps(tfprof_exe: pathlib.Path,
                                                             tmp_path: pathlib.Path) -> None:
    path = TRACES[1]
    out = tmp_path / "converted.json"
    run_tfprof(tfprof_exe, "convert", str(path), "-o", str(out))
    summaries = [json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(p)).stdout)
                 ["traces"][0] for p in (path, out)]
    # Every figure of every step, and the kernels and launches over the trace.
    assert [s["number"] for s in summaries[0]["steps"]] == [551, 552]
    assert summaries[1]["steps"] == summaries[0]["steps"]
    for name in ("kernel_count", "kernel_total_ns", "communication_kernel_ns", "launch_calls"):
        assert summaries[1][name] == summaries[0][name], name


def test_a_merge_of_two_ranks_keeps_each_ranks_events(tfprof_exe: pathlib.Path,
                                                      tmp_path: pathlib.Path) -> None:
    inputs = sorted((REAL / "hta" / "trace_filter").glob("sampled_rank-*.json.gz"))
    assert len(inputs) == 2
    out = tmp_path / "merged.json"
    run_tfprof(tfprof_exe, "merge", "-o", str(out), *[str(p) for p in inputs])
    merged = load(out)
    expected = Counter()
    for path in inputs:
        expected.update((e.get("ph"), e.get("cat"), e.get("name")) for e in load(path)["traceEvents"]
                        if e.get("ph") != "M" and e.get("cat") != "Trace" and e.get("s") != "g")
    written = Counter((e.get("ph"), e.get("cat"), e.get("name")) for e in merged["traceEvents"]
                      if e.get("ph") != "M")
    assert written == expected
    # Host ops keep their shapes through the merge.
    shapes = sum(1 for path in inputs for e in load(path)["traceEvents"]
                 if "Input Dims" in e.get("args", {}))
    assert shapes > 0
    assert sum(1 for e in merged["traceEvents"] if "Input Dims" in e.get("args", {})) == shapes
