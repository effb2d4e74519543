"""Unmodified programs under libtfprof_preload.so, out of process: each test runs a program, then
parses the trace it left and compares it with what the program did (tests/bindings/preload/*.c,
*.cc).

Needs TFPROF_BUILD_DIR: a CMake build directory with the preload library and the test programs
(scripts/test.sh passes build/test-release)."""

import gzip
import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("TFPROF_BUILD_DIR", "build/test-release")).resolve()
PRELOAD = BUILD / "libtfprof_preload.so"
NVTX_APP = BUILD / "tests" / "bindings" / "preload" / "nvtx_app"
INSTRUMENTED = BUILD / "tests" / "bindings" / "preload" / "instrumented"

pytestmark = pytest.mark.skipif(not PRELOAD.exists(), reason=f"no {PRELOAD}: build it first")


def run(command, output=None, timeout=60, **variables):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TFPROF_", "NVTX_"))}
    env["LD_PRELOAD"] = str(PRELOAD)
    if output is not None:
        env["TFPROF_OUTPUT"] = str(output)
    env.update({k: str(v) for k, v in variables.items()})
    return subprocess.run([str(part) for part in command], env=env, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=default_signals)


def default_signals():
    """The child starts with the default action for the signals the preload flushes on: a shell
    running these tests in the background hands its children SIGINT ignored, and the preload
    leaves an ignored signal alone (so a self-sent SIGINT would do nothing)."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


def load(path):
    with open(path) as file:
        return json.load(file)


def spans(trace, category="user_annotation"):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == category]


def names(events):
    return Counter(e["name"] for e in events)


def thread_names(trace):
    return {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def tid_named(trace, name):
    return next(tid for tid, label in thread_names(trace).items() if label == name)


def contains(outer, inner):
    """Whether span `inner` lies within span `outer`, compared in integer nanoseconds: the file's
    microseconds with three decimals, added as floats, can differ in the last bit where two
    ends fall on the same nanosecond."""
    def ns(value):
        return round(value * 1000)
    return (ns(outer["ts"]) <= ns(inner["ts"])
            and ns(inner["ts"]) + ns(inner["dur"]) <= ns(outer["ts"]) + ns(outer["dur"]))


def check_training_loop(trace, steps=3):
    """What nvtx_app records before its ending, whichever ending it takes."""
    host = spans(trace)
    counts = names(host)
    assert counts["forward"] == steps and counts["backward"] == steps
    assert counts["MyLib: [comm] allreduce"] == steps
    assert counts["optimizer"] == steps  # a registered string without a category
    assert counts["load_batch"] == 3
    assert [counts[f"step {n}"] for n in range(steps)] == [1] * steps
    step_rows = sorted(e["name"] for e in spans(trace, "step"))
    assert step_rows == sorted(f"step {n}" for n in range(steps))
    # Nesting and step attribution: each backward holds its allreduce, and both carry the step.
    trainer = tid_named(trace, "trainer")
    backward = sorted((e for e in host if e["name"] == "backward"), key=lambda e: e["ts"])
    allreduce = sorted((e for e in host if e["name"].endswith("allreduce")), key=lambda e: e["ts"])
    for step, (outer, inner) in enumerate(zip(backward, allreduce)):
        assert outer["tid"] == inner["tid"] == trainer
        assert contains(outer, inner)
        assert outer["args"]["step"] == inner["args"]["step"] == step
    return host


def test_nvtx_ranges_steps_marks_domains_and_threads(tmp_path):
    result = run([NVTX_APP, "return", 3], tmp_path / "trace.json")
    assert result.returncode == 0, result.stderr
    assert f"tfprof: wrote {tmp_path / 'trace.json'}" in result.stderr
    trace = load(tmp_path / "trace.json")
    check_training_loop(trace)
    events = trace["traceEvents"]
    trainer, loader = tid_named(trace, "trainer"), tid_named(trace, "loader")
    assert all(e["tid"] == loader for e in spans(trace) if e["name"] == "load_batch")
    marks = [e for e in events if e.get("ph") == "i" and e["name"] == "setup done"]
    assert len(marks) == 1 and marks[0]["tid"] == trainer
    # The start/end range begins on the trainer and ends on the loader thread.
    edges = {e["ph"]: e for e in events if e.get("cat") == "range" and e["name"] == "data epoch"}
    assert edges["b"]["tid"] == trainer and edges["e"]["tid"] == loader
    assert edges["b"]["id"] == edges["e"]["id"] and edges["b"]["ts"] <= edges["e"]["ts"]
    # The loader thread's lifetime, and the program's command line.
    loader_marks = [e["name"] for e in events if e.get("ph") == "i" and e["tid"] == loader]
    assert loader_marks[0] == "thread start" and loader_marks[-1] == "thread exit"
    assert trace["tfprof"]["command_line"] == [str(NVTX_APP), "return", "3"]
    assert trace["dropped_events"] == 0


def test_exit_line_says_what_the_file_holds(tmp_path):
    """The "wrote" line counts the events in the file, and names why the others are not there."""
    whole = run([NVTX_APP, "return", 3], tmp_path / "whole.json")
    recorded = load(tmp_path / "whole.json")["tfprof"]["events_recorded"]
    assert f"wrote {tmp_path / 'whole.json'} ({recorded} events; 2 threads; at exit)" in whole.stderr
    kept = run([NVTX_APP, "return", 3], tmp_path / "kept.json", TFPROF_OPTIONS="keep=last:1")
    header = load(tmp_path / "kept.json")["tfprof"]
    discarded = header["discarded_events"]
    assert 0 < discarded < header["events_recorded"] == recorded
    assert (f"wrote {tmp_path / 'kept.json'} ({recorded - discarded} of {recorded} events: "
            f"{discarded} outside the keep= window; 2 threads; at exit)") in kept.stderr


@pytest.mark.parametrize("ending, returncode", [
    ("exit", 0), ("sigterm", -signal.SIGTERM), ("sigint", -signal.SIGINT),
    ("abort", -signal.SIGABRT)])
def test_trace_written_however_the_program_ends(tmp_path, ending, returncode):
    result = run([NVTX_APP, ending, 2], tmp_path / "trace.json")
    assert result.returncode == returncode, result.stderr
    check_training_loop(load(tmp_path / "trace.json"), steps=2)


def test_abort_leaves_streamed_steps(tmp_path):
    result = run([NVTX_APP, "abort", 3], tmp_path / "trace.tfrecord")
    assert result.returncode == -signal.SIGABRT
    data = (tmp_path / "trace.tfrecord").read_bytes()
    assert data.count(b"forward") >= 3  # one RunMetadata record per step, each with its ops


@pytest.mark.parametrize("ending", ["return", "sigterm"])
def test_perfetto_output_holds_the_training_loop(tmp_path, ending):
    """TFPROF_OUTPUT=*.pftrace: Perfetto's protobuf trace, streamed; read back by tfprof (to the
    JSON the checks above read) and decoded with Perfetto's own schema."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "tools" / "tfprof"))
    from perfetto_file import decode

    result = run([NVTX_APP, ending, 3], tmp_path / "trace.pftrace")
    assert result.returncode == (0 if ending == "return" else -signal.SIGTERM), result.stderr
    converted = subprocess.run([str(BUILD / "tfprof"), "convert", str(tmp_path / "trace.pftrace"),
                                "-o", str(tmp_path / "trace.json")], capture_output=True, text=True)
    assert converted.returncode == 0, converted.stderr
    trace = load(tmp_path / "trace.json")
    check_training_loop(trace)
    decoded = decode(tmp_path / "trace.pftrace")
    (epoch,) = [s for s in decoded.slices if s.category == "range" and s.name == "data epoch"]
    threads = {t.tid: t.name for t in decoded.tracks.values() if t.tid is not None}
    assert threads[epoch.args["thread"]] == "trainer"
    assert threads[epoch.args["end thread"]] == "loader"
    assert decoded.info()["command_line"] == [str(NVTX_APP), ending, "3"]


