"""Capture on demand from Python: tfprof.listen() in a running program, `tfprof capture PID` from
outside, each capture holding whole steps only, exactly as many as asked for, with every span of
each; the program's own tfprof.trace and a capture refusing each other; unlisten() mid-capture."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import threading
import time
from typing import Any, Dict, List, Optional

import pytest

import tfprof
from trace_file import ParsedTrace, read_trace


def _tfprof_command() -> Optional[str]:
    """The wheel's console script, else the build tree's command (TFPROF_BUILD_DIR)."""
    packaged = os.path.join(sysconfig.get_path("scripts"), "tfprof")
    if os.access(packaged, os.X_OK):
        return packaged
    build_dir = os.environ.get("TFPROF_BUILD_DIR")
    if build_dir and os.access(os.path.join(build_dir, "tfprof"), os.X_OK):
        return os.path.join(build_dir, "tfprof")
    return shutil.which("tfprof")


TFPROF = _tfprof_command()
needs_command = pytest.mark.skipif(TFPROF is None, reason="no tfprof command (install the wheel or set TFPROF_BUILD_DIR)")

# Generous: a loaded 2-core machine may stall any of the processes for seconds.
COMMAND_TIMEOUT_S = 120
LINE_TIMEOUT_S = 60

# Spans each step holds: two top-level ones and one nested, plus an instant.
SPANS_PER_STEP = {"forward": 1, "backward": 1, "gradients": 1}

# Marks steps of ~15 ms until stdin closes, and obeys one-word commands between steps, answering
# each on stdout.
PROGRAM = textwrap.dedent("""
    import os, queue, sys, threading, time
    import tfprof

    commands = queue.Queue()

    def read_commands():
        for line in sys.stdin:
            commands.put(line.split())
        commands.put(["quit"])

    threading.Thread(target=read_commands, daemon=True).start()

    def say(*words):
        print(*words, flush=True)

    tfprof.listen(cuda="off")
    say("listening", os.getpid(), tfprof.is_listening(), tfprof.is_running())
    own_trace = None
    probe_trace = unlisten_when_recording = exit_when_recording = False
    number = 0
    while True:
        try:
            command = commands.get_nowait()
        except queue.Empty:
            command = None
        if command:
            if command[0] == "quit":
                break
            if command[0] == "status":
                say("status", tfprof.is_listening(), tfprof.is_running())
            elif command[0] == "trace":
                own_trace = tfprof.trace(command[1], cuda="off").start()
                say("tracing")
            elif command[0] == "untrace":
                own_trace.stop()
                own_trace = None
                say("traced")
            elif command[0] == "probe-trace":
                probe_trace = True
            elif command[0] == "unlisten-when-recording":
                unlisten_when_recording = True
            elif command[0] == "exit-when-recording":
                exit_when_recording = True
        with tfprof.step(number):
            with tfprof.span("forward"):
                time.sleep(0.007)
            with tfprof.span("backward"):
                with tfprof.span("gradients"):
                    time.sleep(0.007)
            tfprof.instant("batch_done")
            # With no trace of its own, a session that runs is a capture's.
            recording = own_trace is None and tfprof.is_running()
            if probe_trace and recording:
                probe_trace = False
                try:
                    tfprof.trace(cuda="off").start()
                except RuntimeError as error:
                    say("trace-refused", error)
                else:
                    say("trace-started")
        if unlisten_when_recording and recording:
            unlisten_when_recording = False
            tfprof.unlisten()  # between steps: the capture's steps are all whole
            say("unlistened", number, tfprof.is_listening(), tfprof.is_running())
        if exit_when_recording and recording:
            say("exiting", number)
            break  # between steps: the capture is written at exit, its steps all whole
        number += 1
    say("done", tfprof.is_listening())
