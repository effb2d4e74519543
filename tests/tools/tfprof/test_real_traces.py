"""`tfprof summary` on real traces that other profilers wrote (tests/data/real/, README.md there
names each file's source and licence): every figure checked here is computed again, independently,
from the file's own events in this test.

So far: PyTorch profiler (Kineto) traces of PyTorch 1.8 to today, CUDA and ROCm, training and
inference, 1 to 8 ranks. TensorFlow timeline.py files are checked the same way in
test_tf_timeline.py.
"""

from __future__ import annotations

import decimal
import fnmatch
import gzip
import json
import pathlib
import re
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof

REAL = ROOT / "tests" / "data" / "real"
PYTORCH_TRACES = sorted(p for p in REAL.rglob("*.json*") if "tensorflow" not in p.parts)

HOST_CATEGORIES = {"cpu_op", "Operator", "user_annotation"}
KERNEL_CATEGORIES = {"kernel", "Kernel"}
GPU_CATEGORIES = KERNEL_CATEGORIES | {"gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
STEP_NAME = re.compile(r"ProfilerStep#(\d+)")
# Kernel launches of the CUDA runtime and driver APIs and of HIP (ROCm traces file hip* calls
# under "cuda_runtime" too), graph launches included.
LAUNCH_NAME = re.compile(r"(cuda|cu|hip)(Ext)?(Module)?Launch(Cooperative)?Kernel(ExC|Ex)?(_v\d+)?"
                         r"|(cuda|cu|hip)GraphLaunch(_v\d+)?")
RUNTIME_CATEGORIES = {"cuda_runtime", "cuda_driver", "Runtime"}
# Collectives' kernels, as HTA tells them: "nccl" in the name (RCCL's too), any case.
COLLECTIVE = re.compile(r"nccl|rccl", re.IGNORECASE)


def events_of(path: pathlib.Path) -> List[Dict[str, Any]]:
    """The trace's events, with "ts" made relative to the trace's first whole microsecond:
    parsed exactly (epoch microseconds with three decimals have more digits than a double
    holds), then kept as floats that are exact to the nanosecond."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as file:
        data = json.load(file, parse_float=decimal.Decimal)
    events = data if isinstance(data, list) else data["traceEvents"]
    stamps = [e["ts"] for e in events if "ts" in e]
    base = int(min(stamps)) if stamps else 0
    for event in events:
        if "ts" in event:
            event["ts"] = float(decimal.Decimal(event["ts"]) - base)
        if "dur" in event:
            event["dur"] = float(event["dur"])
        for key, value in event.get("args", {}).items() if isinstance(event.get("args"), dict) else ():
            if isinstance(value, decimal.Decimal):
                event["args"][key] = float(value)
    return events


def union_us(intervals: List[Tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for begin, finish in sorted(intervals):
        if finish > end:
            total += finish - max(begin, end)
            end = finish
    return total


# tfprof's default input-op patterns (docs/cli.md, "Input ops"), matched as fnmatch does.
INPUT_PATTERNS = ("IteratorGetNext*", "*IteratorGetNext*", "*DataLoader*", "*dataloader*",
                  "*_next_data*", "*input_pipeline*", "*input*", "*Input*", "*load_batch*",
                  "*load_data*", "*data_load*", "*read_batch*", "*next_batch*", "*get_batch*",
                  "*wait_for_batch*")


def is_input_op(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in INPUT_PATTERNS)


def clipped(events: List[Dict[str, Any]], window: Tuple[float, float]) -> List[Tuple[float, float]]:
    """The events' [ts, ts + dur) intervals cut to `window`, the empty ones left out."""
    begin, end = window
    cut = [(max(float(e["ts"]), begin), min(float(e["ts"]) + float(e.get("dur", 0)), end))
           for e in events]
    return [(b, f) for b, f in cut if f > b]


def summary_of(tfprof_exe: pathlib.Path, path: pathlib.Path) -> Dict[str, Any]:
    (trace,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)["traces"]
    return trace


@pytest.mark.parametrize("path", PYTORCH_TRACES, ids=lambda p: str(p.relative_to(REAL)))
def test_kernels_steps_and_gpu_busy_time_match_the_trace(tfprof_exe: pathlib.Path,
                                                         path: pathlib.Path) -> None:
    events = [e for e in events_of(path) if e.get("ph") == "X"]
    kernels = [e for e in events if e.get("cat") in KERNEL_CATEGORIES]
    gpu = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events
           if e.get("cat") in GPU_CATEGORIES]
    steps = {int(STEP_NAME.fullmatch(e["name"]).group(1)): e for e in events
             if e.get("cat") in HOST_CATEGORIES and STEP_NAME.fullmatch(e.get("name", ""))}
    launches = [float(e["ts"]) for e in events
                if e.get("cat") in RUNTIME_CATEGORIES and LAUNCH_NAME.fullmatch(e["name"])]

    summary = summary_of(tfprof_exe, path)
    assert summary["kernel_count"] == len(kernels)
    collectives = [e for e in kernels if COLLECTIVE.search(e["name"])]
    gloo = [e for e in events if e.get("cat") in HOST_CATEGORIES and e["name"].startswith("gloo:")]
    gpu_events = [e for e in events if e.get("cat") in GPU_CATEGORIES]
    assert summary["communication_kernel_count"] == len(collectives)
    assert summary["has_gpu"] == bool(gpu)
    assert sorted(step["number"] for step in summary["steps"]) == sorted(steps)
    for step in summary["steps"]:
        marker = steps[step["number"]]
        begin, duration = float(marker["ts"]), float(marker["dur"])
        assert step["duration_ns"] == pytest.approx(duration * 1000, abs=1000)
        assert step["launches"] == sum(1 for at in launches if begin <= at < begin + duration)
        # GPU busy: the union of kernels, copies and memsets inside the step's window.
        busy = union_us([(max(b, begin), min(f, begin + duration)) for b, f in gpu
                         if f > begin and b < begin + duration])
        measured = (step["duration_ns"] - step["gpu_idle_ns"]) / 1000 if gpu else 0.0
        assert measured == pytest.approx(busy, abs=0.01 * duration), step["number"]
        # Compute: kernels other than collectives; communication: collectives (NCCL kernels,
        # Gloo's host collectives) while no compute kernel runs: the union of both less the
        # compute union.
        window = (begin, begin + duration)
        compute = clipped([k for k in kernels if k not in collectives], window)
        both = clipped(kernels + gloo, window)
        assert step["gpu_compute_ns"] / 1000 == pytest.approx(union_us(compute), abs=1.0)
        exposed = union_us(both) - union_us(compute)
        assert step["communication_ns"] / 1000 == pytest.approx(exposed, abs=1.0)
        # Input wait: the step's own thread inside an input op (children included), while no
        # GPU work and no collective runs.
        waiting = clipped([e for e in events if e.get("cat") in HOST_CATEGORIES
                           and (e["pid"], e["tid"]) == (marker["pid"], marker["tid"])
                           and is_input_op(e["name"]) and not STEP_NAME.fullmatch(e["name"])],
                          window)
        taken = union_us(clipped(gpu_events + gloo, window) + waiting) - \
            union_us(clipped(gpu_events + gloo, window))
        assert step["input_wait_ns"] / 1000 == pytest.approx(taken, abs=1.0), step["number"]