def test_fork_child_writes_its_own_file_with_pid(tmp_path):
    result = run([NVTX_APP, "fork", 2], tmp_path / "trace.%p.json")
    assert result.returncode == 0, result.stderr
    parent_pid, child_pid = (int(word) for word in result.stdout.split("parent ")[1].split()[:3:2])
    parent = load(tmp_path / f"trace.{parent_pid}.json")
    child = load(tmp_path / f"trace.{child_pid}.json")
    check_training_loop(parent, steps=2)
    assert "child work" not in names(spans(parent))
    assert names(spans(child)) == Counter({"child work": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"trace.{parent_pid}.json", f"trace.{child_pid}.json"])


def test_fork_child_without_pid_in_output_writes_its_own_file_named_with_its_pid(tmp_path):
    # Its work is not lost (multiprocessing's and DataLoader's forked workers), and the parent's
    # file is not touched: the child's file has its pid before the extension, as an exec'd child's.
    # cuda= given: the child turns GPU tracing off all the same (CUDA is unusable in a forked
    # child of a CUDA process, and CUPTI set up there hung DataLoader workers on an H200).
    result = run([NVTX_APP, "fork", 2], tmp_path / "trace.json", TFPROF_OPTIONS="cuda=auto, flush_interval_ms=5")
    assert result.returncode == 0, result.stderr
    child_pid = int(result.stdout.split("parent ")[1].split()[2])
    child_gpu = load(tmp_path / f"trace.{child_pid}.json")["tfprof"]["gpu"]
    assert (child_gpu["state"], child_gpu["reason"]) == ("off", "cuda=off")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["trace.json", f"trace.{child_pid}.json"])
    trace = load(tmp_path / "trace.json")
    check_training_loop(trace, steps=2)
    assert "child work" not in names(spans(trace))
    assert names(spans(load(tmp_path / f"trace.{child_pid}.json"))) == Counter({"child work": 1})
    assert result.stderr.count("tfprof: wrote") == 2  # each process names its own file
    assert f"tfprof: wrote {tmp_path / f'trace.{child_pid}.json'}" in result.stderr


