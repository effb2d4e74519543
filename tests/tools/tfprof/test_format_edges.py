"""Edges of the formats tfprof reads, run as a user runs the `tfprof` command: TensorBoard log
directories (one run folder is one trace), instants and empty Perfetto traces through `.pb`,
Perfetto's own loss counts, and damaged protobuf files told apart from files cut short."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
from typing import List, Optional

import pytest

from conftest import ROOT, run_tfprof
from tfprof_trace_builder import MS, TfprofTrace

HERE = pathlib.Path(__file__).parent


def summary_json(exe: pathlib.Path, path: pathlib.Path) -> dict:
    result = run_tfprof(exe, "summary", "--json", str(path))
    (trace,) = json.loads(result.stdout)["traces"]
    return trace


def step_numbers(exe: pathlib.Path, path: pathlib.Path) -> List[int]:
    return [step["number"] for step in summary_json(exe, path)["steps"]]


# --- TensorBoard log directories -------------------------------------------------------------


def tensorflow_python() -> Optional[str]:
    """A Python with TensorFlow: TFPROF_TEST_PYTHON_TF, else build/venv-tf's."""
    for candidate in (os.environ.get("TFPROF_TEST_PYTHON_TF"), ROOT / "build/venv-tf/bin/python"):
        if candidate and pathlib.Path(candidate).exists():
            return str(candidate)
    return None


@pytest.fixture(scope="module")
def tf_logs(tmp_path_factory) -> pathlib.Path:
    python = tensorflow_python()
    if python is None:
        pytest.skip("no Python with TensorFlow (build/venv-tf) to write event files")
    out = tmp_path_factory.mktemp("tf_logs")
    subprocess.run([python, str(HERE / "tf_log_directories.py"), str(out)], check=True,
                   capture_output=True, timeout=600)
    return out


def test_tensorflow_log_directory_of_two_runs_is_refused_naming_them(tfprof_exe, tf_logs):
    logdir = tf_logs / "two_runs"
    result = run_tfprof(tfprof_exe, "summary", str(logdir), check=1)
    message = result.stderr.strip()
    assert message == (
        f"tfprof summary: {logdir}: holds 2 TensorBoard runs, each a trace of its own: "
        "train (1 event file), validation (1 event file). Give one run's folder (such as "
        f"{logdir / 'train'}), or put runs on one timeline with 'tfprof merge -o OUT RUN_DIR...'")
    assert result.stdout == ""
    # Each run alone is its own trace, with its own steps once each.
    assert step_numbers(tfprof_exe, logdir / "train") == [0, 1, 2]
    assert step_numbers(tfprof_exe, logdir / "validation") == [0, 1]


def test_keras_train_and_validation_runs_are_refused(tfprof_exe, tf_logs):
    result = run_tfprof(tfprof_exe, "summary", str(tf_logs / "keras"), check=1)
    assert "holds 2 TensorBoard runs" in result.stderr
    assert "train (1 event file), validation (1 event file)" in result.stderr


def test_the_runs_merged_are_two_processes_with_their_own_steps(tfprof_exe, tf_logs, tmp_path):
    logdir = tf_logs / "two_runs"
    merged = tmp_path / "merged.json"
    run_tfprof(tfprof_exe, "merge", "-o", str(merged), str(logdir / "train"),
               str(logdir / "validation"))
    steps = summary_json(tfprof_exe, merged)["steps"]
    by_process = {}
    for step in steps:
        by_process.setdefault(step["process"], []).append(step["number"])
    assert sorted(by_process.values()) == [[0, 1], [0, 1, 2]]


def test_a_restarted_job_keeps_each_step_once_in_order(tfprof_exe, tf_logs, tmp_path):
    run = tf_logs / "restarted"
    assert len(list(run.glob("events.out.tfevents.*"))) == 2
    trace = summary_json(tfprof_exe, run)
    numbers = [step["number"] for step in trace["steps"]]
    assert numbers == [0, 1, 2, 3, 4, 5]
    begins = [step["begin_ns"] for step in trace["steps"]]
    assert begins == sorted(begins)
    # Steps 3 and 4 are the restarted process's: they begin after the first file's step 2 by
    # at least the second slept between the two processes.
    assert begins[3] - begins[2] > 900 * MS
    # A folder above one run (nothing else with event files in it) reads as that run.
    shutil.copytree(run, tmp_path / "logs" / "only_run")
    assert step_numbers(tfprof_exe, tmp_path / "logs") == numbers


