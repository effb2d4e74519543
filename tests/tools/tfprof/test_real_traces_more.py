"""`tfprof summary` on the real traces added to tests/data/real/ for issue 34 (README.md there names
each file's source, commit and licence): traces whose figures sit at a framework's edges. Every
figure is computed again here from the file's own events, without tfprof.

- hta/critical_path/simple_add: a PyTorch benchmark whose first cuDNN launch takes 4.2 s (the
  driver loading the module): a one-time cost, not a launch-bound program.
- tracelens/perf_model/normalization: the same on ROCm: ten first launches of 4.7 to
  332 ms against a 5.4 us median launch.
- tensorflow/dleebrown_ANNA: a TF 1.x (2017) timeline.py trace with a queue-based input pipeline
  (FIFOQueueV2 and QueueDequeueManyV2) and a Conv2DBackpropInput, which is compute, not input.
- hta/trace_filter, param/dlrm_kineto: the ranks of one job (2 of 128, 8 of 8), each with its
  NCCL kernels in the same steps.
- perfetto/: Perfetto traces that tfprof did not write: a Rust program's (tokio with the
  tracing-perfetto crate: TrackEvent slices only), and two written by Perfetto's tracing service
  with its TraceStats, one with no track events at all (QML.jl) and one Android system trace
  (Now in Android on a Pixel 7 Pro). Parsed here with Perfetto's own protobuf classes.
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
NORMALIZATION = REAL / "tracelens/perf_model/normalization/normalization_layer_test.json.gz"
TOKIO = REAL / "perfetto/tokio/test.pftrace"
QML = REAL / "perfetto/qml_julia_examples/trace.pftrace"
ANDROID = REAL / "perfetto/nowinandroid/trace.perfetto-trace"

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
# many times the trace's median launch, and at least 1 ms (the one_time_costs finding).
ONE_TIME_FACTOR = 50
ONE_TIME_MIN_US = 1000
# Collective kernels as HTA tells them (NCCL's, RCCL's), any case.
COLLECTIVE = re.compile(r"nccl|rccl", re.IGNORECASE)


def load(path: pathlib.Path) -> List[Dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as file:
        data = json.load(file)
    return data if isinstance(data, list) else data["traceEvents"]


def union_length(intervals: List[Tuple[float, float]]) -> float:
    """Length of the intervals' union, in their own unit (exact for integers)."""
    total, end = 0, float("-inf")
    for begin, finish in sorted(intervals):
        if finish > end:
            total += finish - max(begin, end)
            end = finish
    return total


def subtract_length(these: List[Tuple[float, float]], those: List[Tuple[float, float]]) -> float:
    """Length of the union of `these` less the union of `those`."""
    return union_length(these + those) - union_length(those)


def summary_of(tfprof_exe: pathlib.Path, path: pathlib.Path) -> Dict[str, Any]:
    (trace,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)["traces"]
    return trace


def span(event: Dict[str, Any]) -> Tuple[float, float]:
    return float(event["ts"]), float(event["ts"]) + float(event.get("dur", 0))


# --- simple_add: a 4.2 s first launch; TraceLens's normalization: ten on ROCm ------------------

def launch_figures(path: pathlib.Path) -> Dict[str, Any]:
    """Launches, kernels and the one-time launches (each kernel's first launch when it takes
    ONE_TIME_FACTOR times the median launch and 1 ms or more), from the trace's own events."""
    complete = [e for e in load(path) if e.get("ph") == "X"]
    launches = sorted((e for e in complete if e.get("cat") in ("cuda_runtime", "cuda_driver")
                       and LAUNCH_NAME.fullmatch(e["name"])), key=lambda e: e["ts"])
    kernels = [e for e in complete if e.get("cat") == "kernel"]
    kernel_of = {e["args"]["correlation"]: e["name"] for e in kernels}
    median = statistics.median(float(e["dur"]) for e in launches)
    seen, one_time = set(), []
    for launch in launches:
        kernel = kernel_of.get(launch["args"].get("correlation"))
        duration = float(launch["dur"])
        if kernel not in seen and duration >= max(ONE_TIME_FACTOR * median, ONE_TIME_MIN_US):
            one_time.append((launch["name"], kernel, launch["ts"], launch["dur"]))
        seen.add(kernel)
    return {"launches": launches, "kernels": kernels, "one_time": one_time,
            "gpu": [span(e) for e in complete if e.get("cat") in GPU_CATEGORIES],
            # The profiler's own "Trace" span is not activity: the window is the rest's.
            "window": (min(float(e["ts"]) for e in complete if e.get("cat") != "Trace"),
                       max(span(e)[1] for e in complete if e.get("cat") != "Trace"))}


