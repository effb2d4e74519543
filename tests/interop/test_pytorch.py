"""Unmodified PyTorch programs under `tfprof run` (real torch from PyPI, on the CPU): steps from
the optimizer, DataLoader waits as input waits, module spans under their step, record_function
ranges; a program that starts its own tfprof.trace, and one that runs torch.profiler too. And
`tfprof.trace(frameworks="torch")` in code, whose hooks go away with the session."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

import pytest

# Only whether torch is installed: importing it here, beside the TensorFlow other tests load into
# this process, aborts; every program here runs torch in a process of its own.
if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed", allow_module_level=True)

import tfprof  # noqa: E402
from framework_runs import PROGRAMS, TFPROF, input_share, inside, run_in_code_program, spans, summary  # noqa: E402
from framework_runs import run_under_tfprof as run_program  # noqa: E402

STEPS = 12
FETCH = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def run_under_tfprof(tmp_path: pathlib.Path, *arguments: str, output: str = "trace.json",
                     env: Dict[str, str] | None = None,
                     log_level: str = "warning") -> Tuple[pathlib.Path, subprocess.CompletedProcess[str]]:
    trace, result = run_program(tmp_path, "torch_train.py", ["--steps", str(STEPS), *arguments], output=output,
                                env=env, log_level=log_level)
    assert f"trained {STEPS} steps" in result.stdout
    return trace, result


def test_a_slow_dataloader_is_diagnosed_input_bound_with_one_step_per_optimizer_step(tmp_path):
    trace, result = run_under_tfprof(tmp_path, "--input-ms", "2", log_level="info")
    assert result.stderr.count("tfprof: recording PyTorch's steps, modules and input waits") == 1
    report = summary(trace)
    assert [s["number"] for s in report["steps"]] == list(range(STEPS))
    assert input_share(report["steps"]) > 0.5
    assert "input_bound" in [f["kind"] for f in report["findings"]]
    fetches = [e for e in spans(trace) if e["name"] == FETCH]
    assert len(fetches) == STEPS + 1  # the last fetch ends the epoch, in no step


def test_a_slow_dataloader_with_worker_processes_is_input_bound_too(tmp_path):
    trace, _ = run_under_tfprof(tmp_path, "--input-ms", "4", "--workers", "2")
    report = summary(trace)
    assert [s["number"] for s in report["steps"]] == list(range(STEPS))
    assert "input_bound" in [f["kind"] for f in report["findings"]]


def test_a_fast_loop_is_not_input_bound(tmp_path):
    trace, result = run_under_tfprof(tmp_path)
    assert "recording PyTorch" not in result.stderr  # --log-level warning: no info lines
    report = summary(trace)
    assert len(report["steps"]) == STEPS
    assert input_share(report["steps"]) < 0.1
    assert "input_bound" not in [f["kind"] for f in report["findings"]]


def test_module_spans_nest_in_their_step_down_to_the_depth_limit(tmp_path):
    trace, _ = run_under_tfprof(tmp_path, "--record-function")
    events = spans(trace)
    steps = sorted((e for e in events if e.get("cat") == "step"), key=lambda e: e["ts"])
    assert len(steps) == STEPS
    by_name: Dict[str, List[Dict[str, Any]]] = {}
    for event in events:
        by_name.setdefault(event["name"], []).append(event)
    expected = ["Net", "Net.encoder: Sequential", "Net.encoder.0: Linear", "Net.encoder.1: ReLU",
                "Net.encoder.2: Linear", "Net.encoder.3: ReLU", "Net.head: Linear", "CrossEntropyLoss",
                "backward", "loss", "Optimizer.step#SGD.step", FETCH]
    for name in expected:
        assert name in by_name, sorted(by_name)
    for name in expected[:-1]:
        assert len(by_name[name]) == STEPS, name
        for event in by_name[name]:
            assert any(inside(event, step) for step in steps), f"{name} at {event['ts']} is in no step"
    for linear in by_name["Net.encoder.0: Linear"]:
        sequential = [s for s in by_name["Net.encoder: Sequential"] if inside(linear, s)]
        assert len(sequential) == 1 and any(inside(sequential[0], net) for net in by_name["Net"])
    # The loss is computed inside the loss's record_function range, called at the top (depth 0).
    for loss in by_name["CrossEntropyLoss"]:
        assert any(inside(loss, r) for r in by_name["loss"])
    # Each layer with weights has its own backward op's span, inside the pass, in the reverse of
    # the forward order; containers and layers without weights (ReLU, the loss) get none.
    leaves = ["Net.head: Linear", "Net.encoder.2: Linear", "Net.encoder.0: Linear"]
    for index, backward in enumerate(sorted(by_name["backward"], key=lambda e: e["ts"])):
        inner = sorted((e for e in events if e["name"].endswith(" (backward)") and inside(e, backward)),
                       key=lambda e: e["ts"])
        assert [e["name"] for e in inner] == [f"{leaf} (backward)" for leaf in leaves], index
        assert all(e["tid"] == backward["tid"] for e in inner)
    assert not {"Net (backward)", "Net.encoder: Sequential (backward)", "Net.encoder.1: ReLU (backward)",
                "CrossEntropyLoss (backward)"} & set(by_name)


def test_module_depth_1_records_the_models_only(tmp_path):
    trace, _ = run_under_tfprof(tmp_path, env={"TFPROF_MODULE_DEPTH": "1"})
    names = {e["name"] for e in spans(trace) if e.get("cat") != "step"}
    assert "Net" in names and "CrossEntropyLoss" in names
    assert not [n for n in names if n.startswith("Net.")]


def test_nvtx_step_ranges_of_the_program_are_its_steps_and_the_optimizer_marks_none(tmp_path):
    pytest.importorskip("nvtx")
    trace, _ = run_under_tfprof(tmp_path, "--nvtx-steps", "--input-ms", "2")
    report = summary(trace)
    assert [s["number"] for s in report["steps"]] == list(range(STEPS))
    assert "input_bound" in [f["kind"] for f in report["findings"]]


def test_a_program_with_its_own_trace_joins_the_running_session(tmp_path):
    own = tmp_path / "own.json"
    trace, result = run_under_tfprof(tmp_path, "--own-trace", str(own))
    assert result.stderr.count("tfprof.trace: joining the session `tfprof run` started") == 1
    assert "Traceback" not in result.stderr
    assert len(summary(trace)["steps"]) == STEPS
    assert len(summary(own)["steps"]) == STEPS


def test_torch_profiler_and_tfprof_in_one_process_both_complete(tmp_path):
    profiler_directory = tmp_path / "torch_profiler"
    trace, _ = run_under_tfprof(tmp_path, "--profiler", str(profiler_directory))
    torch_traces = list(profiler_directory.glob("*.json"))
    assert len(torch_traces) == 1
    torch_events = json.loads(torch_traces[0].read_text())["traceEvents"]
    profiler_steps = sorted(int(e["name"].split("#")[1]) for e in torch_events
                            if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    assert profiler_steps == list(range(STEPS))
    assert any(e.get("name") == FETCH for e in torch_events)
    # tfprof's steps are torch.profiler's, numbered as it numbers them, one each.
    assert [s["number"] for s in summary(trace)["steps"]] == profiler_steps
    names = {e["name"] for e in spans(trace)}
    assert "Net" in names and FETCH in names and not [n for n in names if n.startswith("ProfilerStep#")]


def test_torch_ops_on_folds_aten_ops_into_the_steps_without_doubling_ranges(tmp_path):
    trace, result = run_under_tfprof(tmp_path, "--record-function", env={"TFPROF_TORCH_OPS": "on"},
                                     log_level="info")
    assert result.stderr.count("tfprof: added torch.profiler's aten ops to") == 1
    events = spans(trace)
    steps = [e for e in events if e.get("cat") == "step"]
    assert len(steps) == STEPS
    addmm = [e for e in events if e["name"] == "aten::addmm"]
    assert len(addmm) >= 3 * STEPS  # three Linear layers a step (more in backward)
    assert all(any(inside(op, step) for step in steps) for op in addmm)
    names = [e["name"] for e in events]
    # Ranges both would record are torch.profiler's alone; module spans are tfprof's.
    assert names.count("loss") == STEPS and names.count("Optimizer.step#SGD.step") == STEPS
    assert names.count("Net") == STEPS
    assert not list(tmp_path.glob(".tfprof-*"))


def test_torch_ops_yield_to_the_programs_own_torch_profiler(tmp_path):
    profiler_directory = tmp_path / "torch_profiler"
    trace, result = run_under_tfprof(tmp_path, "--profiler", str(profiler_directory),
                                     env={"TFPROF_TORCH_OPS": "on"})
    assert "did not start" not in result.stderr
    assert len(list(profiler_directory.glob("*.json"))) == 1
    assert [s["number"] for s in summary(trace)["steps"]] == list(range(STEPS))
    # The program's profiler ran through every step: tfprof's never started, and its own spans
    # stand (the ops are in the program's trace).
    names = {e["name"] for e in spans(trace)}
    assert not [n for n in names if n.startswith("aten::")]
    assert "Net" in names and FETCH in names


def listening(pid: int) -> bool:
    """Whether process `pid` waits for `tfprof capture`: its abstract socket is in /proc/net/unix."""
    with open("/proc/net/unix") as table:
        return any(line.split()[-1] == f"@tfprof-capture/{pid}" for line in table if "@" in line)


def test_an_on_demand_training_loop_is_captured_twice_with_whole_steps_and_their_layers(tmp_path):
    stop = tmp_path / "stop"
    out, err = tmp_path / "program.out", tmp_path / "program.err"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        program = subprocess.Popen([TFPROF, "run", "--on-demand", "--log-level", "info", "--", sys.executable,
                                    str(PROGRAMS / "torch_train.py"), "--steps", str(STEPS), "--hidden", "256",
                                    "--until", str(stop)],
                                   stdout=stdout, stderr=stderr, cwd=tmp_path)
    try:
        # Generous: importing torch on a loaded two-core machine takes a while.
        deadline = time.monotonic() + 240
        while not ("training" in out.read_text() and listening(program.pid)):
            assert program.poll() is None and time.monotonic() < deadline, err.read_text()
            time.sleep(0.1)
        first_steps: List[int] = []
        for capture in range(2):
            output = tmp_path / f"capture{capture}.json"
            result = subprocess.run([TFPROF, "capture", str(program.pid), "--steps", "3", "-o", str(output)],
                                    capture_output=True, text=True, timeout=180)
            assert result.returncode == 0, result.stdout + result.stderr
            assert result.stdout.split() == [str(output)]
            events = spans(output)
            steps = sorted((e for e in events if e.get("cat") == "step"), key=lambda e: e["ts"])
            numbers = [int(s["name"].split()[-1]) for s in steps]
            assert len(numbers) == 3 and numbers == list(range(numbers[0], numbers[0] + 3)), numbers
            first_steps.append(numbers[0])
            # Each step whole: its fetch, the model's layers, the backward pass and the optimizer.
            for name in ("Net", "Net.encoder: Sequential", "Net.encoder.0: Linear", "Net.head: Linear",
                         "CrossEntropyLoss", "backward", "Net.head: Linear (backward)", "Optimizer.step#SGD.step",
                         FETCH):
                assert [sum(1 for e in events if e["name"] == name and inside(e, step)) for step in steps] == \
                    [1, 1, 1], name
            # Outside every step: only the fetch that found an epoch's end (the step it opened is
            # withdrawn; the capture may even have begun with it), never after the last step.
            outside = [e for e in events if not any(inside(e, step) for step in steps)]
            assert all(e["name"] == FETCH and e["ts"] < steps[-1]["ts"] for e in outside), outside
            assert len(outside) <= 1, outside
            # The threads the capture's session starts with it (the collector) are tfprof's: no
            # "thread start" of the program's while the first step runs.
            assert not [e for e in json.loads(output.read_text())["traceEvents"]
                        if e.get("ph") == "i" and e["name"] == "thread start"
                        and e["ts"] < steps[0]["ts"] + steps[0]["dur"]]
        assert first_steps[1] > first_steps[0] + 2
        stop.touch()
        assert program.wait(timeout=120) == 0, err.read_text()
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
    stderr_text = err.read_text()
    assert f"tfprof: process {program.pid} waits for `tfprof capture {program.pid}`" in stderr_text
    assert "tfprof: recording PyTorch's steps" in stderr_text
    assert "tfprof: wrote" not in stderr_text and "Traceback" not in stderr_text
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "capture0.json", "capture1.json", "program.err", "program.out", "stop"]


def test_on_demand_leaves_out_what_folds_a_whole_run_profile_at_exit(tmp_path):
    result = subprocess.run([TFPROF, "run", "--on-demand", "--", sys.executable, str(PROGRAMS / "torch_train.py"),
                             "--steps", "3", "--hidden", "32"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env={**os.environ, "TFPROF_TORCH_OPS": "on"})
    assert result.returncode == 0, result.stderr
    assert "tfprof: TFPROF_TORCH_OPS=on is ignored with --on-demand" in result.stderr
    assert "aten ops" not in result.stderr  # torch.profiler never started, nothing was folded
    assert list(tmp_path.iterdir()) == []  # no trace, no folded profile


IN_CODE_PROGRAM = """
import json, sys, torch, tfprof
from torch.nn.modules import module as nn_module
from torch.optim import optimizer as optim