def tfprof_event_file(exe: pathlib.Path, tmp_path: pathlib.Path, name: str,
                      steps: List[int], logdir: pathlib.Path) -> None:
    """Converts a tfprof trace with these steps into the TensorBoard log directory `logdir`."""
    trace = TfprofTrace().thread(1, "main")
    for index, number in enumerate(steps):
        begin = (index + 1) * 10 * MS
        trace.step(number, begin, begin + 5 * MS).span(f"op{number}", begin + MS, begin + 2 * MS)
    source = trace.write(tmp_path / f"{name}.json")
    logdir.parent.mkdir(parents=True, exist_ok=True)
    run_tfprof(exe, "convert", str(source), "-o", str(logdir) + "/")


def test_tfprof_written_runs_and_restarts(tfprof_exe, tmp_path):
    logs = tmp_path / "logs"
    tfprof_event_file(tfprof_exe, tmp_path, "a", [1, 2, 3], logs / "a")
    tfprof_event_file(tfprof_exe, tmp_path, "b", [1, 2], logs / "b")
    result = run_tfprof(tfprof_exe, "summary", str(logs), check=1)
    assert "holds 2 TensorBoard runs, each a trace of its own: a (1 event file), b (1 event file)" \
        in result.stderr
    # A second file in run a (the same second, so named "....2"), from step 2 on: it supersedes
    # the first file's steps 2 and 3.
    tfprof_event_file(tfprof_exe, tmp_path, "a2", [2, 3, 4], logs / "a")
    files = sorted(path.name for path in (logs / "a").glob("events.out.tfevents.*"))
    assert len(files) == 2
    # Each export's XPlane profile is a run of its own under plugins/profile (TensorBoard's
    # Profile tab lists both); the folder reads as its event files.
    assert len(list((logs / "a").glob("plugins/profile/*/*.xplane.pb"))) == 2
    trace = summary_json(tfprof_exe, logs / "a")
    assert [step["number"] for step in trace["steps"]] == [1, 2, 3, 4]
    ops = {op["name"] for op in trace["top_ops_by_self"]}
    assert ops == {"op1", "op2", "op3", "op4"}


# --- instants through TensorFlow's formats ----------------------------------------------------


def chrome_with_instants(path: pathlib.Path) -> pathlib.Path:
    """A plain Chrome trace whose first and last events are instants: they make its window."""
    events = [
        {"ph": "M", "pid": 7, "tid": 1, "name": "thread_name", "args": {"name": "main"}},
        {"ph": "i", "s": "t", "name": "start marker", "pid": 7, "tid": 1, "ts": 100.0},
        {"ph": "X", "cat": "cpu_op", "name": "work", "pid": 7, "tid": 1, "ts": 200.0, "dur": 50.0},
        {"ph": "i", "s": "t", "name": "checkpoint:saved", "pid": 7, "tid": 1, "ts": 900.0},
    ]
    path.write_text(json.dumps({"traceEvents": events}))
    return path


