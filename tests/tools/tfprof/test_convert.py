"""`tfprof convert`: round trips through every output format with the content checked (op names,
counts, steps, times to the nanosecond), traces written by the real library, PyTorch-style
input, bad and truncated input, the command line and its exit codes."""

from __future__ import annotations

import collections
import gzip
import json
import os
import pathlib
import subprocess
import sys
import textwrap
from decimal import Decimal
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, build_dir, run_tfprof
from tfprof_trace_builder import MS, US, TfprofTrace

UNIX = 1_700_000_000_000_000_000  # ns


# ---- reading Chrome traces back, exactly -----------------------------------------------------

def load(path: pathlib.Path) -> Dict[str, Any]:
    """The JSON with numbers as Decimal: ts/dur keep every nanosecond."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def wall_offset(doc: Dict[str, Any]) -> int:
    header = doc["tfprof"]
    return int(header["start_time_unix_ns"]) - int(header["start_time_monotonic_ns"])


def ns(micros: Any) -> int:
    return int(Decimal(micros) * 1000)


Span = Tuple[str, int, int]  # name, wall-clock begin ns, duration ns


def spans(doc: Dict[str, Any], categories=None) -> List[Span]:
    """Every complete event but steps, with wall-clock times, sorted."""
    offset = wall_offset(doc)
    found = []
    for event in doc["traceEvents"]:
        if event.get("ph") != "X" or event.get("cat") == "step":
            continue
        if categories is not None and event.get("cat") not in categories:
            continue
        found.append((event["name"], ns(event["ts"]) + offset, ns(event["dur"])))
    return sorted(found)


def steps(doc: Dict[str, Any]) -> Dict[int, Tuple[int, int]]:
    """Step number -> (wall-clock begin ns, duration ns)."""
    offset = wall_offset(doc)
    return {int(e["args"]["step"]): (ns(e["ts"]) + offset, ns(e["dur"]))
            for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "step"}


def by_category(doc: Dict[str, Any]) -> collections.Counter:
    return collections.Counter(e.get("cat") for e in doc["traceEvents"] if e.get("ph") == "X")


def convert(exe, source: pathlib.Path, target, *extra: str,
            check: int = 0) -> subprocess.CompletedProcess:
    return run_tfprof(exe, "convert", str(source), "-o", str(target), *extra, check=check)


def event_file(directory: pathlib.Path) -> pathlib.Path:
    [found] = [p for p in directory.iterdir() if "tfevents" in p.name]
    return found


# ---- inputs ------------------------------------------------------------------------------------

def training_trace() -> TfprofTrace:
    """Three steps of a host thread and a GPU stream, ns-precise times, one span after the steps."""
    trace = TfprofTrace(start_monotonic_ns=123_456_789_000, start_unix_ns=UNIX)
    trace.thread(1, "MainThread").thread(2, "loader")
    for index in range(3):
        b = index * 10 * MS
        trace.step(index + 1, b, b + 10 * MS)
        trace.span("IteratorGetNext", b + 1, b + 2 * MS + 7, tid=2)
        trace.span("dense/MatMul:MatMul", b + 2 * MS, b + 6 * MS + 333)
        trace.span("cudaLaunchKernel", b + 2 * MS + 10 * US, b + 2 * MS + 15 * US, cat="cuda_runtime")
        trace.kernel("volta_sgemm_128x64_nn", b + 3 * MS, b + 5 * MS + 1, correlation=index)
        trace.memcpy("HtoD", b + 6 * MS, b + 7 * MS, 4096 * (index + 1))
    trace.span("save_checkpoint", 31 * MS, 32 * MS)
    return trace


def pytorch_trace(path: pathlib.Path) -> pathlib.Path:
    """Shaped like the PyTorch profiler's (Kineto) output: ProfilerStep#N spans, cpu_op,
    python_function, cuda_runtime, kernels and copies on pid = device, tid = stream."""
    base = UNIX + 5 * MS
    events: List[Dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": 321, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": 321, "tid": 321, "args": {"name": "thread 321 (python3)"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
    ]

    def x(cat, name, pid, tid, begin_us, dur_us, **args):
        events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                       "ts": begin_us, "dur": dur_us, "args": args})

    for step in range(2):
        b = 1000.0 + step * 5000
        x("user_annotation", f"ProfilerStep#{step + 1}", 321, 321, b, 5000.0)
        x("python_function", "train.py(12): forward", 321, 321, b + 10, 2000.5)
        x("cpu_op", "aten::mm", 321, 321, b + 100, 1500.25)
        x("cuda_runtime", "cudaLaunchKernel", 321, 321, b + 200, 6.5, correlation=step)
        x("kernel", "volta_sgemm_128x64_nn", 0, 7, b + 300, 1200.125, device=0, stream=7,
          correlation=step)
        x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, b + 2000, 100.0, device=0,
          stream=7, bytes=8192 * (step + 1))
        x("gpu_user_annotation", f"ProfilerStep#{step + 1}", 0, 7, b + 300, 1800.0, device=0,
          stream=7)
    document = {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 2, "world_size": 4},
                "deviceProperties": [{"id": 0, "name": "Tesla V100"}],
                "baseTimeNanoseconds": base, "traceEvents": events,
                "traceName": str(path), "displayTimeUnit": "ms"}
    path.write_text(json.dumps(document))
    return path


LIBRARY_SESSION = textwrap.dedent("""
    import sys, time, tfprof
    trace = tfprof.trace(None, cuda="off")
    trace.start()
    for n in range(1, 4):
        with tfprof.step(n):
            with tfprof.span("forward:Forward"):
                time.sleep(0.002)
            with tfprof.span("backward"):
                with tfprof.span("allreduce"):
                    time.sleep(0.001)
    with tfprof.span("after_steps"):
        pass
    trace.stop()
    for path in sys.argv[1:]:
        trace.export(path)