def test_exec_children_are_followed_unless_told_not_to(tmp_path):
    command = [NVTX_APP, "fork-exec", 1, INSTRUMENTED, 2]
    result = run(command, tmp_path / "trace.json")
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and "trace.json" in files, files
    child_file = next(name for name in files if name != "trace.json")
    child = load(tmp_path / child_file)
    assert child["tfprof"]["command_line"] == [str(INSTRUMENTED), "2"]
    assert names(spans(child))["train_step"] == 2

    quiet = tmp_path / "quiet"
    quiet.mkdir()
    result = run(command, quiet / "trace.json", TFPROF_FOLLOW_CHILDREN=0)
    assert result.returncode == 0, result.stderr
    assert [p.name for p in quiet.iterdir()] == ["trace.json"]


def test_a_child_that_records_nothing_leaves_no_trace(tmp_path):
    # Python runs `uname -p` for platform.processor() (TensorFlow does at import): no empty file
    # beside the program's trace for it, whether or not the output names the pid.
    for output in ("trace.json", "trace.%p.json"):
        directory = tmp_path / output.replace("%", "")
        directory.mkdir()
        result = run([NVTX_APP, "fork-exec", 1, "/bin/true"], directory / output, TFPROF_LOG_LEVEL="debug")
        assert result.returncode == 0, result.stderr
        assert len(list(directory.iterdir())) == 1, sorted(p.name for p in directory.iterdir())
        assert "recorded nothing: no trace written" in result.stderr


def test_instrumented_functions_are_named_and_nested(tmp_path):
    result = run([INSTRUMENTED, 4], tmp_path / "trace.json")
    assert result.returncode == 0, result.stderr
    host = spans(load(tmp_path / "trace.json"))
    counts = names(host)
    assert counts["main"] == 1
    assert counts["train_step"] == 4
    assert counts["model::Layer::Forward(int) const"] == 4
    assert counts["Fibonacci(int)"] == 4 * 15  # fib(5) makes 15 calls
    main = next(e for e in host if e["name"] == "main")
    for event in host:
        assert contains(main, event)


