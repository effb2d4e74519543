"""`tfprof run`: the console script, its errors and exit statuses, and an unmodified NVTX program
traced through the preload library."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import sysconfig
from typing import Any, Dict, List

import pytest

import tfprof
from trace_file import ParsedTrace, interval_ns, read_trace

TFPROF = os.path.join(sysconfig.get_path("scripts"), "tfprof")
TRAINING_SCRIPT = pathlib.Path(__file__).parent / "nvtx_training_script.py"
PACKAGED_PRELOAD = os.path.join(os.path.dirname(tfprof.__file__), "libtfprof_preload.so")

SANITIZER_RUNTIMES = ("libasan.", "libhwasan.", "libmsan.", "libtsan.", "libubsan.", "libclang_rt.")

# A child that prints the environment `tfprof run` prepared for it.
PRINT_ENVIRONMENT = (
    "import json, os; print(json.dumps({key: os.environ.get(key) for key in ("
    "'LD_PRELOAD', 'TFPROF_OUTPUT', 'TFPROF_OPTIONS', 'TFPROF_STEP_MARKER', 'TFPROF_LOG_LEVEL', "
    "'TFPROF_FOLLOW_CHILDREN', 'TFPROF_SIGNAL_DEADLINE', 'TFPROF_ON_DEMAND')}))"
)


def tfprof_command(*arguments: Any, **options: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TFPROF, *map(str, arguments)], capture_output=True, text=True, timeout=120,
                          **options)


def spans_named(trace: ParsedTrace, name: str) -> List[Dict[str, Any]]:
    return sorted((event for event in trace.with_phase("X") if event["name"] == name),
                  key=lambda event: event["ts"])


def test_help_lists_the_commands_and_run_describes_its_options():
    result = tfprof_command("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tfprof ")
    assert "\n  run " in result.stdout
    result = tfprof_command("run", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tfprof run [OPTIONS] [--] COMMAND [ARGS...]")
    for option in ("--output", "--options", "--step-marker", "--log-level", "--no-follow-children",
                   "--on-demand", "--signal-deadline", "--preload", "--frameworks"):
        assert option in result.stdout


def test_version_is_the_packages():
    result = tfprof_command("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"tfprof {tfprof.__version__}\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((), "usage: tfprof "),
        (("frobnicate",), "tfprof: unknown command 'frobnicate'"),
        (("run", "--log-level", "verbose", "--", "true"),
         "tfprof run: --log-level 'verbose' is not one of off, error, warning, info, debug"),
        (("run", "-o", "trace.json"), "tfprof run: no command given"),
        (("run", "-o", "trace.json", "--"), "tfprof run: no command given"),
        (("run", "--output"), "tfprof run: --output needs a value"),
        (("run", "--colour", "--", "true"), "tfprof run: unknown option '--colour'"),
        (("run", "--on-demand", "-o", "trace.json", "--", "true"),
         "tfprof run: --output does not go with --on-demand: the program writes no trace of its own"),
        (("run", "--on-demand=yes", "--", "true"), "tfprof run: --on-demand takes no value"),
    ],
)
def test_usage_errors_exit_2_naming_the_problem(tmp_path, arguments, message):
    result = tfprof_command(*arguments, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert "--help" in result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing ran


def test_a_preload_library_that_is_not_there_is_named(tmp_path):
    missing = tmp_path / "libmissing.so"
    result = tfprof_command("run", "--preload", missing, "--", "true")
    assert result.returncode == 2
    assert "tfprof run: cannot find the preload library" in result.stderr
    assert f"\n  {missing}\n" in result.stderr
    result = tfprof_command("run", "--", "true", env={**os.environ, "TFPROF_PRELOAD": str(missing)})
    assert result.returncode == 2
    assert "TFPROF_PRELOAD" in result.stderr and str(missing) in result.stderr


def test_an_output_directory_that_does_not_exist_is_an_error_before_the_command_runs(tmp_path):
    result = tfprof_command("run", "-o", "missing/trace.json", "--", "touch", "ran", cwd=tmp_path)
    assert result.returncode == 2
    assert f"tfprof run: cannot write the trace into '{os.path.realpath(tmp_path)}/missing': no such directory" \
        in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_command_that_is_not_found_exits_127_and_one_not_executable_126(tmp_path):
    result = tfprof_command("run", "-o", "trace.json", "--", "tfprof-no-such-command", cwd=tmp_path)
    assert result.returncode == 127
    assert "tfprof run: cannot run 'tfprof-no-such-command': No such file or directory" in result.stderr
    not_executable = tmp_path / "data.txt"
    not_executable.write_text("not a program\n")
    result = tfprof_command("run", "-o", "trace.json", not_executable, cwd=tmp_path)
    assert result.returncode == 126
    assert f"tfprof run: cannot run '{not_executable}': Permission denied" in result.stderr


def test_the_exit_status_and_the_signal_are_the_commands(tmp_path):
    result = tfprof_command("run", "-o", "exit.json", "--", sys.executable, "-c",
                            "import sys; sys.exit(3)", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    result = tfprof_command("run", "-o", "killed.json", "--", sys.executable, "-c",
                            "import os, signal; os.kill(os.getpid(), signal.SIGTERM)", cwd=tmp_path)
    assert result.returncode == -signal.SIGTERM, result.stderr


def test_the_command_replaces_tfprof_in_the_same_process(tmp_path):
    process = subprocess.Popen([TFPROF, "run", "-o", "trace-%p.json", sys.executable, "-c", "pass"],
                               cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    _, errors = process.communicate(timeout=120)
    assert process.returncode == 0, errors
    assert [path.name for path in tmp_path.iterdir()] == [f"trace-{process.pid}.json"]


def test_options_become_the_preload_librarys_environment(tmp_path):
    # Entries already preloaded stay, after the preload library; a sanitizer runtime (the ASan
    # run of this suite preloads one) stays first, as it must.
    inherited = os.environ.get("LD_PRELOAD", "").replace(":", " ").split()
    sanitizers = [path for path in inherited if os.path.basename(path).startswith(SANITIZER_RUNTIMES)]
    others = [path for path in inherited if path not in sanitizers] + [tfprof.library_path()]
    (tmp_path / "out").mkdir()
    result = tfprof_command(
        "run", "-o", "out/trace.json.gz", "--options", "buffer_events=1024",
        "--step-marker=iteration *,epoch*", "--log-level", "error", "--no-follow-children",
        "--signal-deadline", "2.5", sys.executable, "-c", PRINT_ENVIRONMENT,
        cwd=tmp_path, env={**os.environ, "LD_PRELOAD": " ".join(inherited + [tfprof.library_path()])})
    assert result.returncode == 0, result.stderr
    environment: Dict[str, str] = json.loads(result.stdout)
    preloaded: List[str] = environment["LD_PRELOAD"].split(":")
    assert preloaded[: len(sanitizers)] == sanitizers
    assert os.path.realpath(preloaded[len(sanitizers)]) == os.path.realpath(PACKAGED_PRELOAD)
    assert preloaded[len(sanitizers) + 1 :] == others
    # The output is made absolute: the program and its children write where it was asked for.
    assert environment["TFPROF_OUTPUT"] == os.path.join(os.path.realpath(tmp_path), "out/trace.json.gz")
    assert environment["TFPROF_OPTIONS"] == "buffer_events=1024"
    assert environment["TFPROF_STEP_MARKER"] == "iteration *,epoch*"
    assert environment["TFPROF_LOG_LEVEL"] == "error"
    assert environment["TFPROF_FOLLOW_CHILDREN"] == "0"
    assert environment["TFPROF_SIGNAL_DEADLINE"] == "2.5"
    assert environment["TFPROF_ON_DEMAND"] is None

    result = tfprof_command("run", "--on-demand", sys.executable, "-c", PRINT_ENVIRONMENT, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["TFPROF_ON_DEMAND"] == "1"


def test_the_command_does_not_inherit_pythons_ignored_signals(tmp_path):
    # The console script is Python, which ignores SIGPIPE; `cmd | head` must still end `cmd`.
    result = tfprof_command("run", "-o", "trace.json", "--", "cat", "/proc/self/status", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    ignored = int(next(line.split()[1] for line in result.stdout.splitlines()
                       if line.startswith("SigIgn:")), 16)
    for number in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (number - 1)), f"{signal.Signals(number).name} is ignored"


def test_an_nvtx_program_is_traced_with_its_steps_spans_and_command_line(tmp_path):
    command = [sys.executable, str(TRAINING_SCRIPT), "--steps", "4"]
    (tmp_path / "traces").mkdir()
    result = tfprof_command("run", "-o", "traces/trace.json", "--", *command, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "trained 4 steps\n"
    trace = read_trace(tmp_path / "traces" / "trace.json")

    steps = trace.steps()
    assert [step["args"]["step"] for step in steps] == [0, 1, 2, 3]
    for name in ("forward", "backward"):
        spans = spans_named(trace, name)
        assert [span["args"]["step"] for span in spans] == [0, 1, 2, 3], name
        for step, span in zip(steps, spans):
            step_begin, step_end = interval_ns(step)
            span_begin, span_end = interval_ns(span)
            assert step_begin <= span_begin and span_end <= step_end, (name, step, span)
    for forward, backward in zip(spans_named(trace, "forward"), spans_named(trace, "backward")):
        assert forward["tid"] == backward["tid"]
        assert interval_ns(forward)[1] <= interval_ns(backward)[0]
    assert trace.raw["tfprof"]["command_line"] == command
