"""Python programs under `tfprof run` behave as without it: Python keeps SIGINT
(KeyboardInterrupt, with the program's cleanup, then the trace), `signal.getsignal` answers as
usual, SIGTERM still writes the trace, and every multiprocessing start method ends with each
process's trace. On this venv's Python and, where pyenv has it, CPython 3.13 (which has no tfprof
package: the start-up module still hands the signals back)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from typing import List

import pytest

TFPROF = os.path.join(sysconfig.get_path("scripts"), "tfprof")


def interpreters() -> List[str]:
    found = [sys.executable]
    # A second interpreter, Python 3.13, when this one is another (a pyenv shim on PATH is the
    # fallback only: it may not run python3.13 when pyenv's global version is another).
    for candidate in (os.path.expanduser("~/.pyenv/versions/3.13.0/bin/python3.13"), shutil.which("python3.13")):
        if candidate and os.path.exists(candidate):
            if not any(os.path.samefile(candidate, f) for f in found):
                found.append(candidate)
            break
    return found


PYTHONS = pytest.mark.parametrize("python", interpreters(), ids=lambda p: os.path.basename(p))

SIGNALS_PROGRAM = """
import os, signal, sys, time
print("SIGINT", signal.getsignal(signal.SIGINT) is signal.default_int_handler,
      "SIGTERM", signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, flush=True)
# The idiom that raised TypeError when the preload owned the handlers.
signal.signal(signal.SIGTERM, signal.getsignal(signal.SIGTERM))
signal.signal(signal.SIGINT, signal.getsignal(signal.SIGINT))
try:
    print("ready", flush=True)
    time.sleep(30)
except KeyboardInterrupt:
    print("cleanup ran", flush=True)
    sys.exit(3)
"""


def default_signals() -> None:
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def start(python: str, code: str, output: pathlib.Path) -> subprocess.Popen[str]:
    process = subprocess.Popen([TFPROF, "run", "--log-level", "error", "-o", str(output), "--", python, "-c", code],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_signals)
    assert process.stdout is not None
    lines = [process.stdout.readline(), process.stdout.readline()]
    assert lines[1] == "ready\n", (lines, process.stderr.read() if process.poll() is not None else "")
    assert lines[0] == "SIGINT True SIGTERM True\n", lines
    return process


@PYTHONS
def test_ctrl_c_is_keyboard_interrupt_with_cleanup_and_the_trace_written(tmp_path, python):
    output = tmp_path / "trace.json"
    process = start(python, SIGNALS_PROGRAM, output)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert stdout == "cleanup ran\n", stderr
    assert process.returncode == 3, stderr
    assert "traceEvents" in json.loads(output.read_text())


@PYTHONS
def test_sigterm_still_writes_the_trace_and_ends_by_the_signal(tmp_path, python):
    output = tmp_path / "trace.json"
    process = start(python, SIGNALS_PROGRAM, output)
    begin = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGTERM, stderr
    assert time.monotonic() - begin < 10
    assert "traceEvents" in json.loads(output.read_text())


MULTIPROCESSING_PROGRAM = """
import contextlib, multiprocessing, sys
try:
    import tfprof  # an interpreter without the package (pyenv's 3.13 here) records no spans
except ImportError:
    tfprof = None
def square(x):
    with tfprof.span("square") if tfprof else contextlib.nullcontext():
        return x * x
if __name__ == "__main__":
    with multiprocessing.get_context(sys.argv[1]).Pool(2) as pool:
        print(sum(pool.map(square, range(20), chunksize=1)))
"""


@PYTHONS
@pytest.mark.parametrize("output", ["trace.%p.json", "trace.json"])
@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_every_multiprocessing_start_method_finishes_with_each_process_traced(tmp_path, python, method, output):
    script = tmp_path / "pool.py"
    script.write_text(MULTIPROCESSING_PROGRAM)
    begin = time.monotonic()
    result = subprocess.run([TFPROF, "run", "--log-level", "error", "-o", str(tmp_path / output), "--",
                             python, str(script), method], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "2470\n"
    assert time.monotonic() - begin < 60
    traces = sorted(tmp_path.glob("trace*.json"))
    documents = [json.loads(path.read_text()) for path in traces]
    pids = {document["tfprof"]["pid"] for document in documents}
    # The program and the workers that recorded something (a forked worker that recorded nothing
    # leaves no file; spawn and forkserver add the resource tracker and the fork server): one
    # file a process, each complete. Without %p in the path each child's file has its pid before
    # the extension (trace.4242.json), forked workers' too.
    assert len(traces) >= 1 and len(pids) == len(traces), [p.name for p in traces]
    assert len(traces) < 10
    if python != sys.executable:
        return  # no tfprof package there: the workers record nothing
    # Every task's span is in its worker's file (one worker may have taken them all): none is
    # lost with the workers, which end in os._exit() or by the pool's SIGTERM.
    squares = [sum(1 for e in document["traceEvents"] if e.get("name") == "square") for document in documents]
    assert sum(squares) == 20, [p.name for p in traces]
    assert len(traces) >= 2


JOINING_PROGRAM = """
import sys, tfprof
with tfprof.trace(sys.argv[1]) as trace:
    for n in range(3):
        with tfprof.step(n), tfprof.span("own work"):
            pass
print(trace.stats.events_recorded > 0)
"""


def test_a_program_with_its_own_trace_joins_the_session_and_writes_both_outputs(tmp_path):
    script = tmp_path / "own.py"
    script.write_text(JOINING_PROGRAM)
    result = subprocess.run([TFPROF, "run", "--log-level", "error", "-o", str(tmp_path / "run.json"), "--",
                             sys.executable, str(script), str(tmp_path / "own.json")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "True\n"
    assert result.stderr.count("tfprof.trace: joining the session `tfprof run` started; ") == 1, result.stderr
    for name in ("own.json", "run.json"):
        events = json.loads((tmp_path / name).read_text())["traceEvents"]
        assert sorted(e["name"] for e in events if e.get("ph") == "X" and e.get("cat") != "step") == ["own work"] * 3
        assert len([e for e in events if e.get("cat") == "step"]) == 3


@pytest.mark.parametrize("variables, message", [
    ({"TFPROF_FRAMEWORKS": "bogus"}, "tfprof: frameworks: unknown framework(s) 'bogus'; known: auto, off, torch, keras, jax"),
    ({"TFPROF_MODULE_DEPTH": "abc"}, "tfprof: TFPROF_MODULE_DEPTH='abc' is not a whole number >= 0"),
    ({"TFPROF_TORCH_OPS": "yes"}, "tfprof: TFPROF_TORCH_OPS='yes' is not on or off"),
    ({"TFPROF_TENSORFLOW_PROFILER": "1"}, "tfprof: TFPROF_TENSORFLOW_PROFILER='1' is not on or off"),
])
def test_a_bad_frameworks_setting_is_named_and_the_program_runs_on(tmp_path, variables, message):
    result = subprocess.run([TFPROF, "run", "--log-level", "error", "-o", str(tmp_path / "trace.json"), "--",
                             sys.executable, "-c", "print('ran')"], capture_output=True, text=True, timeout=120,
                            env={**os.environ, **variables})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ran\n"
    assert result.stderr.count(message) == 1, result.stderr
    assert (tmp_path / "trace.json").exists()