@pytest.mark.parametrize("suffix", [".pb", ".tfrecord", "/"])
def test_instants_survive_tensorflow_formats_and_keep_the_window(tfprof_exe, tmp_path, suffix):
    source = chrome_with_instants(tmp_path / "instants.json")
    converted = f"{tmp_path}/converted{suffix}"  # "/": a TensorBoard log directory
    result = run_tfprof(tfprof_exe, "convert", str(source), "-o", converted)
    assert "left out" not in result.stderr  # the instants are kept
    before = summary_json(tfprof_exe, source)
    after = summary_json(tfprof_exe, converted)
    assert after["end_ns"] - after["begin_ns"] == before["end_ns"] - before["begin_ns"] == 800_000
    # Back to Chrome JSON: the instants are instants again, at their times, with their names.
    back = tmp_path / "back.json"
    run_tfprof(tfprof_exe, "convert", str(converted), "-o", str(back))
    events = json.loads(back.read_text())["traceEvents"]
    instants = sorted((e["ts"], e["name"]) for e in events if e.get("ph") in ("i", "I"))
    spans = [e for e in events if e.get("ph") == "X" and e["name"].startswith("work")]
    assert len(spans) == 1
    origin = spans[0]["ts"] - 100.0  # the span began 100 us after the first instant
    assert [(round(ts - origin, 3), name) for ts, name in instants] == [
        (0.0, "start marker"), (800.0, "checkpoint:saved")]


# --- Perfetto: traces with no track events, and the service's TraceStats ----------------------

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")
REAL_PERFETTO = ROOT / "tests/data/real/perfetto"


def perfetto_trace(path: pathlib.Path, *, stats: Optional[List[dict]] = None,
                   service: Optional[dict] = None, events: bool = True,
                   counters: bool = False) -> pathlib.Path:
    """A Perfetto trace written with Perfetto's own generated classes: a process and thread
    track, a slice on it (`events`), counter samples (`counters`), and a TraceStats packet with
    the given buffer stats and service-level fields."""
    trace = pb.Trace()

    def packet():
        p = trace.packet.add()
        p.trusted_packet_sequence_id = 1
        return p

    p = packet()
    p.track_descriptor.uuid = 10
    p.track_descriptor.process.pid = 42
    p.track_descriptor.process.process_name = "app"
    p = packet()
    p.track_descriptor.uuid = 11
    p.track_descriptor.parent_uuid = 10
    p.track_descriptor.thread.pid = 42
    p.track_descriptor.thread.tid = 43
    p.track_descriptor.thread.thread_name = "main"
    if events:
        for ts, kind in ((1_000, pb.TrackEvent.TYPE_SLICE_BEGIN), (5_000, pb.TrackEvent.TYPE_SLICE_END)):
            p = packet()
            p.timestamp = ts
            p.track_event.type = kind
            p.track_event.track_uuid = 11
            if kind == pb.TrackEvent.TYPE_SLICE_BEGIN:
                p.track_event.name = "work"
    if counters:
        p = packet()
        p.track_descriptor.uuid = 20
        p.track_descriptor.name = "memory"
        p.track_descriptor.counter.SetInParent()
        for index in range(3):
            p = packet()
            p.timestamp = 1_000 * (index + 1)
            p.track_event.type = pb.TrackEvent.TYPE_COUNTER
            p.track_event.track_uuid = 20
            p.track_event.counter_value = index
    if stats is not None or service is not None:
        p = trace.packet.add()
        for buffer in stats or []:
            entry = p.trace_stats.buffer_stats.add()
            for key, value in buffer.items():
                setattr(entry, key, value)
        for key, value in (service or {}).items():
            setattr(p.trace_stats, key, value)
    path.write_bytes(trace.SerializeToString())
    return path


def summary_text(exe: pathlib.Path, path: pathlib.Path) -> str:
    return run_tfprof(exe, "summary", str(path)).stdout