def test_rocm_hip_calls_are_launches_and_synchronisation(tfprof_exe: pathlib.Path) -> None:
    # HIP's launch and blocking calls, as the CUDA ones: before, a ROCm step had no launches and
    # its hipMemcpyWithStream/hipDeviceSynchronize waits were plain host compute.
    path = REAL / "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    events = events_of(path)
    step = next(s for s in summary_of(tfprof_exe, path)["steps"] if s["number"] == 1)
    (marker,) = [e for e in events
                 if e.get("name") == "ProfilerStep#1" and e.get("cat") == "user_annotation"]
    begin, end = marker["ts"], marker["ts"] + marker["dur"]
    inside = [e for e in events if e.get("cat") == "cuda_runtime" and begin <= e["ts"] < end]
    assert step["launches"] == sum(1 for e in inside if "LaunchKernel" in e["name"]) == 14
    waits = union_us([(e["ts"], e["ts"] + e["dur"]) for e in inside
                      if e["name"] in ("hipMemcpyWithStream", "hipDeviceSynchronize")])
    assert waits > 0 and step["sync_ns"] == pytest.approx(waits * 1000, rel=0.01)


def test_pytorch_1_8_categories_are_understood(tfprof_exe: pathlib.Path) -> None:
    # PyTorch 1.8-1.10 spelled the categories Operator, Runtime, Kernel, Memcpy and Memset: before
    # they were read, every kernel of such a trace counted as a host op and no step was found.
    path = (REAL / "kineto/tb_plugin/samples/resnet50_profiler_api_num_workers_0/"
            "worker0.pt.trace.trimmed-1step.json.gz")
    summary = summary_of(tfprof_exe, path)
    assert summary["has_gpu"] and summary["has_steps"]
    (step,) = summary["steps"]
    events = events_of(path)
    (marker,) = [e for e in events if e.get("name") == "ProfilerStep#5"]
    begin, end = marker["ts"], marker["ts"] + marker["dur"]
    kernels = [e for e in events if e.get("cat") == "Kernel"]
    launches = [e for e in events if e.get("cat") == "Runtime" and e["name"] == "cudaLaunchKernel"]
    # A step's kernels are those that run in its window (966 here). All 1476 were launched
    # inside the step; counting by launch, as HTA does, is still to come (issue 19).
    assert step["number"] == 5
    assert step["kernels"] == sum(1 for k in kernels if begin <= k["ts"] < end) == 966
    assert step["launches"] == sum(1 for r in launches if begin <= r["ts"] < end)