def test_simple_add_counts_match_the_trace(tfprof_exe: pathlib.Path) -> None:
    figures = launch_figures(SIMPLE_ADD)
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
    busy = union_length(figures["gpu"])
    assert (total["duration_ns"] - total["gpu_idle_ns"]) / 1000 == pytest.approx(busy, abs=1.0)


def test_simple_add_first_launch_is_a_one_time_cost(tfprof_exe: pathlib.Path) -> None:
    # The first cuDNN launch took 4219 ms (the median launch 15 us): module loading, paid once.
    figures = launch_figures(SIMPLE_ADD)
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
    assert total["launch_ns"] == 1000 * union_length([span(e) for e in figures["launches"]])
    kinds = [finding["kind"] for finding in summary["findings"]]
    assert "one_time_costs" in kinds
    # All but 1.3 ms of the 4221 ms in launch calls is the one first launch: not launch-bound.
    assert "launch_bound" not in kinds
    text = run_tfprof(tfprof_exe, "summary", str(SIMPLE_ADD)).stdout
    (finding,) = [f for f in summary["findings"] if f["kind"] == "one_time_costs"]
    assert finding["title"] in text and "4219.3 ms" in finding["evidence"]


# --- tensorflow/dleebrown_ANNA: a TF1 queue pipeline ---------------------------------------------

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
    expected = subtract_length(inputs, others)
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
    assert total["host_compute_ns"] == pytest.approx(union_length(others) * 1000, abs=1000)
    idle = (end - begin) - union_length(others + inputs)
    assert total["idle_ns"] == pytest.approx(idle * 1000, abs=1000)


def test_rocm_first_launches_are_one_time_costs(tfprof_exe: pathlib.Path) -> None:
    # ROCm loads a kernel's code object at its first hipLaunchKernel: ten first launches of
    # 4.7 to 331.6 ms, 1090 ms of the trace's 1181 ms.
    figures = launch_figures(NORMALIZATION)
    assert len(figures["one_time"]) == 10
    summary = summary_of(tfprof_exe, NORMALIZATION)
    assert summary["launch_calls"] == len(figures["launches"]) == 168
    assert summary["kernel_count"] == len(figures["kernels"]) == 168
    # The JSON lists the longest five, longest first. Fractional microseconds: compare in
    # nanoseconds, rounded.
    expected = sorted(((name, kernel, round(ts * 1000), round(dur * 1000))
                       for name, kernel, ts, dur in figures["one_time"]), key=lambda e: -e[3])[:5]
    measured = [(e["call"], e["kernel"], e["begin_ns"], e["duration_ns"])
                for e in summary["one_time_launches"]]
    assert [m[:2] for m in measured] == [e[:2] for e in expected]
    for got, want in zip(measured, expected):
        assert got[2] == pytest.approx(want[2], abs=1) and got[3] == pytest.approx(want[3], abs=1)
    assert expected[0][3] == 331626739
    total = summary["step_total"]
    assert total["one_time_launches"] == 10
    assert total["one_time_launch_ns"] == pytest.approx(
        1000 * sum(dur for *_, dur in figures["one_time"]), abs=10)
    kinds = [finding["kind"] for finding in summary["findings"]]
    assert "one_time_costs" in kinds and "launch_bound" not in kinds


# --- Ranks of one job: each rank's collectives, named and counted ------------------------------