def test_perfetto_trace_stats_are_the_traces_losses(tfprof_exe, tmp_path):
    path = perfetto_trace(
        tmp_path / "lossy.pftrace",
        stats=[{"buffer_size": 1 << 20, "chunks_overwritten": 3, "trace_writer_packet_loss": 2},
               {"chunks_overwritten": 4, "chunks_discarded": 5, "abi_violations": 1}],
        service={"chunks_discarded": 9, "patches_discarded": 8, "flushes_failed": 1})
    text = summary_text(tfprof_exe, path)
    assert ("Dropped events (Perfetto's TraceStats): 7 chunks overwritten before they were read "
            "(the buffer was full), 5 chunks discarded (the buffer was full), 2 packet losses "
            "reported by trace writers, 1 shared-memory ABI violations, 1 failed flushes (the "
            "tracing service discarded 9 chunks and 8 patches before any buffer, over all its "
            "sessions).") in text
    assert "this format does not record losses" not in text
    losses = summary_json(tfprof_exe, path)["losses"]
    assert losses["perfetto"] == {
        "chunks_overwritten": 7, "chunks_discarded": 5, "trace_writer_packet_loss": 2,
        "abi_violations": 1, "patches_failed": 0, "invalid_packets": 0, "flushes_failed": 1,
        "service_chunks_discarded": 9, "service_patches_discarded": 8,
        "final_flush_failed": False, "slow_flush_sources": []}
    # No TraceStats: no account of losses, as before.
    plain = perfetto_trace(tmp_path / "plain.pftrace")
    assert "Dropped events: this format does not record losses." in summary_text(tfprof_exe, plain)
    assert summary_json(tfprof_exe, plain)["losses"]["perfetto"] is None


def test_perfetto_flush_flags_are_reported(tfprof_exe, tmp_path):
    path = perfetto_trace(tmp_path / "flush.pftrace", stats=[{"buffer_size": 4096}],
                          service={"final_flush_outcome": pb.TraceStats.FINAL_FLUSH_FAILED})
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    for producer in ("com.app", "com.app", "traced_probes"):  # the same source flagged twice
        event = trace.packet.add().service_event
        source = event.last_flush_slow_data_sources.data_source.add()
        source.producer_name = producer
        source.data_source_name = "track_event" if producer == "com.app" else "linux.ftrace"
    path.write_bytes(trace.SerializeToString())
    line = next(l for l in summary_text(tfprof_exe, path).splitlines() if l.startswith("Dropped"))
    assert line == ("Dropped events (Perfetto's TraceStats): the final flush failed, data sources "
                    "slow to answer the last flush (their last data may be lost): "
                    "com.app/track_event, traced_probes/linux.ftrace.")
    losses = summary_json(tfprof_exe, path)["losses"]["perfetto"]
    assert losses["final_flush_failed"] is True
    assert losses["slow_flush_sources"] == ["com.app/track_event", "traced_probes/linux.ftrace"]


def last_trace_stats(path: pathlib.Path):
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    (last, *_) = [p.trace_stats for p in reversed(trace.packet) if p.HasField("trace_stats")]
    return last


@pytest.mark.parametrize("name", ["nowinandroid/trace.perfetto-trace",
                                  "qml_julia_examples/trace.pftrace"])
def test_real_perfetto_trace_stats(tfprof_exe, name):
    path = REAL_PERFETTO / name
    expected = last_trace_stats(path)  # the service writes several; the last has the totals
    losses = summary_json(tfprof_exe, path)["losses"]["perfetto"]
    for field in ("chunks_overwritten", "chunks_discarded", "abi_violations",
                  "trace_writer_packet_loss", "patches_failed"):
        assert losses[field] == sum(getattr(b, field) for b in expected.buffer_stats), field
    assert losses["service_chunks_discarded"] == expected.chunks_discarded
    assert losses["service_patches_discarded"] == expected.patches_discarded
    line = next(l for l in summary_text(tfprof_exe, path).splitlines() if l.startswith("Dropped"))
    if expected.chunks_discarded:
        assert line == ("Dropped events (Perfetto's TraceStats): none reported (the tracing "
                        f"service discarded {expected.chunks_discarded} chunks and "
                        f"{expected.patches_discarded} patches before any buffer, over all its "
                        "sessions).")
    else:
        assert line == "Dropped events (Perfetto's TraceStats): none reported."


