"""`tfprof summary` on the real traces added to tests/data/real/ for issue 34 (README.md there names
each file's source, commit and licence): traces whose figures sit at a framework's edges. Every
figure is computed again here from the file's own events, without tfprof.

- hta/critical_path/simple_add: a PyTorch benchmark whose first cuDNN launch takes 4.2 s (the
  driver loading the module): a one-time cost, not a launch-bound program.
- tensorflow/dleebrown_ANNA: a TF 1.1 timeline.py trace with a queue-based input pipeline
  (FIFOQueueV2 and QueueDequeueManyV2) and a Conv2DBackpropInput, which is compute, not input.
"""

from __future__ import annotations

import gzip
import json
import pathlib
import re
import statistics
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof

REAL = ROOT / "tests" / "data" / "real"
SIMPLE_ADD = REAL / "hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz"
ANNA = REAL / "tensorflow/dleebrown_ANNA/timeline_01.json"

LAUNCH_NAME = re.compile(r"(cuda|cu|hip)(Ext)?(Module)?Launch(Cooperative)?Kernel(ExC|Ex)?(_v\d+)?")
GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
# TensorFlow's input ops by op type (TF's op registry): dequeues of TF1 queues and staging areas,
# TF1 readers, tf.data's get-next and infeed. A name that only contains "Input" (a
# Conv2DBackpropInput) or a scope named "input" is not one.
TF_INPUT_OP_TYPES = {
    "IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional",
    "MultiDeviceIteratorGetNextFromShard", "QueueDequeue", "QueueDequeueV2", "QueueDequeueMany",
    "QueueDequeueManyV2", "QueueDequeueUpTo", "QueueDequeueUpToV2", "Unstage", "ReaderRead",
    "ReaderReadV2", "ReaderReadUpTo", "ReaderReadUpToV2", "InfeedDequeue", "InfeedDequeueTuple"}
# A launch counts as a one-time cost when it is its kernel's first launch and takes at least this
# many times the trace's median launch (docs: the one_time_costs finding).
ONE_TIME_FACTOR = 50


def load(path: pathlib.Path) -> List[Dict[str, Any]]:
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


def subtract_us(these: List[Tuple[float, float]], those: List[Tuple[float, float]]) -> float:
    """Length of the union of `these` less the union of `those`."""
    return union_us(these + those) - union_us(those)


def summary_of(tfprof_exe: pathlib.Path, path: pathlib.Path) -> Dict[str, Any]:
    (trace,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)["traces"]
    return trace


def span(event: Dict[str, Any]) -> Tuple[float, float]:
    return float(event["ts"]), float(event["ts"]) + float(event.get("dur", 0))


# --- hta/critical_path/simple_add: a 4.2 s first launch -------------------------------------------

def simple_add_figures() -> Dict[str, Any]:
    complete = [e for e in load(SIMPLE_ADD) if e.get("ph") == "X"]
    launches = sorted((e for e in complete if e.get("cat") in ("cuda_runtime", "cuda_driver")
                       and LAUNCH_NAME.fullmatch(e["name"])), key=lambda e: e["ts"])
    kernels = [e for e in complete if e.get("cat") == "kernel"]
    kernel_of = {e["args"]["correlation"]: e["name"] for e in kernels}
    median = statistics.median(float(e["dur"]) for e in launches)
    seen, one_time = set(), []
    for launch in launches:
        kernel = kernel_of.get(launch["args"].get("correlation"))
        if kernel not in seen and float(launch["dur"]) >= ONE_TIME_FACTOR * median:
            one_time.append((launch["name"], kernel, launch["ts"], launch["dur"]))
        seen.add(kernel)
    return {"launches": launches, "kernels": kernels, "one_time": one_time,
            "gpu": [span(e) for e in complete if e.get("cat") in GPU_CATEGORIES],
            # The profiler's own "Trace" span is not activity: the window is the rest's.
            "window": (min(float(e["ts"]) for e in complete if e.get("cat") != "Trace"),
                       max(span(e)[1] for e in complete if e.get("cat") != "Trace"))}


def test_simple_add_counts_match_the_trace(tfprof_exe: pathlib.Path) -> None:
    figures = simple_add_figures()
    summary = summary_of(tfprof_exe, SIMPLE_ADD)
    assert summary["framework"] == "pytorch" and summary["has_gpu"] and not summary["has_steps"]
    assert summary["kernel_count"] == len(figures["kernels"]) == 79
    assert summary["kernel_total_ns"] == 1000 * sum(int(e["dur"]) for e in figures["kernels"])
    assert summary["launch_calls"] == len(figures["launches"]) == 79
    assert summary["launches_without_gpu_work"] == 0
    assert summary["communication_kernel_count"] == 0
    total = summary["step_total"]
    begin, end = figures["window"]
    assert total["duration_ns"] == pytest.approx((end - begin) * 1000, abs=1000)
    busy = union_us(figures["gpu"])
    assert (total["duration_ns"] - total["gpu_idle_ns"]) / 1000 == pytest.approx(busy, abs=1.0)