""")


class Program:
    """The listening program, its stdout read line by line on a thread of ours."""

    def __init__(self, tmp_path: Any) -> None:
        self._stderr = open(tmp_path / "program.stderr", "w+")
        self.process = subprocess.Popen(
            [sys.executable, "-c", PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, text=True, bufsize=1, cwd=tmp_path,
        )
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        words = self.expect("listening")
        assert words == ["listening", str(self.process.pid), "True", "False"]
        self.pid = self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def expect(self, first_word: str) -> List[str]:
        """The next line (which must begin with `first_word`), split into words."""
        try:
            line = self._lines.get(timeout=LINE_TIMEOUT_S)
        except queue.Empty:
            pytest.fail(f"the program said nothing for {LINE_TIMEOUT_S} s; expected {first_word!r}{self._diagnostics()}")
        assert line is not None, f"the program ended; expected {first_word!r}{self._diagnostics()}"
        assert line.split(" ", 1)[0] == first_word, f"{line!r}; expected {first_word!r}{self._diagnostics()}"
        return line.split()

    def expect_line(self, first_word: str) -> str:
        words = self.expect(first_word)
        return " ".join(words[1:])

    def status(self) -> List[str]:
        self.send("status")
        return self.expect("status")[1:]

    def dormant(self) -> bool:
        """Listening with no session: after a capture, once it is written (another suite's
        `tfprof capture --all` on this machine may be capturing the program for a moment)."""
        deadline = time.monotonic() + LINE_TIMEOUT_S
        while self.status() != ["True", "False"]:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True

    def finish(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=COMMAND_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()

    def _diagnostics(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return f"\nprogram stderr:\n{self._stderr.read()}"


@pytest.fixture
def program(tmp_path: Any) -> Any:
    running = Program(tmp_path)
    try:
        yield running
    finally:
        running.finish()


def start_capture(pid: int, output: Any, *options: str) -> subprocess.Popen[str]:
    """A capture that records until the program ends it."""
    assert TFPROF is not None
    return subprocess.Popen(
        [TFPROF, "capture", str(pid), "--step-wait", "60", *options, "-o", str(output)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def finish_capture(command: subprocess.Popen[str]) -> "tuple[str, str]":
    try:
        return command.communicate(timeout=COMMAND_TIMEOUT_S)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()


def capture(pid: int, output: Any, *options: str) -> subprocess.CompletedProcess[str]:
    assert TFPROF is not None
    for _ in range(20):
        done = subprocess.run(
            [TFPROF, "capture", str(pid), "--step-wait", "60", *options, "-o", str(output)],
            capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
        )
        # Another suite's `tfprof capture --all` on this machine may be capturing the program.
        if "is in progress; try again" not in done.stderr:
            return done
        time.sleep(0.5)
    return done


def step_numbers_of_whole_steps(trace: ParsedTrace) -> List[int]:
    """The trace's step numbers, checking that each step holds exactly the program's spans and
    instant, that no event lies outside the steps, and that the steps follow each other."""
    steps = trace.steps()
    numbers = [step["args"]["step"] for step in steps]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers
    per_step: Dict[int, Dict[str, int]] = {number: {} for number in numbers}
    for span in trace.spans():
        assert span["args"].get("step") in per_step, f"a span outside the captured steps: {span}"
        counts = per_step[span["args"]["step"]]
        counts[span["name"]] = counts.get(span["name"], 0) + 1
    for number, counts in per_step.items():
        assert counts == SPANS_PER_STEP, f"step {number} holds {counts}"
    instants = [event for event in trace.with_phase("i") if event["name"] == "batch_done"]
    assert sorted(event["args"]["step"] for event in instants) == numbers
    return numbers


def test_listen_unlisten_and_is_listening_in_this_process():
    assert not tfprof.is_listening()
    tfprof.listen("flush_interval_ms=50", buffer_events=4096, cuda="off")
    try:
        assert tfprof.is_listening()
        assert not tfprof.is_running(), "a listening process runs no session until a capture"
        with pytest.raises(RuntimeError, match=r"^tfprof\.listen: process \d+ is listening for captures already$"):
            tfprof.listen()
        # The program's own session may run while nobody captures.
        with tfprof.trace(cuda="off") as trace:
            with tfprof.step(0), tfprof.span("own"):
                pass
        assert trace.stats.events_recorded == 4
        assert tfprof.is_listening()
    finally:
        tfprof.unlisten()
    assert not tfprof.is_listening()
    with pytest.raises(RuntimeError, match=r"^tfprof\.unlisten: process \d+ is not listening for captures$"):
        tfprof.unlisten()
    # Listening again after unlisten() works.
    tfprof.listen(cuda="off")
    assert tfprof.is_listening()
    tfprof.unlisten()
    assert not tfprof.is_listening()


def test_listen_refuses_an_output_and_bad_options_and_listens_not():
    with pytest.raises(ValueError, match=r"tfprof\.listen: no output= here: each capture writes the file that `tfprof capture PID -o PATH` names"):
        tfprof.listen(output="trace.json")
    with pytest.raises(ValueError, match=r"tfprof\.listen: .*output.*-o"):
        tfprof.listen("cuda=off,output=trace.json")
    for name, value in (("frameworks", "auto"), ("tensorflow", True), ("module_depth", 2)):
        with pytest.raises(ValueError, match=rf"^tfprof\.listen: {name}= is tfprof\.trace's alone"):
            tfprof.listen(**{name: value})
    with pytest.raises(ValueError, match=r"^tfprof\.listen: .*no_such_option") as raised:
        tfprof.listen(no_such_option=1)
    assert "offset" not in str(raised.value)
    with pytest.raises(ValueError, match=r"^tfprof\.listen: .*buffer_events"):
        tfprof.listen(buffer_events="many")
    with pytest.raises(TypeError, match=r"^tfprof\.listen: option buffer_events=\[1\] has type list"):
        tfprof.listen(buffer_events=[1])
    with pytest.raises(TypeError, match=r"^tfprof\.listen: options=\{\} has type dict; expected str"):
        tfprof.listen({})  # type: ignore[arg-type]
    assert not tfprof.is_listening()


@needs_command
def test_three_captures_each_hold_exactly_the_steps_asked_for(program, tmp_path):
    previous_last = -1
    for index, steps in enumerate((3, 7, 1)):
        output = tmp_path / f"capture{index}.json"
        done = capture(program.pid, output, "--steps", str(steps))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(output)
        assert f"wrote {output}: {steps} steps" in done.stderr
        trace = read_trace(output)
        numbers = step_numbers_of_whole_steps(trace)
        assert len(numbers) == steps
        # The row is named after the Python thread, in every capture's session.
        assert len(trace.row_of("MainThread")) == steps * sum(SPANS_PER_STEP.values())
        assert numbers[0] > previous_last, "a capture began before the previous one's steps"
        previous_last = numbers[-1]
        # Dormant again: listening, no session.
        assert program.dormant()
    program.send("quit")
    assert program.expect("done") == ["done", "True"]


@needs_command
def test_a_capture_by_seconds_holds_whole_steps_for_at_least_that_long(program, tmp_path):
    output = tmp_path / "seconds.json.gz"
    done = capture(program.pid, output, "--seconds", "0.4")
    assert done.returncode == 0, done.stderr
    trace = read_trace(output)
    numbers = step_numbers_of_whole_steps(trace)
    steps = trace.steps()
    covered_us = steps[-1]["ts"] + steps[-1]["dur"] - steps[0]["ts"]
    # It ends at the first step end after 0.4 s (noticed within a poll of the capture's thread,
    # so no upper bound on a loaded machine).
    assert covered_us >= 0.4e6, f"{len(numbers)} steps over {covered_us} us"
    assert program.dormant()


@needs_command
def test_a_capture_is_refused_while_the_programs_own_trace_runs(program, tmp_path):
    own = tmp_path / "own.json"
    program.send(f"trace {own}")
    program.expect("tracing")
    output = tmp_path / "refused.json"
    refused = capture(program.pid, output, "--steps", "2")
    assert refused.returncode == 1, refused.stderr
    assert f"process {program.pid} is recording a profiling session of its own" in refused.stderr
    assert "tfprof.trace" in refused.stderr
    assert not output.exists()
    program.send("untrace")
    program.expect("traced")
    assert step_numbers_of_whole_steps(read_trace(own))
    # Still listening: the next capture works.
    done = capture(program.pid, output, "--steps", "2")
    assert done.returncode == 0, done.stderr
    assert len(step_numbers_of_whole_steps(read_trace(output))) == 2


@needs_command
def test_tfprof_trace_is_refused_while_a_capture_records(program, tmp_path):
    program.send("probe-trace")
    program.status()  # the command was read before the capture is armed
    output = tmp_path / "probed.json"
    done = capture(program.pid, output, "--steps", "4")
    assert done.returncode == 0, done.stderr
    message = program.expect_line("trace-refused")
    assert message.startswith("tfprof.trace: cannot start: a profiling session is already running: "
                              "a `tfprof capture` of this process"), message
    assert "tfprof.unlisten()" in message
    # The refused start changed nothing in the capture.
    assert len(step_numbers_of_whole_steps(read_trace(output))) == 4
    assert program.dormant()


@needs_command
def test_unlisten_while_a_capture_records_ends_it_and_writes_the_file(program, tmp_path):
    program.send("unlisten-when-recording")
    program.status()
    output = tmp_path / "cut.json"
    command = start_capture(program.pid, output, "--steps", "100000")
    try:
        words = program.expect("unlistened")
    finally:
        stdout, stderr = finish_capture(command)
    assert words[2:] == ["False", "False"], "unlisten() returned with the capture still recording"
    assert command.returncode == 0, stderr
    assert stdout.strip() == str(output)
    assert "the program stopped listening during the capture" in stderr
    numbers = step_numbers_of_whole_steps(read_trace(output))
    assert numbers[-1] == int(words[1]), "the capture holds the steps up to unlisten(), all whole"
    refused = capture(program.pid, tmp_path / "after.json", "--steps", "1")
    assert refused.returncode == 1
    assert "is not listening for captures" in refused.stderr
    assert program.status() == ["False", "False"]


@needs_command
def test_a_capture_under_way_when_the_program_exits_is_written(program, tmp_path):
    program.send("exit-when-recording")
    program.status()
    output = tmp_path / "at_exit.json"
    command = start_capture(program.pid, output, "--steps", "100000")
    try:
        last = int(program.expect("exiting")[1])
        assert program.expect("done") == ["done", "True"]
    finally:
        stdout, stderr = finish_capture(command)
    assert command.returncode == 0, stderr
    assert stdout.strip() == str(output)
    assert "the program exited during the capture" in stderr
    assert program.process.wait(timeout=COMMAND_TIMEOUT_S) == 0
    numbers = step_numbers_of_whole_steps(read_trace(output))
    assert numbers[-1] == last


@needs_command
def test_listen_under_tfprof_run_on_demand_says_so_and_the_program_is_captured(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import os, time
        import tfprof
        tfprof.listen(buffer_events=4096)  # as the script would run on its own
        print("listening", os.getpid(), tfprof.is_listening(), flush=True)
        for number in range(100000):
            with tfprof.step(number):
                with tfprof.span("forward"):
                    time.sleep(0.007)
                with tfprof.span("backward"), tfprof.span("gradients"):
                    time.sleep(0.007)
                tfprof.instant("batch_done")
            if os.path.exists("stop"):
                break
    """))
    assert TFPROF is not None
    stderr_path = tmp_path / "program.stderr"
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen([TFPROF, "run", "--on-demand", "--", sys.executable, str(script)],
                                   stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=tmp_path)
    try:
        assert process.stdout is not None
        words = process.stdout.readline().split()
        assert words[:1] == ["listening"], stderr_path.read_text()
        pid = int(words[1])
        assert words[2] == "True"
        output = tmp_path / "captured.json"
        done = capture(pid, output, "--steps", "3")
        assert done.returncode == 0, done.stderr
        assert len(step_numbers_of_whole_steps(read_trace(output))) == 3
    finally:
        (tmp_path / "stop").touch()
        try:
            process.wait(timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr_path.read_text()
    assert ("tfprof.listen: `tfprof run --on-demand` listens for this process already (this call's "
            "options are not applied)\n") in stderr_path.read_text()
