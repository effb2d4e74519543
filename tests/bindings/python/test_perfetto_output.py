"""A session written as Perfetto's protobuf trace (.pftrace), decoded with Perfetto's own schema
(the `perfetto` package; tests/tools/tfprof/perfetto_file.py replays the trace processor's import
rules): every span, step, instant and counter that was recorded, on the thread that recorded it,
and a streamed file that keeps its finished steps when the process is killed."""

from __future__ import annotations

import pathlib
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import tfprof

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "tfprof"))
from perfetto_file import decode  # noqa: E402


def thread_of(decoded, slice_):
    return decoded.row(slice_.track).name


def test_spans_steps_instants_and_counters_on_their_threads(tmp_path):
    path = tmp_path / "run.pftrace"
    done = threading.Event()

    def loader():
        tfprof.set_thread_name("loader")
        for batch in range(3):
            with tfprof.span("load_batch"):
                tfprof.counter("queue_depth", batch)
        done.set()

    with tfprof.trace(path):
        worker = threading.Thread(target=loader)
        worker.start()
        worker.join()
        for number in range(4):
            with tfprof.step(number):
                with tfprof.span("forward"):
                    with tfprof.span("matmul"):
                        pass
                with tfprof.span("backward"):
                    tfprof.instant("grads ready")
    assert done.is_set()

    decoded = decode(path)
    spans = [s for s in decoded.slices if s.category == "user_annotation"]
    names = sorted(s.name for s in spans)
    assert names == sorted(["load_batch"] * 3 + ["forward", "matmul", "backward"] * 4)
    assert {thread_of(decoded, s) for s in spans if s.name == "load_batch"} == {"loader"}
    # Nesting: each matmul inside a forward, one level deeper, on the same track.
    forwards = [s for s in spans if s.name == "forward"]
    for matmul in (s for s in spans if s.name == "matmul"):
        assert any(f.track == matmul.track and f.begin_ns <= matmul.begin_ns and matmul.end_ns <= f.end_ns
                   and f.depth + 1 == matmul.depth for f in forwards)
    steps = sorted((s for s in decoded.slices if s.category == "step"), key=lambda s: s.begin_ns)
    assert [s.args["step"] for s in steps] == [0, 1, 2, 3]
    assert all(s.name == f"step {s.args['step']}" for s in steps)
    for span in spans:
        if span.name != "load_batch":
            (step,) = [s for s in steps if s.begin_ns <= span.begin_ns and span.end_ns <= s.end_ns]
            assert span.args["step"] == step.args["step"]
    instants = [i for i in decoded.instants if i.name == "grads ready"]
    assert len(instants) == 4
    values = sorted(value for _, _, value in decoded.counters)
    assert values == [0.0, 1.0, 2.0]
    assert {decoded.tracks[uuid].name for uuid, _, _ in decoded.counters} == {"queue_depth"}
    info = decoded.info()
    assert info["dropped_events"] == 0 and info["events_recorded"] > 0
    assert decoded.realtime_minus_boottime == info["start_time_unix_ns"] - info["start_time_monotonic_ns"]


def test_the_library_reads_its_own_pftrace_back(tmp_path):
    path = tmp_path / "run.pftrace"
    with tfprof.trace(path):
        for number in range(3):
            with tfprof.step(number):
                with tfprof.span("work"):
                    pass
    tfprof.convert(path, tmp_path / "back.json")
    import json

    events = json.loads((tmp_path / "back.json").read_text())["traceEvents"]
    assert sorted(e["args"]["step"] for e in events if e.get("cat") == "step") == [0, 1, 2]
    assert [e["name"] for e in events if e.get("cat") == "user_annotation"] == ["work"] * 3


KILLED_PROGRAM = textwrap.dedent("""
    import sys, time, tfprof
    with tfprof.trace(sys.argv[1], flush_interval_ms=5):
        for number in range(1000):
            with tfprof.step(number):
                with tfprof.span("work"):
                    time.sleep(0.002)
            if number == 20:
                print("ready", flush=True)
            if number > 20:
                time.sleep(0.01)
""")


def test_a_killed_process_leaves_the_steps_it_finished(tmp_path):
    path = tmp_path / "killed.pftrace"
    process = subprocess.Popen([sys.executable, "-c", KILLED_PROGRAM, str(path)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline() == "ready\n"
        import time

        time.sleep(0.5)  # a few pieces streamed after step 20
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    decoded = decode(path)  # whole packets only: it parses
    steps = sorted(s.args["step"] for s in decoded.slices if s.category == "step")
    assert steps[:21] == list(range(21)), steps[:25]
    assert steps == list(range(len(steps)))
    work = [s for s in decoded.slices if s.name == "work"]
    assert len(work) >= len(steps)
    assert decoded.info()["dropped_events"] == 0  # the last piece's info packet


@pytest.mark.parametrize("name", ["run.perfetto-trace", "run.bin"])
def test_other_names_and_the_format_option(tmp_path, name):
    path = tmp_path / name
    options = {} if name.endswith(".perfetto-trace") else {"format": "perfetto"}
    with tfprof.trace(path, **options):
        with tfprof.span("op"):
            pass
    assert [s.name for s in decode(path).slices if s.category == "user_annotation"] == ["op"]
