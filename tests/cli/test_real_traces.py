"""`tfprof summary` on real traces that other profilers wrote (tests/data/real/, README.md there
names each file's source and licence): every figure checked here is computed again, independently,
from the file's own events in this test.

So far: PyTorch profiler (Kineto) traces of PyTorch 1.8 to today, CUDA and ROCm, training and
inference, 1 to 8 ranks. TensorFlow timeline.py files are read but not yet understood (their GPU
rows are processes named "/gpu:0/stream:N Compute"): issue 19 item 2.
"""

from __future__ import annotations

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


def events_of(path: pathlib.Path) -> List[Dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as file:
        data = json.load(file)
    return data if isinstance(data, list) else data["traceEvents"]


def union_us(intervals: List[Tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for begin, finish in sorted(intervals):
        if finish > end:
            total += finish - max(begin, end)
            end = finish
    return total


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