def test_self_time_never_exceeds_total_time(tfprof_exe: pathlib.Path) -> None:
    # Same-named spans that overlap on a thread without nesting (seen in PyTorch traces) once
    # made an op's self time larger than its total.
    for path in PYTORCH_TRACES:
        summary = summary_of(tfprof_exe, path)
        for op in summary["top_ops_by_self"] + summary["top_ops_by_total"]:
            assert 0 <= op["self_ns"] <= op["total_ns"], (path.name, op)


def test_memory_events_are_counted_and_analysed(tfprof_exe: pathlib.Path) -> None:
    path = (REAL / "kineto/tb_plugin/samples/resnet50_num_workers_0/"
            "worker0.1623143089861.pt.trace.trimmed-1step.json.gz")
    memory = sum(1 for e in events_of(path) if e.get("name") == "[memory]")
    assert memory > 0
    summary = summary_of(tfprof_exe, path)
    assert summary["memory_events"] == memory
    assert sum(d["events"] for d in summary["memory"]["devices"]) == memory
    text = run_tfprof(tfprof_exe, "summary", str(path)).stdout
    assert "\nMemory (bytes in use)\n" in text
    assert "memory events ([memory])" not in text


def test_the_cupti_range_profiler_is_not_host_compute(tfprof_exe: pathlib.Path) -> None:
    # Kineto's range profiler writes its measured ranges on the GPU's process; they were read as
    # host ops of an unknown category and summed as host compute.
    path = REAL / "hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz"
    ranges = {e["name"] for e in events_of(path) if e.get("cat") == "cuda_profiler_range"}
    assert ranges
    summary = summary_of(tfprof_exe, path)
    names = {op["name"] for op in summary["top_ops_by_total"] + summary["top_ops_by_self"]}
    assert not names & ranges
    assert summary["unknown_categories"] == []


def test_an_async_copy_that_waits_for_its_copy_is_synchronisation(tfprof_exe: pathlib.Path) -> None:
    # cudaMemcpyAsync from pageable memory returns only near the copy's end: the host waits.
    path = REAL / "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    events = [e for e in events_of(path) if e.get("ph") == "X"]
    copies = {e["args"]["correlation"]: (e["ts"], e["ts"] + e["dur"]) for e in events
              if e.get("cat") == "gpu_memcpy" and "correlation" in e.get("args", {})}
    calls = [e for e in events if e.get("cat") == "cuda_runtime"]

    def holds_its_copy(call: Dict[str, Any]) -> bool:
        """The call overlaps at least half of its copy: the host waited while it ran."""
        begin, end = copies.get(call["args"].get("correlation"), (0, 0))
        overlap = min(end, call["ts"] + call["dur"]) - max(begin, call["ts"])
        return overlap > 0 and 2 * overlap >= end - begin

    blocking = [(e["ts"], e["ts"] + e["dur"]) for e in calls
                if e["name"] == "cudaMemcpyAsync" and holds_its_copy(e)]
    waits = [(e["ts"], e["ts"] + e["dur"]) for e in calls
             if re.fullmatch(r"cuda(Device|Stream|Event)Synchronize|cudaMemcpy", e["name"])]
    assert max(f - b for b, f in blocking) > 30000  # one call waits 35 ms
    summary = summary_of(tfprof_exe, path)
    assert summary["step_total"]["sync_ns"] / 1000 == pytest.approx(union_us(blocking + waits),
                                                                    abs=1.0)


ALL_TRACES = sorted(REAL.rglob("*.json*"))
TEXT_COLUMNS = ("gpu_compute_ns", "communication_ns", "memcpy_ns", "input_wait_ns",
                "host_compute_ns", "idle_ns", "gpu_idle_ns")


@pytest.mark.parametrize("path", ALL_TRACES, ids=lambda p: str(p.relative_to(REAL)))
def test_the_text_summary_says_what_the_json_says(tfprof_exe: pathlib.Path,
                                                  path: pathlib.Path) -> None:
    # The totals row of the text's step table ("all steps", or "trace" without steps) is the JSON's
    # step_total, column by column, and every finding's title is printed.
    summary = summary_of(tfprof_exe, path)
    text = run_tfprof(tfprof_exe, "summary", str(path)).stdout
    label = "all steps" if summary["has_steps"] else "trace"
    (row,) = [line for line in text.splitlines() if line.strip().startswith(label + " ")]
    cells = row.strip()[len(label):].split()
    total = summary["step_total"]
    assert float(cells[0]) == pytest.approx(total["duration_ns"] / 1e6, abs=0.0006)
    for column, cell in zip(TEXT_COLUMNS, cells[1:]):
        if cell == "-":  # GPU idle of a trace without GPU work
            assert column == "gpu_idle_ns" and not summary["has_gpu"]
            continue
        share = 100 * total[column] / total["duration_ns"]
        assert float(cell.rstrip("%")) == pytest.approx(share, abs=0.051), column
    assert int(cells[-1]) == total["kernels"]
    for finding in summary["findings"]:
        assert finding["title"] in text
    if summary["unknown_categories"]:
        assert "Unknown categories, read as host ops:" in text