def test_step_marker_patterns(tmp_path):
    result = run([NVTX_APP, "return", 2], tmp_path / "none.json", TFPROF_STEP_MARKER="none")
    assert result.returncode == 0
    assert spans(load(tmp_path / "none.json"), "step") == []
    result = run([NVTX_APP, "return", 3], tmp_path / "forward.json", TFPROF_STEP_MARKER="forw*")
    assert result.returncode == 0
    steps = sorted(e["name"] for e in spans(load(tmp_path / "forward.json"), "step"))
    assert steps == ["step 0", "step 1", "step 2"]  # numbered in order: the names have no digits
    # Registered strings are matched as registered (without their domain's prefix), once each,
    # with and without a category, and every push of a marker opens its step.
    for pattern, name in (("optim*", "optimizer"), ("allred*", "MyLib: [comm] allreduce")):
        path = tmp_path / f"{name[:5]}.json"
        result = run([NVTX_APP, "return", 3], path, TFPROF_STEP_MARKER=pattern)
        assert result.returncode == 0, result.stderr
        trace = load(path)
        step_rows = sorted((e for e in spans(trace, "step")), key=lambda e: e["ts"])
        assert [e["name"] for e in step_rows] == ["step 0", "step 1", "step 2"]
        marked = sorted((e for e in spans(trace) if e["name"] == name), key=lambda e: e["ts"])
        assert len(marked) == 3
        for row, span in zip(step_rows, marked):
            assert contains(row, span)


@pytest.mark.parametrize("variable, value, expected", [
    ("TFPROF_LOG_LEVEL", "loud", "accepts off, error, warning, info or debug"),
    ("TFPROF_OUTPUT", "trace.%q.json", "accepts %p (pid), %r (rank)"),
    ("TFPROF_OUTPUT", "trace.txt", "extension"),
    ("TFPROF_OPTIONS", "bogus=1", "bogus"),
    ("TFPROF_OPTIONS", "buffer_events=3", "buffer_events"),
    ("TFPROF_STEP_MARKER", "step[", "never closed"),
    ("TFPROF_FOLLOW_CHILDREN", "maybe", "accepts 1 or 0"),
])
def test_bad_environment_values_leave_the_program_unprofiled(tmp_path, variable, value, expected):
    variables = {"TFPROF_OUTPUT": tmp_path / "trace.json", variable: value}
    result = run([NVTX_APP, "return", 1], **variables)
    assert result.returncode == 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("tfprof:")]
    assert len(lines) == 1, result.stderr
    assert variable in lines[0] and expected in lines[0] and "profiling is off" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_log_level_off_is_silent_and_rank_placeholder(tmp_path):
    result = run([NVTX_APP, "return", 1], tmp_path / "rank%r.json", TFPROF_LOG_LEVEL="off", RANK=5)
    assert result.returncode == 0 and result.stderr == ""
    check_training_loop(load(tmp_path / "rank5.json"), steps=1)


def test_entry_points_exported():
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(PRELOAD)], capture_output=True,
                             text=True, check=True).stdout.split()
    for name in ["InitializeInjection", "InitializeInjectionNvtx2", "__cyg_profile_func_enter",
                 "__cyg_profile_func_exit", "pthread_create"]:
        assert name in symbols


# Signals: the trace is written, the program ends by the signal it got, within the deadline, and
# nothing else is left in the output folder. signal_app records SIGNAL_SPANS spans (writing them as
# .json.gz takes about 0.3 s here), prints "ready", and waits to be killed.
SIGNAL_APP = BUILD / "tests" / "bindings" / "preload" / "signal_app"
SIGNAL_SPANS = 500_000
SIGNAL_OPTIONS = "cuda=off,buffer_events=4194304"  # a ring that holds the whole run: no drops


