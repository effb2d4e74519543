"""A process that listens for captures (prof_listen(), issue 38) and is not being captured costs
no thread's time: tfprof's one listener thread waits in accept() and is never switched in, and
after a capture the process is back to that state (the capture's threads gone).

The program is Python calling libtfprof.so through ctypes, so the only threads are the
interpreter's main thread and tfprof's. Each thread's voluntary_ctxt_switches +
nonvoluntary_ctxt_switches (/proc/PID/task/TID/status) are read before and after an idle stretch:
a thread that ran even once in between shows a higher count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, build_dir, run_tfprof

sys.path.insert(0, str(ROOT / "benchmarks"))
# The benchmark's reading of each thread's context switches: the test checks what it reports.
from bench_hot_paths import thread_switches as other_threads  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="capture on demand is Linux only")

# Listens, says so, then until stdin closes calls disabled spans and, with "steps", marks a step
# every 10 ms. Everything runs on the main thread: the others are tfprof's.
PROGRAM = r"""
import ctypes, json, os, select, sys, time
lib = ctypes.CDLL(sys.argv[1])
lib.prof_listen.argtypes = [ctypes.c_char_p]
lib.prof_span_begin.argtypes = [ctypes.c_char_p]
lib.prof_begin_step.argtypes = [ctypes.c_int64]
if lib.prof_listen(b"cuda=off") != 0:
    sys.exit("prof_listen failed")
time.sleep(0.2)  # the listener reaches accept()
print(json.dumps({"pid": os.getpid(), "listening": lib.prof_is_listening()}), flush=True)
mark_steps = sys.argv[2] == "steps"
step = 0
while not select.select([sys.stdin], [], [], 0.01 if mark_steps else 0)[0]:
    if mark_steps:
        lib.prof_begin_step(step)
        step += 1
    lib.prof_span_begin(b"op")
    lib.prof_span_end()
if lib.prof_unlisten() != 0:
    sys.exit("prof_unlisten failed")
"""


class Program:
    """The listening program, started and stopped around a test."""

    def __init__(self, mode: str):
        self.process = subprocess.Popen(
            [sys.executable, "-c", PROGRAM, str(build_dir() / "libtfprof.so"), mode],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hello = json.loads(self.process.stdout.readline() or "{}")
        if hello.get("pid") != self.process.pid:
            self.stop()
            pytest.fail(f"the program did not start listening: {self.process.stderr.read()}")
        assert hello["listening"] == 1
        self.pid = self.process.pid

    def stop(self) -> int:
        self.process.stdin.close()
        rc = self.process.wait(timeout=60)
        assert self.process.stderr.read() == ""
        return rc


def assert_no_thread_wakes(pid: int, seconds: float) -> None:
    before = other_threads(pid)
    # "one thread of ours waits in accept()" (tfprof.h): the interpreter starts none.
    assert len(before) == 1, f"threads besides the main one: {before}"
    time.sleep(seconds)
    after = other_threads(pid)
    assert after.keys() == before.keys(), f"threads came or went: {before} -> {after}"
    woken = {tid: after[tid][1] - before[tid][1] for tid in before}
    assert all(count == 0 for count in woken.values()), (
        f"context switches of the dormant process's threads in {seconds} s: {woken}")


def test_dormant_listener_wakes_no_thread():
    program = Program("idle")
    try:
        assert_no_thread_wakes(program.pid, 2.0)
    finally:
        assert program.stop() == 0


def test_dormant_again_after_a_capture(tfprof_exe, tmp_path):
    program = Program("steps")
    try:
        out = tmp_path / "capture.json"
        result = run_tfprof(tfprof_exe, "capture", str(program.pid), "--steps", "3", "-o", str(out))
        assert result.stdout.strip() == str(out)
        trace = json.loads(out.read_text())
        steps = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "step"]
        spans = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("name") == "op"]
        assert len(steps) == 3
        assert len(spans) == 3  # one "op" a step, whole steps only
        # The capture's own threads (its worker, the session's collector) end once it is written.
        deadline = time.monotonic() + 5
        while len(other_threads(program.pid)) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert_no_thread_wakes(program.pid, 1.5)
    finally:
        assert program.stop() == 0