# Both sampled ranks of HTA's 128-rank job and all eight of PARAM's DLRM job: every rank runs NCCL
# kernels in the same steps.
JOBS = {"hta_sampled_ranks": sorted((REAL / "hta/trace_filter").glob("sampled_rank-*.json.gz")),
        "param_dlrm_8_ranks": sorted((REAL / "param/dlrm_kineto").glob("worker*.json.gz"))}


@pytest.mark.parametrize("job", sorted(JOBS))
def test_every_rank_of_a_job_has_its_collectives(tfprof_exe: pathlib.Path, job: str) -> None:
    paths = JOBS[job]
    assert len(paths) in (2, 8)
    ranks, steps = set(), set()
    for path in paths:
        data = json.loads(gzip.decompress(path.read_bytes()))
        kernels = [e for e in data["traceEvents"]
                   if e.get("ph") == "X" and e.get("cat") == "kernel"]
        collectives = [e for e in kernels if COLLECTIVE.search(e["name"])]
        assert collectives, path.name
        summary = summary_of(tfprof_exe, path)
        assert summary["rank"] == data["distributedInfo"]["rank"]
        ranks.add(summary["rank"])
        steps.add(tuple(step["number"] for step in summary["steps"]))
        assert summary["communication_kernel_count"] == len(collectives)
        assert summary["communication_kernel_ns"] == \
            pytest.approx(1000 * sum(float(e["dur"]) for e in collectives), abs=1)
        # The kernel table flags a kernel as communication exactly when it is a collective.
        names = {e["name"] for e in collectives}
        for kernel in summary["top_kernels"]:
            assert kernel["communication"] == (kernel["name"] in names), kernel["name"]
        flagged = {k["name"] for k in summary["top_kernels"] if k["communication"]}
        assert flagged and flagged <= names
    assert len(ranks) == len(paths) and len(steps) == 1  # distinct ranks, the same steps


# --- perfetto/: other producers' Perfetto traces ------------------------------------------------

def perfetto_packets(path: pathlib.Path) -> List[Any]:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2  # the perfetto package's schema
    trace = perfetto_trace_pb2.Trace()
    trace.ParseFromString(path.read_bytes())
    return list(trace.packet)


def perfetto_slices(packets: List[Any]) -> Tuple[List[Tuple[str, int, int]], int]:
    """(name, begin ns, end ns) of each slice, paired per track by a stack as Perfetto's trace
    processor pairs them, and the number of instants."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2
    kinds = perfetto_trace_pb2.TrackEvent
    events = sorted((p.timestamp, index, p.track_event) for index, p in enumerate(packets)
                    if p.HasField("track_event"))
    open_slices: Dict[int, List[Tuple[str, int]]] = {}
    slices, instants = [], 0
    for at, _, event in events:
        if event.type == kinds.TYPE_SLICE_BEGIN:
            open_slices.setdefault(event.track_uuid, []).append((event.name, at))
        elif event.type == kinds.TYPE_SLICE_END:
            name, begin = open_slices[event.track_uuid].pop()
            slices.append((name, begin, at))
        elif event.type == kinds.TYPE_INSTANT:
            instants += 1
    assert not any(open_slices.values())
    return slices, instants


def trace_stats_losses(packets: List[Any]) -> Dict[str, int]:
    """What the last TraceStats and FtraceStats record as lost data (not the service's
    informational counters such as chunks_discarded): overwritten chunks, packets a writer lost,
    ABI violations, failed patches; ftrace's overruns and dropped events."""
    (stats, *_) = [p.trace_stats for p in reversed(packets) if p.HasField("trace_stats")]
    lost = {"chunks_overwritten": 0, "trace_writer_packet_loss": 0, "abi_violations": 0,
            "patches_failed": 0, "ftrace_overrun": 0, "ftrace_dropped_events": 0}
    for buffer in stats.buffer_stats:
        for key in ("chunks_overwritten", "trace_writer_packet_loss", "abi_violations",
                    "patches_failed"):
            lost[key] += getattr(buffer, key)
    ftrace = [p.ftrace_stats for p in packets if p.HasField("ftrace_stats")]
    for cpu in (ftrace[-1].cpu_stats if ftrace else []):
        lost["ftrace_overrun"] += cpu.overrun
        lost["ftrace_dropped_events"] += cpu.dropped_events
    return lost