def start_signal_app(tmp_path, mode, output="trace.json.gz", **variables):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TFPROF_", "NVTX_"))}
    env.update(LD_PRELOAD=str(PRELOAD), TFPROF_OUTPUT=str(tmp_path / output),
               TFPROF_OPTIONS=SIGNAL_OPTIONS)
    env.update({k: str(v) for k, v in variables.items()})
    process = subprocess.Popen([str(SIGNAL_APP), mode, str(SIGNAL_SPANS),
                                str(tmp_path / "export.json.gz")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_signals)
    assert process.stdout.readline() == "ready\n", process.stderr.read()
    return process


def signal_and_wait(process, *signals, pause=0.1, timeout=25):
    """Sends each signal after `pause` seconds; returns (exit status, seconds from the first
    signal to the end, stderr)."""
    started = None
    for number in signals:
        time.sleep(pause)
        process.send_signal(number)
        started = started or time.monotonic()
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
        pytest.fail(f"the program hung after {signals}: {stderr}")
    return process.returncode, time.monotonic() - started, stderr


def load_gzip(path):
    with gzip.open(path, "rt") as file:
        return json.load(file)


def check_signal_trace(path):
    trace = load_gzip(path) if path.suffix == ".gz" else load(path)
    assert len(spans(trace)) == SIGNAL_SPANS and trace["dropped_events"] == 0
    return trace


@pytest.mark.skipif(not SIGNAL_APP.exists(), reason="no signal_app")
@pytest.mark.parametrize("mode, output, number", [
    ("stats", "trace.json", signal.SIGTERM),        # a streamed output: little left at the end
    ("export", "trace.json", signal.SIGINT),        # each export of .json.gz takes ~0.3 s
    ("stop", "trace.json.gz", signal.SIGHUP)])      # so does the stop's own write
def test_signal_inside_a_control_call_writes_the_trace(tmp_path, mode, output, number):
    """The signal lands on the thread that holds the session's control lock (the only thread that
    takes signals): the flush must not wait for that lock from the handler."""
    process = start_signal_app(tmp_path, mode, output)
    status, seconds, stderr = signal_and_wait(process, number)
    assert status == -number, stderr
    assert seconds < 10, f"{seconds:.1f} s: {stderr}"  # the deadline; a deadlock took 30 s
    check_signal_trace(tmp_path / output)
    # Exports finished before the signal, if any; no hidden or partial file.
    assert {p.name for p in tmp_path.iterdir()} <= {output, "export.json.gz"}
    if (tmp_path / "export.json.gz").exists():
        check_signal_trace(tmp_path / "export.json.gz")
    assert "error" not in stderr, stderr


@pytest.mark.skipif(not SIGNAL_APP.exists(), reason="no signal_app")
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_the_at_exit_write_waits_for_it(tmp_path, number):
    process = start_signal_app(tmp_path, "exit")
    status, seconds, stderr = signal_and_wait(process, number, pause=0.05)
    assert status == -number, stderr
    assert seconds < 10, stderr
    check_signal_trace(tmp_path / "trace.json.gz")
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json.gz"]


@pytest.mark.skipif(not SIGNAL_APP.exists(), reason="no signal_app")
@pytest.mark.parametrize("first, second", [(signal.SIGTERM, signal.SIGTERM),
                                           (signal.SIGTERM, signal.SIGINT),
                                           (signal.SIGINT, signal.SIGHUP)])
def test_a_second_signal_ends_at_once_and_leaves_nothing(tmp_path, first, second):
    process = start_signal_app(tmp_path, "exit")
    status, seconds, stderr = signal_and_wait(process, first, second, pause=0.05)
    # Ended by the second signal, before the trace was written (the first would have ended it
    # after), and nothing partial or hidden left.
    assert status == -second, stderr
    assert list(tmp_path.iterdir()) == [], "a partial or hidden file was left"


@pytest.mark.skipif(not SIGNAL_APP.exists(), reason="no signal_app")
def test_signal_deadline_ends_the_program_without_the_trace(tmp_path):
    process = start_signal_app(tmp_path, "exit", TFPROF_SIGNAL_DEADLINE="0.1")
    status, seconds, stderr = signal_and_wait(process, signal.SIGTERM, pause=0.02)
    assert status == -signal.SIGTERM
    assert seconds < 1.5, f"{seconds:.2f} s"
    assert "not written within 100 ms of SIGTERM (TFPROF_SIGNAL_DEADLINE)" in stderr, stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not SIGNAL_APP.exists(), reason="no signal_app")