@pytest.mark.parametrize("kind", ["descriptors", "counters", "android", "qml"])
@pytest.mark.parametrize("suffix", [".pb", ".tfrecord", "/"])
def test_perfetto_without_track_events_converts_to_what_reads_back(tfprof_exe, tmp_path, kind,
                                                                   suffix):
    if kind == "android":  # ftrace, logs and package lists: no TrackEvent at all
        source = REAL_PERFETTO / "nowinandroid/trace.perfetto-trace"
    elif kind == "qml":  # the service's packets only (config, clocks, stats)
        source = REAL_PERFETTO / "qml_julia_examples/trace.pftrace"
    else:
        source = perfetto_trace(tmp_path / f"{kind}.pftrace", events=False,
                                counters=kind == "counters")
    out = f"{tmp_path}/out{suffix}"
    run_tfprof(tfprof_exe, "convert", str(source), "-o", out)
    trace = summary_json(tfprof_exe, out)
    assert trace["activities"] == 0
    assert trace["steps"] == []


# --- damaged protobuf files: cut short, or corrupt --------------------------------------------

XPLANE = ROOT / "tests/data/real/xplane/tracelens_mi300_jax_conv_minimal.xplane.pb"


def damage_message(exe: pathlib.Path, path: pathlib.Path) -> str:
    result = run_tfprof(exe, "summary", str(path), check=1)
    return result.stderr.strip().splitlines()[0]


def test_xplane_cut_short_and_corrupt_are_told_apart(tfprof_exe, tmp_path):
    data = XPLANE.read_bytes()
    path = tmp_path / "damaged.xplane.pb"
    # Cut in the middle of the second plane: its length runs past the end of the file.
    space = pb_fields(data)
    (second_start, second_length, second_header) = space[1]
    path.write_bytes(data[: second_start + second_header + 100])
    assert damage_message(tfprof_exe, path) == (
        f"tfprof summary: {path}: byte {second_start}: the file is cut short: it ends inside a "
        f"plane of {second_length} bytes, after 100 of them")
    # The first plane's length made larger than the file: what follows is no plane's fields.
    first_start, first_length, first_header = space[0]
    corrupt = bytearray(data)
    corrupt[first_header - 1] = 0x7F  # the length's last varint byte
    path.write_bytes(bytes(corrupt))
    message = damage_message(tfprof_exe, path)
    assert message.startswith(f"tfprof summary: {path}: byte 0: corrupt plane length: ")
    assert "past the end of the file" in message and "cut short" not in message
    # A bad wire type inside a plane (whole inside the file): corrupt, at that byte.
    corrupt = bytearray(data)
    at = second_start + second_header  # the second plane's first field tag
    corrupt[at] = 0x07 | (12 << 3)  # field 12, wire type 7
    path.write_bytes(bytes(corrupt))
    assert damage_message(tfprof_exe, path) == (
        f"tfprof summary: {path}: byte {at}: corrupt XPlane: bad wire type 7 (field 12)")


def pb_fields(data: bytes):
    """(start, length, header size) of each top-level length-delimited field."""
    fields = []
    at = 0
    while at < len(data):
        start = at
        tag = data[at]
        at += 1
        length = 0
        shift = 0
        while True:
            byte = data[at]
            at += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        assert tag & 7 == 2
        fields.append((start, length, at - start))
        at += length
    return fields


def test_a_cut_pb_is_cut_short_and_a_corrupt_one_corrupt(tfprof_exe, tmp_path):
    source = chrome_with_instants(tmp_path / "source.json")
    whole = tmp_path / "whole.pb"
    run_tfprof(tfprof_exe, "convert", str(source), "-o", str(whole))
    data = whole.read_bytes()
    cut = tmp_path / "cut.pb"
    cut.write_bytes(data[:-5])
    (start, length, header), = pb_fields(data)[:1]
    assert damage_message(tfprof_exe, cut) == (
        f"tfprof summary: {cut}: byte 0: the file is cut short (a .pb is one message): field 1's "
        f"length ({length} bytes) runs past the end of the message ({len(data) - 5 - header} "
        "bytes left)")
    corrupt = tmp_path / "corrupt.pb"
    damaged = bytearray(data)
    damaged[header + 3] = 0x07 | (12 << 3)  # inside the StepStats: field 12, wire type 7
    corrupt.write_bytes(bytes(damaged))
    message = damage_message(tfprof_exe, corrupt)
    assert "corrupt protobuf: " in message and "cut short" not in message
    assert "truncated" not in message