def test_a_rust_programs_perfetto_trace_matches_its_track_events(tfprof_exe: pathlib.Path) -> None:
    # tokio's worker threads traced with the tracing-perfetto crate: TrackEvent begin/end pairs
    # and instants on thread tracks, no TraceStats, no clock snapshots.
    packets = perfetto_packets(TOKIO)
    assert not any(p.HasField("trace_stats") for p in packets)
    slices, instants = perfetto_slices(packets)
    assert (len(slices), instants) == (227, 8)
    summary = summary_of(tfprof_exe, TOKIO)
    assert summary["format"] == "Perfetto trace"
    assert summary["activities"] == len(slices)
    assert summary["events"] == len(slices) + instants
    stamps = [p.timestamp for p in packets if p.HasField("track_event")]
    total = summary["step_total"]
    assert total["duration_ns"] == max(stamps) - min(stamps) == 260242099
    intervals = [(begin, end) for _, begin, end in slices]  # integers: exact nanoseconds
    assert total["host_compute_ns"] == pytest.approx(union_length(intervals), abs=1)
    assert total["idle_ns"] == pytest.approx(total["duration_ns"] - union_length(intervals), abs=1)
    by_name: Dict[str, List[int]] = {}
    for name, begin, end in slices:
        by_name.setdefault(name, []).append(end - begin)
    for op in summary["top_ops_by_total"]:
        assert (op["count"], op["total_ns"], op["max_ns"]) == \
            (len(by_name[op["name"]]), sum(by_name[op["name"]]), max(by_name[op["name"]]))
    assert len(by_name['"backtrace"']) == 100


@pytest.mark.parametrize("path", [QML, ANDROID], ids=["qml_no_track_events", "android"])
def test_service_written_perfetto_traces_have_no_track_events(tfprof_exe: pathlib.Path,
                                                               path: pathlib.Path) -> None:
    # Neither trace holds a TrackEvent: QML.jl enabled the track_event data source and wrote
    # nothing; the Android trace holds ftrace, logcat, heap graphs and package lists.
    packets = perfetto_packets(path)
    assert not any(p.HasField("track_event") for p in packets)
    summary = summary_of(tfprof_exe, path)
    assert summary["format"] == "Perfetto trace"
    assert summary["activities"] == 0 and summary["kernel_count"] == 0


def test_a_trace_without_track_events_converts_to_a_readable_pb(tfprof_exe: pathlib.Path,
                                                                 tmp_path: pathlib.Path) -> None:
    out = tmp_path / "qml.pb"
    run_tfprof(tfprof_exe, "convert", str(QML), "-o", str(out))
    summary = summary_of(tfprof_exe, out)
    assert summary["format"] == "TensorFlow RunMetadata" and summary["activities"] == 0


@pytest.mark.parametrize("path", [QML, ANDROID], ids=["qml_no_track_events", "android"])
def test_perfetto_trace_stats_are_the_loss_record(tfprof_exe: pathlib.Path,
                                                  path: pathlib.Path) -> None:
    # Both end with the service's TraceStats (the Android one also with FtraceStats): the trace
    # records its losses, none here (chunks_discarded, 492428 in the Android trace, counts chunks
    # the service refused before they reached a buffer, not lost trace data).
    packets = perfetto_packets(path)
    lost = trace_stats_losses(packets)
    assert sum(lost.values()) == 0
    summary = summary_of(tfprof_exe, path)
    # tfprof's own loss counts are not in the file; Perfetto's are, beside them.
    perfetto = summary["losses"]["perfetto"]
    assert perfetto is not None
    for key in ("chunks_overwritten", "trace_writer_packet_loss", "abi_violations",
                "patches_failed"):
        assert perfetto[key] == lost[key]
    text = run_tfprof(tfprof_exe, "summary", str(path)).stdout
    assert "this format does not record losses" not in text
    assert "Dropped events (Perfetto's TraceStats): none" in text