def test_signal_deadline_zero_ends_at_once(tmp_path):
    process = start_signal_app(tmp_path, "stats", TFPROF_SIGNAL_DEADLINE="0")
    status, seconds, stderr = signal_and_wait(process, signal.SIGTERM)
    assert status == -signal.SIGTERM and seconds < 1
    assert list(tmp_path.iterdir()) == []


OWN_START_APP = BUILD / "tests" / "bindings" / "preload" / "own_start_app"


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="no valgrind")
def test_a_program_whose_own_start_failed_exits_cleanly_and_the_trace_is_written(tmp_path):
    # Its prof_start fails (the preload's session runs) and sets the thread's last error; the
    # preload's at-exit stop then runs after the thread's thread_local objects are destroyed.
    output = tmp_path / "trace.json"
    result = run(["valgrind", "-q", "--error-exitcode=99", OWN_START_APP], output, timeout=120,
                 TFPROF_OPTIONS="cuda=off")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("-3 prof_start: a profiling session is already running"), result.stdout
    assert "Invalid" not in result.stderr, result.stderr
    events = json.loads(output.read_text())["traceEvents"]
    assert [e["name"] for e in events if e.get("ph") == "X"] == ["own work"]


# ---- tfprof run --on-demand: captured while it runs ----------------------------------------------

ON_DEMAND_APP = BUILD / "tests" / "bindings" / "preload" / "on_demand_app"
TFPROF = BUILD / "tfprof"


def listening(pid):
    """Whether process `pid` waits for captures: its abstract socket is in /proc/net/unix."""
    with open("/proc/net/unix") as table:
        return any(line.split()[-1] == f"@tfprof-capture/{pid}" for line in table if "@" in line)


def wait_until(condition, what, timeout=90):
    """Generous: a loaded two-core machine can take seconds to start a process."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what() if callable(what) else what}"
        time.sleep(0.05)


class OnDemandRun:
    """`tfprof run --on-demand -- on_demand_app STOP [fork]` in the background, in `directory`."""

    def __init__(self, directory, *arguments, **variables):
        self.directory = directory
        self.stop_file = directory / "stop"
        self.stdout = directory / "app.out"
        self.stderr = directory / "app.err"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TFPROF_", "NVTX_", "LD_PRELOAD"))}
        env.update({k: str(v) for k, v in variables.items()})
        with open(self.stdout, "w") as out, open(self.stderr, "w") as err:
            self.process = subprocess.Popen(
                [str(TFPROF), "run", "--on-demand", "--preload", str(PRELOAD), "--", str(ON_DEMAND_APP),
                 str(self.stop_file), *arguments],
                env=env, stdout=out, stderr=err, cwd=directory, preexec_fn=default_signals)
        self.pid = self.process.pid  # tfprof run becomes the program (exec)

    def ready_pids(self, count):
        """The pids of the program's processes once `count` of them are in their loop and listen."""
        def pids():
            return [int(line.split()[1]) for line in self.stdout.read_text().splitlines()
                    if line.startswith("ready ")]
        wait_until(lambda: len(pids()) >= count and all(listening(pid) for pid in pids()),
                   lambda: f"{count} listening processes (exit status {self.process.poll()}, stdout "
                           f"{self.stdout.read_text()!r}, stderr {self.stderr.read_text()!r})")
        return pids()

    def finish(self):
        self.stop_file.touch()
        returncode = self.process.wait(timeout=60)
        return returncode, self.stderr.read_text()

    def kill(self):
        if self.process.poll() is None:
            self.stop_file.touch()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def on_demand(tmp_path):
    runs = []

    def start(*arguments, **variables):
        runs.append(OnDemandRun(tmp_path, *arguments, **variables))
        return runs[-1]

    yield start
    for run_ in runs:
        run_.kill()


