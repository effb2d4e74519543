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
    files = sorted(path.name for path in (logs / "a").iterdir())
    assert len(files) == 2
    trace = summary_json(tfprof_exe, logs / "a")
    assert [step["number"] for step in trace["steps"]] == [1, 2, 3, 4]
    ops = {op["name"] for op in trace["top_ops_by_self"]}
    assert ops == {"op1", "op2", "op3", "op4"}