def test_simple_add_first_launch_is_a_one_time_cost(tfprof_exe: pathlib.Path) -> None:
    # The first cuDNN launch took 4219 ms (the median launch 15 us): module loading, paid once.
    figures = simple_add_figures()
    (expected,) = figures["one_time"]
    assert expected[3] == 4219264
    summary = summary_of(tfprof_exe, SIMPLE_ADD)
    assert [(e["call"], e["kernel"], e["begin_ns"], e["duration_ns"])
            for e in summary["one_time_launches"]] == \
        [(name, kernel, ts * 1000, dur * 1000) for name, kernel, ts, dur in figures["one_time"]]
    total = summary["step_total"]
    assert total["one_time_launches"] == 1
    assert total["one_time_launch_ns"] == expected[3] * 1000
    assert total["launches"] == len(figures["launches"])
    assert total["launch_ns"] == 1000 * union_us([span(e) for e in figures["launches"]])
    kinds = [finding["kind"] for finding in summary["findings"]]
    assert "one_time_costs" in kinds
    # All but 1.3 ms of the 4221 ms in launch calls is the one first launch: not launch-bound.
    assert "launch_bound" not in kinds
    text = run_tfprof(tfprof_exe, "summary", str(SIMPLE_ADD)).stdout
    (finding,) = [f for f in summary["findings"] if f["kind"] == "one_time_costs"]
    assert finding["title"] in text and "4219.3 ms" in finding["evidence"]


# --- tensorflow/dleebrown_ANNA: a TF1 queue pipeline -----------------------------------------------

def anna_ops() -> List[Dict[str, Any]]:
    return [e for e in load(ANNA) if e.get("ph") == "X"]


def test_anna_counts_match_the_timeline(tfprof_exe: pathlib.Path) -> None:
    events = load(ANNA)
    ops = [e for e in events if e.get("ph") == "X"]
    flows = [e for e in events if e.get("ph") in ("s", "t", "f")]
    summary = summary_of(tfprof_exe, ANNA)
    assert summary["format"] == "TensorFlow timeline Chrome trace"
    assert summary["framework"] == "tensorflow"
    assert summary["events"] == len(events) == 424
    assert summary["activities"] == len(ops) == 201
    assert len(flows) == 220
    assert not summary["has_gpu"] and summary["kernel_count"] == 0 and not summary["has_steps"]
    begin = min(float(e["ts"]) for e in ops)
    end = max(span(e)[1] for e in ops)
    assert summary["step_total"]["duration_ns"] == (end - begin) * 1000


def test_anna_input_wait_is_the_queue_dequeue_by_op_type(tfprof_exe: pathlib.Path) -> None:
    # Input ops by op type: the QueueDequeueManyV2 (202 us) counts, while no other op computes
    # (without steps, a thread in an input op waits only while no thread computes). The
    # Conv2DBackpropInput (8.4 ms) and the INPUT_QUEUE/... Const and Reshape ops do not.
    ops = anna_ops()
    types = {e["args"]["op"] for e in ops}
    assert {"FIFOQueueV2", "QueueDequeueManyV2", "Conv2DBackpropInput"} <= types
    inputs = [span(e) for e in ops if e["args"]["op"] in TF_INPUT_OP_TYPES]
    others = [span(e) for e in ops if e["args"]["op"] not in TF_INPUT_OP_TYPES]
    (dequeue,) = [e for e in ops if e["args"]["op"] == "QueueDequeueManyV2"]
    expected = subtract_us(inputs, others)
    assert 0 < expected < float(dequeue["dur"]) == 202
    summary = summary_of(tfprof_exe, ANNA)
    total = summary["step_total"]
    assert total["input_wait_ns"] == pytest.approx(expected * 1000, abs=1000)
    assert total["longest_input_op"] == "INPUT_QUEUE/fifo_queue_DequeueMany:QueueDequeueManyV2"
    backprop = sum(float(e["dur"]) for e in ops if e["args"]["op"] == "Conv2DBackpropInput")
    assert backprop == 8417 and total["input_wait_ns"] < 1000 * 1000
    assert "input_bound" not in [finding["kind"] for finding in summary["findings"]]
    # Everything else the threads ran is host compute, and the rest of the window is idle.
    begin = min(float(e["ts"]) for e in ops)
    end = max(span(e)[1] for e in ops)
    assert total["host_compute_ns"] == pytest.approx(union_us(others) * 1000, abs=1000)
    idle = (end - begin) - union_us(others + inputs)
    assert total["idle_ns"] == pytest.approx(idle * 1000, abs=1000)