def capture(*arguments, timeout=120):
    result = subprocess.run([str(TFPROF), "capture", *map(str, arguments)], capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def check_captured_steps(trace, steps, prefix=""):
    """`steps` whole steps of on_demand_app, consecutive, each holding its own forward and
    backward; the idle ranges between them, none before the first or after the last. Returns the
    step numbers."""
    rows = sorted(spans(trace, "step"), key=lambda e: e["ts"])
    numbers = [int(row["name"].split()[-1]) for row in rows]
    assert len(numbers) == steps and numbers == list(range(numbers[0], numbers[0] + steps)), numbers
    host = spans(trace)
    counts = names(host)
    assert counts[f"{prefix}forward"] == steps and counts[f"{prefix}backward"] == steps, counts
    assert counts["idle"] == steps - 1, counts
    assert [counts[f"step {n}"] for n in numbers] == [1] * steps  # the NVTX ranges themselves
    for row, number in zip(rows, numbers):
        inside = [e["name"] for e in host if contains(row, e)]
        assert sorted(inside) == sorted([f"step {number}", f"{prefix}forward", f"{prefix}backward"]), inside
    for event in host:
        if event["name"] != "idle":
            assert any(contains(row, event) for row in rows), event
    # The program has one thread: the threads the capture's session starts (its collector, the
    # stream's writer) are tfprof's, never a "thread start" of the program's.
    assert not [e for e in trace["traceEvents"] if e.get("ph") == "i" and e["name"] == "thread start"]
    return numbers


def test_a_sessions_own_threads_are_not_the_programs(tmp_path):
    # A whole run streams its JSON: the collector starts the writer thread some 20 ms in, from a
    # thread of tfprof's. The one-thread program's trace shows no thread start.
    stop = tmp_path / "stop"
    output = tmp_path / "whole.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TFPROF_", "NVTX_"))}
    env.update(LD_PRELOAD=str(PRELOAD), TFPROF_OUTPUT=str(output))
    process = subprocess.Popen([str(ON_DEMAND_APP), str(stop)], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    time.sleep(0.5)
    stop.touch()
    process.communicate(timeout=60)
    assert process.returncode == 0
    trace = load(output)
    assert spans(trace, "step")
    assert not [e for e in trace["traceEvents"] if e.get("ph") == "i" and e["name"] == "thread start"]


def test_on_demand_program_is_captured_three_times_with_whole_steps_only(tmp_path, on_demand):
    run_ = on_demand()
    [pid] = run_.ready_pids(1)
    assert pid == run_.pid
    last = -1
    for number, steps in enumerate((3, 1, 5)):
        output = tmp_path / f"capture{number}.json"
        result = capture(pid, "--steps", steps, "-o", output)
        assert result.stdout.strip().splitlines()[-1] == str(output)
        trace = load(output)
        numbers = check_captured_steps(trace, steps)
        assert numbers[0] > last  # each capture records steps after the previous one's
        last = numbers[-1]
        assert trace["tfprof"]["command_line"][0] == str(ON_DEMAND_APP)
    returncode, stderr = run_.finish()
    assert returncode == 0, stderr
    assert f"tfprof: process {pid} waits for `tfprof capture {pid}`" in stderr
    assert "tfprof: wrote" not in stderr  # no trace at exit
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["app.err", "app.out", "stop", "capture0.json", "capture1.json", "capture2.json"])


def test_on_demand_fork_child_is_captured_by_its_own_pid_and_all_finds_both(tmp_path, on_demand):
    run_ = on_demand("fork", TFPROF_OPTIONS="cuda=auto")
    pids = run_.ready_pids(2)
    parent, child = run_.pid, next(pid for pid in pids if pid != run_.pid)
    child_trace = load(capture(child, "--steps", 2, "-o", tmp_path / "child.json").stdout.split()[-1])
    check_captured_steps(child_trace, 2, prefix="child ")
    # GPU tracing stays off in a forked child, as when the whole run is traced.
    assert child_trace["tfprof"]["gpu"]["state"] == "off"
    # Every listening process of this user: ours, and any other test's running now.
    result = subprocess.run([str(TFPROF), "capture", "--all", "--steps", "2", "-o", str(tmp_path / "all-%p.json")],
                            capture_output=True, text=True, timeout=180)
    for pid, prefix in ((parent, ""), (child, "child ")):
        path = tmp_path / f"all-{pid}.json"
        assert str(path) in result.stdout.split(), result.stdout + result.stderr
        check_captured_steps(load(path), 2, prefix=prefix)
    returncode, stderr = run_.finish()
    assert returncode == 0, stderr
