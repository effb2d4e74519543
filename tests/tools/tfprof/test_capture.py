"""`tfprof capture`: a running C program that listens (prof_listen()) captured on demand.

The program is tests/capture/capture_app.c: steps of STEP_MS with spans forward, backward and
allreduce (nested in backward) in each. Every capture is checked on its file: whole steps only,
as many as asked, consecutive, each holding exactly its three spans.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import time
from typing import Dict, List, Optional

import pytest

from conftest import build_dir, run_tfprof

STEP_MS = 20
SPANS_PER_STEP = ("allreduce", "backward", "forward")


def app_path() -> pathlib.Path:
    path = build_dir() / "tests" / "capture" / "capture_app"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the tree first")
    return path


class App:
    """capture_app in the background; its pids once it listens."""

    def __init__(self, *args: object, env: Optional[Dict[str, str]] = None, processes: int = 1):
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.process = subprocess.Popen([str(app_path()), *map(str, args)], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=full_env)
        self.pids: List[int] = []
        self.lines: List[str] = []
        deadline = time.monotonic() + 30
        while len(self.pids) < processes and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if line.startswith("listening "):
                self.pids.append(int(line.split()[1]))
        assert len(self.pids) == processes, f"capture_app did not listen: {self.lines}"

    @property
    def pid(self) -> int:
        return self.pids[0]

    def rest_of_output(self) -> str:
        out, _ = self.process.communicate(timeout=60)
        return "".join(self.lines) + out

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def apps():
    started: List[App] = []

    def start(*args: object, **kwargs) -> App:
        app = App(*args, **kwargs)
        started.append(app)
        return app

    yield start
    for app in started:
        app.stop()


def capture(exe: pathlib.Path, *args: object, check: Optional[int] = 0):
    return run_tfprof(exe, "capture", *map(str, args), check=check)


def trace_events(path: pathlib.Path) -> List[dict]:
    return [event for event in json.loads(path.read_text())["traceEvents"]
            if event.get("ph") == "X"]


def steps_and_spans(path: pathlib.Path):
    """(step numbers in time order, {step number: sorted span names}, spans in no step)."""
    events = trace_events(path)
    steps = sorted((e for e in events if e["name"].startswith("step ")), key=lambda e: e["ts"])
    spans = [e for e in events if e["name"] in SPANS_PER_STEP]
    inside: Dict[int, List[str]] = {int(s["name"].split()[1]): [] for s in steps}
    outside = []
    for span in spans:
        owner = [s for s in steps
                 if s["ts"] <= span["ts"] and span["ts"] + span["dur"] <= s["ts"] + s["dur"] + 1e-3]
        if owner:
            inside[int(owner[0]["name"].split()[1])].append(span["name"])
        else:
            outside.append(span)
    return ([int(s["name"].split()[1]) for s in steps],
            {number: sorted(names) for number, names in inside.items()}, outside)


def assert_whole_steps(path: pathlib.Path, count: Optional[int] = None) -> List[int]:
    numbers, spans, outside = steps_and_spans(path)
    if count is not None:
        assert len(numbers) == count, numbers
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers
    for number in numbers:
        assert spans[number] == list(SPANS_PER_STEP), (number, spans[number])
    assert outside == [], outside
    return numbers


def test_three_captures_of_a_running_program_hold_whole_steps(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS)
    seen: List[List[int]] = []
    for count in (3, 4, 5):
        out = tmp_path / f"capture{count}-%p.json"
        result = capture(tfprof_exe, app.pid, "--steps", count, "-o", out)
        written = pathlib.Path(str(out).replace("%p", str(app.pid)))
        assert result.stdout.strip() == str(written)
        assert f"wrote {written}: {count} steps, " in result.stderr
        assert "recording from step" in result.stderr
        seen.append(assert_whole_steps(written, count))
    # Each capture came later in the run than the one before.
    assert seen[0][-1] < seen[1][0] and seen[1][-1] < seen[2][0]
    # The events the command reports are the file's: steps (begin and end), spans (begin, end).
    events = trace_events(pathlib.Path(str(tmp_path / "capture5-%p.json").replace("%p", str(app.pid))))
    assert len(events) == 5 * (1 + len(SPANS_PER_STEP))


def test_other_output_formats(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS)
    for name in ("c.pftrace", "c.xplane.pb", "c.tfrecord", "logs/"):
        target = f"{tmp_path}/{name}"
        capture(tfprof_exe, app.pid, "--steps", 2, "-o", target)
        summary = json.loads(run_tfprof(tfprof_exe, "summary", "--json", target).stdout)
        steps = summary["traces"][0]["steps"]
        assert len(steps) == 2, name
        assert steps[1]["number"] == steps[0]["number"] + 1, name


def test_capture_by_seconds_ends_at_a_step_end(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS)
    out = tmp_path / "seconds.json"
    capture(tfprof_exe, app.pid, "--seconds", 0.3, "-o", out)
    numbers = assert_whole_steps(out)
    # 0.3 s of 20 ms steps, whole: at least about 15 (fewer on a loaded machine, whose steps are
    # longer), never a cut one.
    assert len(numbers) >= 5


def test_capture_by_seconds_shorter_than_a_step_holds_that_whole_step(tfprof_exe, apps, tmp_path):
    app = apps(0, 600)
    out = tmp_path / "long-steps.json"
    result = capture(tfprof_exe, app.pid, "--seconds", 0.1, "-o", out)
    assert ": 1 steps, " in result.stderr
    numbers = assert_whole_steps(out, 1)
    step = [e for e in trace_events(out) if e["name"] == f"step {numbers[0]}"][0]
    assert step["dur"] >= 590_000  # microseconds: the whole 600 ms step


def test_a_program_that_marks_no_steps(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS, "--no-steps")
    result = capture(tfprof_exe, app.pid, "--steps", 3, "--step-wait", 0.5, "-o",
                     tmp_path / "none.json", check=1)
    assert "began no step in 0.5 s" in result.stderr and "--seconds" in result.stderr
    assert not (tmp_path / "none.json").exists()
    out = tmp_path / "by-time.json"
    result = capture(tfprof_exe, app.pid, "--seconds", 0.3, "--step-wait", 0.2, "-o", out)
    assert "recording from now (no step began)" in result.stderr
    events = trace_events(out)
    assert not [e for e in events if e["name"].startswith("step ")]
    assert len([e for e in events if e["name"] == "forward"]) >= 3


def test_errors_name_the_process_and_the_reason(tfprof_exe, apps, tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    result = capture(tfprof_exe, gone.pid, "-o", tmp_path / "x.json", check=1)
    assert f"process {gone.pid}: no such process" in result.stderr

    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        result = capture(tfprof_exe, sleeper.pid, "-o", tmp_path / "x.json", check=1)
        assert "'sleep' is not listening for captures" in result.stderr
        assert "tfprof run --on-demand" in result.stderr
    finally:
        sleeper.kill()
        sleeper.wait()

    app = apps(0, STEP_MS)
    result = capture(tfprof_exe, app.pid, "-o", tmp_path / "missing" / "x.json", check=3)
    assert "missing" in result.stderr
    result = capture(tfprof_exe, app.pid, "--options", "bogus=1", "-o", tmp_path / "x.json",
                     check=2)
    assert "bogus" in result.stderr
    for args, says in ((["-o", tmp_path / "x.json", "--steps", 2, "--seconds", 1], "do not go together"),
                       ([], "Give -o PATH"),
                       (["--steps", 0, "-o", "x.json"], "--steps '0'"),
                       ([app.pid, "-o", "x.json"], "would write one file")):
        result = run_tfprof(tfprof_exe, "capture", str(app.pid), *map(str, args), check=2)
        assert says in result.stderr, (args, result.stderr)
    assert not list(tmp_path.glob("*.json"))
    # The refusals left the program ready for the next capture.
    capture(tfprof_exe, app.pid, "--steps", 2, "-o", tmp_path / "after.json")
    assert_whole_steps(tmp_path / "after.json", 2)


def test_one_capture_at_a_time(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS)
    first = subprocess.Popen([str(tfprof_exe), "capture", str(app.pid), "--steps", "40", "-o",
                              str(tmp_path / "first.json")], stderr=subprocess.PIPE, text=True)
    try:
        assert "waiting" in first.stderr.readline()
        second = capture(tfprof_exe, app.pid, "--steps", 2, "-o", tmp_path / "second.json", check=1)
        assert "another capture of process" in second.stderr and "in progress" in second.stderr
    finally:
        assert first.wait(timeout=60) == 0
    assert_whole_steps(tmp_path / "first.json", 40)
    assert not (tmp_path / "second.json").exists()


def test_the_programs_own_session_and_a_capture_exclude_each_other(tfprof_exe, apps, tmp_path):
    # The program starts its own session at step 20 while a 40-step capture records: refused.
    own = tmp_path / "own.json"
    app = apps(0, STEP_MS, "--own-session", "20,30", env={"CAPTURE_APP_OWN_OUTPUT": str(own)})
    capture(tfprof_exe, app.pid, "--steps", 40, "-o", tmp_path / "capture.json")
    assert_whole_steps(tmp_path / "capture.json", 40)
    app.stop()
    output = app.rest_of_output()
    assert "own session: -3 " in output and "a `tfprof capture` of this process" in output
    assert not own.exists()

    # The other way round: a capture asked for while the program records its own session.
    own2 = tmp_path / "own2.json"
    app2 = apps(0, STEP_MS, "--own-session", "0,100000", env={"CAPTURE_APP_OWN_OUTPUT": str(own2)})
    time.sleep(0.2)
    result = capture(tfprof_exe, app2.pid, "--steps", 2, "-o", tmp_path / "refused.json", check=1)
    assert "is recording a profiling session of its own" in result.stderr
    assert f"tfprof capture --dump {app2.pid}" in result.stderr


def test_dump_writes_the_flight_recorders_window(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS, "--keep", 5)
    time.sleep(0.5)  # more than 5 steps recorded
    out = tmp_path / "window.json"
    result = capture(tfprof_exe, "--dump", app.pid, "-o", out)
    assert f"wrote {out}: " in result.stderr
    numbers, _, _ = steps_and_spans(out)
    assert 1 <= len(numbers) <= 6, numbers
    # The session goes on: a second dump holds later steps.
    time.sleep(0.3)
    capture(tfprof_exe, "--dump", app.pid, "-o", tmp_path / "window2.json")
    later, _, _ = steps_and_spans(tmp_path / "window2.json")
    assert later[-1] > numbers[-1]

    quiet = apps(0, STEP_MS)
    result = capture(tfprof_exe, "--dump", quiet.pid, "-o", tmp_path / "nothing.json", check=1)
    assert "runs no profiling session to dump" in result.stderr


def test_the_program_exits_during_a_capture(tfprof_exe, apps, tmp_path):
    app = apps(25, STEP_MS)
    out = tmp_path / "exit.json"
    result = capture(tfprof_exe, app.pid, "--steps", 1000, "-o", out)
    assert "the program exited during the capture" in result.stderr
    numbers = assert_whole_steps(out)
    assert numbers[-1] == 24  # the last step of the run, whole


def test_the_command_going_away_ends_the_capture_and_writes_it(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS)
    out = tmp_path / "interrupted.json"
    command = subprocess.Popen([str(tfprof_exe), "capture", str(app.pid), "--steps", "100000",
                                "-o", str(out)], stderr=subprocess.PIPE, text=True)
    while "recording" not in command.stderr.readline():
        pass
    time.sleep(0.3)
    command.send_signal(signal.SIGINT)
    command.wait(timeout=30)
    deadline = time.monotonic() + 30
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    numbers, spans, _ = steps_and_spans(out)
    assert len(numbers) >= 2
    for number in numbers[:-1]:
        assert spans[number] == list(SPANS_PER_STEP)
    # The program is ready again.
    capture(tfprof_exe, app.pid, "--steps", 2, "-o", tmp_path / "next.json")
    assert_whole_steps(tmp_path / "next.json", 2)


def test_fork_child_listens_on_its_own(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS, "--fork", processes=2)
    parent, child = app.pids
    for pid in (parent, child):
        capture(tfprof_exe, pid, "--steps", 2, "-o", tmp_path / f"p{pid}.json")
        trace = json.loads((tmp_path / f"p{pid}.json").read_text())
        assert {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"} == {pid}
        assert_whole_steps(tmp_path / f"p{pid}.json", 2)


def test_all_captures_every_listening_process_then_merge(tfprof_exe, apps, tmp_path):
    ranks = [apps(0, STEP_MS, env={"RANK": str(rank)}) for rank in range(3)]
    out = tmp_path / "run"
    out.mkdir()
    result = capture(tfprof_exe, "--all", "--steps", 3, "-o", out / "rank%r-%p.json")
    for rank, app in enumerate(ranks):
        path = out / f"rank{rank}-{app.pid}.json"
        assert str(path) in result.stdout.split()
        assert_whole_steps(path, 3)
    mine = [out / f"rank{rank}-{app.pid}.json" for rank, app in enumerate(ranks)]
    run_tfprof(tfprof_exe, "merge", "-o", tmp_path / "merged.json", *map(str, mine))
    merged = json.loads((tmp_path / "merged.json").read_text())
    names = {e["args"]["name"] for e in merged["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    for rank, app in enumerate(ranks):
        assert any(name.startswith(f"rank {rank} ") and f"pid {app.pid}" in name for name in names), names
    steps = [e for e in merged["traceEvents"] if e.get("ph") == "X" and e["name"].startswith("step ")]
    assert len(steps) == 9

    result = capture(tfprof_exe, "--all", "--steps", 1, "-o", out / "same.json", check=2)
    assert "put %p (pid) or %r (rank) in -o" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to run the command as another user")
def test_another_user_is_refused(tfprof_exe, apps, tmp_path):
    app = apps(0, STEP_MS)
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    result = subprocess.run([*as_nobody, str(tfprof_exe), "capture", str(app.pid), "-o",
                             "/tmp/nobody-capture.json"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "not permitted: 'capture_app' belongs to root (uid 0)" in result.stderr
    # The process checks too: a client that skips the command's own check is answered no.
    # The process answers a stranger at once and closes, which can come before the request is
    # written (EPIPE then); the refusal is read all the same.
    probe = ("import socket\ns = socket.socket(socket.AF_UNIX)\n"
             f"s.connect(b'\\0tfprof-capture/{app.pid}')\n"
             "try:\n"
             "    s.sendall(b'request=capture,steps=1,ms=0,step_wait_ms=1000,output=/tmp/x.json\\n')\n"
             "except BrokenPipeError:\n"
             "    pass\n"
             "print(s.recv(4096).decode())\n")
    # (the system's interpreter: another user may not reach a virtual environment's)
    system_python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    result = subprocess.run([*as_nobody, system_python, "-c", probe], capture_output=True,
                            text=True, timeout=60)
    assert "event=error,code=not_permitted" in result.stdout, result.stderr
    assert "a capture may come from that user or root only" in result.stdout
    # And the program still serves its own user.
    capture(tfprof_exe, app.pid, "--steps", 2, "-o", tmp_path / "mine.json")
    assert_whole_steps(tmp_path / "mine.json", 2)