def hook_counts():
    return [len(nn_module._global_forward_pre_hooks), len(optim._global_optimizer_post_hooks),
            len(optim._global_optimizer_pre_hooks)]

before = hook_counts()
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
sgd = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(24, 4), torch.randn(24, 1)),
                                   batch_size=4)
with tfprof.trace(sys.argv[1], frameworks="torch", cuda="off"):
    during = hook_counts()
    for inputs, targets in data:
        sgd.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        sgd.step()
print(json.dumps({"before": before, "during": during, "after": hook_counts(),
                  "module_hooks_after": len(model._forward_pre_hooks) + len(model[0]._forward_hooks)}))
"""


def test_trace_frameworks_in_code_records_steps_and_removes_its_hooks(tmp_path):
    # In a process of its own: TensorFlow, which other tests here load, and torch abort together.
    hooks, output = run_in_code_program(tmp_path, IN_CODE_PROGRAM)
    assert hooks["during"] != hooks["before"]
    assert hooks["after"] == hooks["before"]  # the session's end removed every global hook
    assert hooks["module_hooks_after"] == 0  # and the model's own
    report = summary(output)
    assert [s["number"] for s in report["steps"]] == list(range(6))
    assert {"Sequential", "Sequential.0: Linear", "backward"} <= {e["name"] for e in spans(output)}


def test_frameworks_option_is_checked():
    with pytest.raises(ValueError, match="unknown framework"):
        tfprof.trace(frameworks="tensorflowx")
    with pytest.raises(ValueError, match="module_depth"):
        tfprof.trace(frameworks="torch", module_depth=-1)
