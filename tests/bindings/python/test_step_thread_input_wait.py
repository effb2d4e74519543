"""Input wait is judged on the thread that runs the steps (issue 19, item 5).

A trainer thread blocked in a real queue.Queue.get() inside an "IteratorGetNext" span, while a
loader thread sleeps in its own "read_file" span, waits for input: other threads' open spans do
not make the step "host compute". The converse, a loader filling the queue while the trainer
computes, is not input wait. Both run with real threads and a real queue, are recorded with
tfprof.trace, and are summarised by the packaged `tfprof summary --json`; the expected input wait
is computed in the test from the trace's own events.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import tfprof
from tfprof._cli import _executable_path

STEPS = 6


def record(path: Path, read_s: float, train_s: float) -> None:
    """A trainer thread (which marks the steps) takes batches from a loader thread; both are
    named by threading, as users name them (rows take the threading name)."""
    batches: "queue.Queue[int]" = queue.Queue(maxsize=1)

    def loader() -> None:
        for index in range(STEPS + 1):
            with tfprof.span("read_file"):
                time.sleep(read_s)
            batches.put(index)

    def trainer() -> None:
        for number in range(STEPS):
            with tfprof.step(number):
                with tfprof.span("IteratorGetNext"):
                    batches.get()
                with tfprof.span("train_step"):
                    time.sleep(train_s)

    with tfprof.trace(str(path)):
        threads = [threading.Thread(target=loader, name="loader"),
                   threading.Thread(target=trainer, name="trainer")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def summarize(path: Path) -> Dict[str, Any]:
    out = subprocess.run([_executable_path(), "summary", "--json", str(path)], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    (trace,) = json.loads(out)["traces"]
    return trace


def waits_per_step(path: Path) -> Tuple[List[Tuple[float, float]], Dict[int, float]]:
    """Each step's [begin, end) and the time (us) its thread spent in IteratorGetNext within it,
    from the trace file itself."""
    events = json.loads(path.read_text())["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and e.get("cat") == "step")
    waits = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("ph") == "X" and e.get("name") == "IteratorGetNext"]
    per_step = {}
    for index, (begin, end) in enumerate(steps):
        per_step[index] = sum(max(0.0, min(end, w_end) - max(begin, w_begin))
                              for w_begin, w_end in waits)
    return steps, per_step


def test_a_trainer_blocked_on_the_queue_is_input_bound(tmp_path: Path) -> None:
    path = tmp_path / "slow_loader.json"
    record(path, read_s=0.06, train_s=0.004)
    trace = summarize(path)
    steps, expected = waits_per_step(path)
    assert len(trace["steps"]) == STEPS == len(steps)
    for index, step in enumerate(trace["steps"]):
        # Exactly the trainer's own wait, although the loader's span is open all the while.
        assert abs(step["input_wait_ns"] / 1e3 - expected[index]) <= 1.0, (index, step)
    total = trace["step_total"]
    assert total["input_wait_ns"] / total["duration_ns"] >= 0.7, total
    assert total["host_compute_ns"] / total["duration_ns"] <= 0.25, total
    assert "trainer" in trace["step_thread"]
    finding = trace["findings"][0]
    assert finding["kind"] == "input_bound", trace["findings"]
    assert "step thread trainer" in finding["evidence"], finding["evidence"]
    assert "IteratorGetNext" in finding["evidence"]


def test_a_loader_that_keeps_ahead_is_not_input_wait(tmp_path: Path) -> None:
    path = tmp_path / "fast_loader.json"
    record(path, read_s=0.005, train_s=0.04)
    trace = summarize(path)
    _, expected = waits_per_step(path)
    total = trace["step_total"]
    assert sum(step["input_wait_ns"] for step in trace["steps"]) / 1e3 == \
        pytest.approx(sum(expected.values()), abs=1.0 * STEPS)
    assert total["input_wait_ns"] / total["duration_ns"] < 0.1, total
    assert total["host_compute_ns"] / total["duration_ns"] > 0.8, total
    assert all(f["kind"] != "input_bound" for f in trace["findings"]), trace["findings"]