""")


def output_name(directory: pathlib.Path, name: str) -> str:
    """`directory/name`, keeping the trailing '/' of a log directory (pathlib drops it)."""
    return str(directory / name) + ("/" if name.endswith("/") else "")


def library_traces(directory: pathlib.Path, *names: str) -> List[pathlib.Path]:
    """One session of the real library (its Python package), exported once per name."""
    paths = [directory / name for name in names]
    subprocess.run([sys.executable, "-c", LIBRARY_SESSION,
                    *[output_name(directory, name) for name in names]], check=True,
                   env={**os.environ, "TFPROF_LOG_LEVEL": "error"}, timeout=120)
    return paths


# ---- round trips -------------------------------------------------------------------------------

@pytest.mark.parametrize("middle", ["trace.pb", "trace.tfrecord", "logs/", "trace.json.gz"])
def test_a_tfprof_trace_round_trips_through_every_format(tfprof_exe, tmp_path, middle):
    source = training_trace().write(tmp_path / "source.json")
    convert(tfprof_exe, source, output_name(tmp_path, middle))
    converted = tmp_path / middle
    if middle == "logs/":
        converted = event_file(converted)
    back = tmp_path / "back.json"
    convert(tfprof_exe, converted, back)
    original, result = load(source), load(back)

    assert steps(result) == steps(original)
    assert len(steps(result)) == 3
    host = ["user_annotation", "cuda_runtime"]
    if middle == "trace.json.gz":
        assert spans(result) == spans(original)
        assert by_category(result) == by_category(original)
    else:
        # TensorFlow keeps no kind for host nodes: spans and CUDA calls both come back as spans.
        assert spans(result, ["user_annotation"]) == spans(original, host)
    assert spans(result, ["kernel"]) == spans(original, ["kernel"])
    assert len(spans(result, ["kernel"])) == 3
    copies = [(e["args"]["bytes"], e["args"]["kind"], e["dur"]) for e in result["traceEvents"]
              if e.get("cat") == "gpu_memcpy"]
    assert sorted(copies) == [(4096, "HtoD", Decimal("1000.000")), (8192, "HtoD", Decimal("1000.000")),
                              (12288, "HtoD", Decimal("1000.000"))]
    names = {e["args"]["name"] for e in result["traceEvents"] if e.get("name") == "thread_name"}
    assert {"MainThread", "loader", "Steps"} <= names
    assert result["dropped_events"] == 0


def test_library_traces_in_every_format_convert_to_the_same_timeline(tfprof_exe, tmp_path):
    json_path, pb, tfrecord, logs = library_traces(
        tmp_path, "lib.json", "lib.pb", "lib.tfrecord", "logs/")
    original = load(json_path)
    expected_spans = spans(original)
    assert [name for name, _, _ in expected_spans].count("forward:Forward") == 3
    for source in (pb, tfrecord, event_file(logs), logs):
        out = tmp_path / f"from_{source.name}.json"
        convert(tfprof_exe, source, out)
        result = load(out)
        assert steps(result) == steps(original), source
        assert spans(result) == expected_spans, source
        assert result["tfprof"]["sources"][0]["path"] == str(source)


def test_json_to_pb_reads_back_like_the_runtimes_own_pb(tfprof_exe, tmp_path):
    json_path, runtime_pb = library_traces(tmp_path, "lib.json", "runtime.pb")
    converted_pb = tmp_path / "converted.pb"
    convert(tfprof_exe, json_path, converted_pb)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    convert(tfprof_exe, runtime_pb, a)
    convert(tfprof_exe, converted_pb, b)
    assert spans(load(a)) == spans(load(b))
    assert steps(load(a)) == steps(load(b))


def test_a_pytorch_trace_round_trips_through_pb(tfprof_exe, tmp_path):
    source = pytorch_trace(tmp_path / "torch.json")
    pb = tmp_path / "torch.pb"
    result = convert(tfprof_exe, source, pb)
    assert "2 GPU annotation spans (gpu_user_annotation) were left out" in result.stderr
    back = tmp_path / "back.json"
    convert(tfprof_exe, pb, back)
    doc = load(back)

    base = UNIX + 5 * MS
    assert steps(doc) == {1: (base + 1000 * US, 5000 * US), 2: (base + 6000 * US, 5000 * US)}
    host = spans(doc, ["user_annotation"])
    assert collections.Counter(name for name, _, _ in host) == {
        "train.py(12): forward": 2, "aten::mm": 2, "cudaLaunchKernel": 2}
    assert ("aten::mm", base + 1100 * US, 1_500_250) in host
    assert ("train.py(12): forward", base + 6010 * US, 2_000_500) in host
    assert spans(doc, ["kernel"]) == [("volta_sgemm_128x64_nn", base + 1300 * US, 1_200_125),
                                      ("volta_sgemm_128x64_nn", base + 6300 * US, 1_200_125)]
    assert sorted(e["args"]["bytes"] for e in doc["traceEvents"] if e.get("cat") == "gpu_memcpy") == [
        8192, 16384]
    assert {e["args"]["stream"] for e in doc["traceEvents"] if e.get("cat") == "kernel"} == {7}


def test_tensorflow_output_keeps_whats_outside_steps_in_a_last_record(tfprof_exe, tmp_path):
    source = training_trace().write(tmp_path / "source.json")
    convert(tfprof_exe, source, output_name(tmp_path, "logs/"))
    back = tmp_path / "back.json"
    convert(tfprof_exe, tmp_path / "logs", back)
    assert [name for name, _, _ in spans(load(back)) if name == "save_checkpoint"] == ["save_checkpoint"]


def test_format_option_overrides_the_name(tfprof_exe, tmp_path):
    source = training_trace().write(tmp_path / "source.json")
    odd = tmp_path / "steps.bin"
    convert(tfprof_exe, source, odd, "--format", "tfrecord")
    back = tmp_path / "back.json"
    convert(tfprof_exe, odd, back)
    assert load(back)["tfprof"]["sources"][0]["format"] == "TFRecord of RunMetadata"
    assert steps(load(back)) == steps(load(source))


def test_a_trace_without_wall_clock_converts_with_a_note(tfprof_exe, tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "foo", "name": "work", "pid": 1, "tid": 1, "ts": 10, "dur": 5}]}))
    result = convert(tfprof_exe, plain, tmp_path / "plain.pb")
    assert "recorded no wall-clock time" in result.stderr
    back = tmp_path / "back.json"
    convert(tfprof_exe, tmp_path / "plain.pb", back)
    assert spans(load(back)) == [("work", 10_000, 5_000)]


# ---- bad input ----------------------------------------------------------------------------------

def test_missing_input_exits_1_naming_it(tfprof_exe, tmp_path):
    missing = tmp_path / "nope.json"
    result = convert(tfprof_exe, missing, tmp_path / "out.json", check=1)
    assert str(missing) in result.stderr
    assert result.stderr.startswith("tfprof convert: ")
    assert not (tmp_path / "out.json").exists()


def test_a_file_that_is_no_trace_exits_1(tfprof_exe, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("these are not the events you are looking for\n")
    result = convert(tfprof_exe, junk, tmp_path / "out.json", check=1)
    assert f"{junk}: not a trace" in result.stderr


def test_truncated_json_converts_to_its_last_whole_step_with_a_warning(tfprof_exe, tmp_path):
    whole = training_trace().write(tmp_path / "whole.json").read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    out = tmp_path / "out.json"
    result = convert(tfprof_exe, cut, out)
    assert f"tfprof convert: warning: {cut}: the file ends at byte {len(whole) * 2 // 3}" in result.stderr
    kept = load(out)
    assert 0 < len(spans(kept)) < len(spans(load(tmp_path / "whole.json")))


def test_damaged_json_exits_1_naming_the_offset_and_salvage_keeps_the_start(tfprof_exe, tmp_path):
    whole = training_trace().write(tmp_path / "whole.json").read_bytes()
    damaged = tmp_path / "damaged.json"
    at = whole.index(b",", len(whole) * 2 // 3) + 1  # no JSON value starts with '@'
    damaged.write_bytes(whole[:at] + b"@@@" + whole[at:])
    out = tmp_path / "out.json"
    result = convert(tfprof_exe, damaged, out, check=1)
    assert f"{damaged}: byte " in result.stderr
    assert not out.exists()
    assert not list(tmp_path.glob(".tfprof-*"))

    salvaged = convert(tfprof_exe, damaged, out, "--salvage")
    assert "warning: " in salvaged.stderr and str(damaged) in salvaged.stderr
    kept = load(out)
    assert 0 < len(spans(kept)) < len(spans(load(tmp_path / "whole.json")))


def converted_then_cut(tfprof_exe, tmp_path, suffix, keep):
    """The training trace converted to a `suffix` file, then a copy of its first `keep(size)`
    bytes: (the cut copy, the whole file's bytes)."""
    source = training_trace().write(tmp_path / "source.json")
    whole = tmp_path / f"trace{suffix}"
    convert(tfprof_exe, source, whole)
    data = whole.read_bytes()
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(data[: keep(len(data))])
    return cut, data


def test_truncated_pb_exits_1(tfprof_exe, tmp_path):
    cut, _ = converted_then_cut(tfprof_exe, tmp_path, ".pb", lambda size: size // 2)
    result = convert(tfprof_exe, cut, tmp_path / "out.json", check=1)
    assert str(cut) in result.stderr
    assert not (tmp_path / "out.json").exists()


def test_truncated_tfrecord_keeps_its_whole_steps_and_bad_crc_exits_1(tfprof_exe, tmp_path):
    cut, data = converted_then_cut(tfprof_exe, tmp_path, ".tfrecord", lambda size: size - 10)
    result = convert(tfprof_exe, cut, tmp_path / "out.json")
    assert f"warning: {cut}: the file ends at byte {len(data) - 10} (inside the last record" in result.stderr
    assert sorted(steps(load(tmp_path / "out.json"))) == [1, 2, 3]
    # timeline.py's layout draws the whole records too.
    result = convert(tfprof_exe, cut, tmp_path / "timeline.json", "--layout", "timeline")
    assert (f"warning: {cut}: the file ends at byte {len(data) - 10} (inside the last record: cut "
            "while being written?); recovered to its last whole step: kept 3 runs") in result.stderr

    damaged = tmp_path / "damaged.tfrecord"
    damaged.write_bytes(data[:40] + bytes([data[40] ^ 0xFF]) + data[41:])
    result = convert(tfprof_exe, damaged, tmp_path / "out2.json", check=1)
    assert f"{damaged}: byte " in result.stderr
    convert(tfprof_exe, damaged, tmp_path / "out2.json", "--salvage")


# ---- the command line -----------------------------------------------------------------------------

def test_help_exits_0_and_names_the_formats(tfprof_exe):
    for flag in ("--help", "-h"):
        text = run_tfprof(tfprof_exe, "convert", flag).stdout
        assert text.startswith("usage: tfprof convert")
        for word in (".json.gz", ".pb", ".tfrecord", "TensorBoard", "Exit status"):
            assert word in text
    assert "convert" in run_tfprof(tfprof_exe, "--help").stdout


@pytest.mark.parametrize("args, message", [
    ([], "no input file given"),
    (["a.json"], "no output given"),
    (["a.json", "b.json", "-o", "c.json"], "one input file is converted at a time"),
    (["a.json", "-o", "c.txt"], "extension '.txt' names no supported format"),
    (["a.json", "-o", "c.json", "--format", "xml"], "--format 'xml' is not one of"),
    (["a.json", "--frobnicate", "-o", "c.json"], "unknown option '--frobnicate'"),
    (["a.json", "-o"], "-o needs a path"),
])
def test_usage_errors_exit_2(tfprof_exe, tmp_path, args, message):
    result = run_tfprof(tfprof_exe, "convert", *args, check=2)
    assert message in result.stderr
    assert "Try 'tfprof convert --help'" in result.stderr


def test_converting_a_file_onto_itself_is_refused(tfprof_exe, tmp_path):
    source = training_trace().write(tmp_path / "source.json")
    before = source.read_bytes()
    result = run_tfprof(tfprof_exe, "convert", str(source), "-o", str(tmp_path / "." / "source.json"),
                        check=2)
    assert "refusing to overwrite" in result.stderr
    assert source.read_bytes() == before


def test_an_output_that_cannot_be_written_exits_3_and_leaves_nothing(tfprof_exe, tmp_path):
    source = training_trace().write(tmp_path / "source.json")
    for target in ("no/such/dir/out.json", "no/parent/logs/"):
        result = run_tfprof(tfprof_exe, "convert", str(source), "-o", output_name(tmp_path, target),
                            check=3)
        assert "tfprof convert: cannot" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.json"]


def test_progress_shows_on_a_terminal_only(tfprof_exe, tmp_path):
    source = training_trace().write(tmp_path / "source.json")
    quiet = convert(tfprof_exe, source, tmp_path / "a.pb")
    assert quiet.stderr == ""
    shown = run_tfprof(tfprof_exe, "convert", str(source), "-o", str(tmp_path / "b.pb"),
                       env={"TFPROF_PROGRESS": "1"})
    assert f"reading {source}" in shown.stderr or "writing b.pb" in shown.stderr
    assert shown.stderr.endswith("\x1b[K")  # the line is erased when done ("\r" reads as "\n")


# ---- the real readers ------------------------------------------------------------------------------

def test_tensorboard_reads_the_converted_event_file_and_run_metadata(tfprof_exe, tmp_path):
    """TensorBoard's own event reader (and protobuf's parser, through TensorBoard's copies of
    TensorFlow's protos) on converted files. Skipped where tensorboard is not installed."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.compat.proto import config_pb2

    source = pytorch_trace(tmp_path / "torch.json")
    convert(tfprof_exe, source, output_name(tmp_path, "logs/"))
    accumulator = event_accumulator.EventAccumulator(str(tmp_path / "logs"))
    accumulator.Reload()
    tags = accumulator.Tags()
    assert tags["graph"] is True
    assert sorted(tags["run_metadata"]) == ["step_000001", "step_000002"]
    graph_ops = {node.name: node.op for node in accumulator.Graph().node}
    assert graph_ops["aten::mm"] == "aten::mm"
    run = accumulator.RunMetadata("step_000002")
    nodes = {device.device: [node.node_name for node in device.node_stats]
             for device in run.step_stats.dev_stats}
    assert nodes["/job:localhost/replica:0/task:0/device:CPU:0"][0] == "step_000002"
    assert nodes["/device:GPU:0/stream:7"] == ["volta_sgemm_128x64_nn", "MemcpyHtoD"]
    assert nodes["/device:GPU:0/memcpy"] == ["MemcpyHtoD"]
    # TensorBoard's graph view offers only devices ending in /device:<TYPE>:<N>.
    assert any(device.device.endswith("/device:CPU:0") for device in run.step_stats.dev_stats)

    convert(tfprof_exe, source, tmp_path / "torch.pb")
    metadata = config_pb2.RunMetadata.FromString((tmp_path / "torch.pb").read_bytes())
    step = [n for d in metadata.step_stats.dev_stats for n in d.node_stats if n.node_name == "step_000001"]
    assert len(step) == 1
    assert step[0].all_start_micros == (UNIX + 5 * MS) // 1000 + 1000
    assert step[0].all_end_rel_micros == 5000
    assert step[0].timeline_label == "step_000001 = TrainingStep()"


def test_tensorboard_reads_the_step_scalars_of_an_event_file(tfprof_exe, tmp_path):
    """Each step's scalars in the event file, as TensorBoard's Scalars tab reads them: the step
    time, each counter's last value in the step, and each memory series' peak in the step.
    Skipped where tensorboard is not installed (CI runs it in build/venv-tf)."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing import event_accumulator

    trace = TfprofTrace().thread(1, "MainThread")
    lengths_ms = (10, 12, 8)
    for step, length in enumerate(lengths_ms):
        begin = sum(lengths_ms[:step]) * MS
        trace.step(step, begin, begin + length * MS)
        for at, loss, used in ((1, 3.0 - step, 100 * (step + 1)), (5, 2.5 - step, 50)):
            for name, value in (("loss", loss), ("host memory bytes", used)):
                trace.events.append({"ph": "C", "name": name, "pid": trace.pid, "tid": 1,
                                     "ts": (begin + at * MS) / 1000.0, "args": {"value": value}})
    source = trace.write(tmp_path / "counters.json")
    convert(tfprof_exe, source, output_name(tmp_path, "logs/"))
    accumulator = event_accumulator.EventAccumulator(str(tmp_path / "logs"))
    accumulator.Reload()
    scalars = {tag: [(event.step, event.value) for event in accumulator.Scalars(tag)]
               for tag in accumulator.Tags()["scalars"]}
    assert scalars == {
        "tfprof/step_time_ms": [(0, 10.0), (1, 12.0), (2, 8.0)],
        "tfprof/counter/loss": [(0, 2.5), (1, 1.5), (2, 0.5)],  # the last value in the step
        "tfprof/memory/CPU/peak_bytes": [(0, 100.0), (1, 200.0), (2, 300.0)],  # the highest
    }
    # The scalars do not change what tfprof reads back from the file.
    back = json.loads(run_tfprof(tfprof_exe, "summary", "--json", tmp_path / "logs").stdout)
    steps = back["traces"][0]["steps"]
    assert [(s["number"], s["duration_ns"]) for s in steps] == [
        (number, length * MS) for number, length in enumerate(lengths_ms)]
