"""Steps of real framework runs, counted exactly: one per batch, every batch's work inside its
step, and no step for a framework's warm-up or set-up.

TensorFlow 2.21 and Keras 3 under `tfprof.trace(tensorflow=True)` (steps from TensorFlow's own
profile): model.fit over 40 batches of numpy arrays with Adam (whose first call runs tf.function's
variable-initialisation function), over a tf.data pipeline of unknown size (whose epoch ends on a
call that finds it exhausted), and a tf.function loop marked with
tf.profiler.experimental.Trace("train", step_num=i, _r=1). PyTorch: torch.profiler's schedule
leaves its wait and warm-up iterations out of its own trace, while tfprof records every iteration
as a step."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Dict, List

import pytest

from framework_runs import inside, run_in_code_program, spans, steps_of, summary

BATCHES = 40

KERAS_PROGRAM = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, tensorflow as tf, keras, tfprof

BATCHES, BATCH = %d, 8
x = np.random.default_rng(0).normal(size=(BATCHES * BATCH, 4)).astype("float32")
y = x.sum(axis=1, keepdims=True)

def model():
    m = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")  # slot variables: created by the first call
    return m

paths = {name: sys.argv[1] + "." + name + ".json" for name in ("numpy", "tf_data", "marked_loop")}
with tfprof.trace(paths["numpy"], tensorflow=True, cuda="off"):
    model().fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
with tfprof.trace(paths["tf_data"], tensorflow=True, cuda="off"):
    data = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: True)  # unknown size
    model().fit(data.batch(BATCH).prefetch(2), epochs=1, verbose=0)
with tfprof.trace(paths["marked_loop"], tensorflow=True, cuda="off"):
    w = tf.Variable(tf.ones((4, 1)))

    @tf.function
    def train_step(a, b):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((a @ w - b) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))

    for i, (a, b) in enumerate(tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            train_step(a, b)
print(json.dumps(paths))
""" % BATCHES


@pytest.fixture(scope="module")
def keras_runs(tmp_path_factory) -> Dict[str, pathlib.Path]:
    """The three TensorFlow runs, in one process (TensorFlow is imported once)."""
    pytest.importorskip("keras")
    paths, _ = run_in_code_program(tmp_path_factory.mktemp("keras_steps"), KERAS_PROGRAM)
    return {name: pathlib.Path(path) for name, path in paths.items()}


def named(trace: pathlib.Path, prefix: str) -> List[Dict[str, Any]]:
    return [e for e in spans(trace) if e["name"].startswith(prefix)]


def per_step(events: List[Dict[str, Any]], steps: List[Dict[str, Any]]) -> List[int]:
    return [sum(inside(e, step) for e in events) for step in steps]


def test_a_keras_fit_has_one_step_per_batch_and_its_setup_in_the_first(keras_runs):
    trace = keras_runs["numpy"]
    steps = steps_of(trace)
    assert [s["args"]["step"] for s in steps] == list(range(BATCHES))
    # Each batch's fetch and its function's execution lie in their own step.
    fetches = named(trace, "IteratorGetNextOp::DoCompute")
    assert len(fetches) == BATCHES and per_step(fetches, steps) == [1] * BATCHES
    runs = named(trace, "EagerLocalExecute: __inference_multi_step_on_iterator_")
    assert len(runs) == BATCHES and per_step(runs, steps) == [1] * BATCHES
    # The first call traces the function and runs the variable initialisation tf.function lifted
    # out of it: both inside step 0, no step of their own.
    (initialisation,) = named(trace, "EagerLocalExecute: __inference_initialize_variables_")
    assert inside(initialisation, steps[0])
    tracing = named(trace, "tf.function-graph_building")
    assert any(inside(t, steps[0]) for t in tracing)
    assert steps[0]["dur"] > 10 * max(s["dur"] for s in steps[1:])
    report = summary(trace)
    assert len(report["steps"]) == BATCHES
    assert report["before_first_step_ns"] > 0  # building the model, counted apart


def test_a_tf_data_fit_of_unknown_size_ends_on_a_fetch_that_is_no_step(keras_runs):
    trace = keras_runs["tf_data"]
    steps = steps_of(trace)
    assert [s["args"]["step"] for s in steps] == list(range(BATCHES))
    fetches = sorted(named(trace, "IteratorGetNextOp::DoCompute"), key=lambda e: e["ts"])
    assert len(fetches) == BATCHES + 1  # the last one finds the data exhausted
    assert per_step(fetches[:-1], steps) == [1] * BATCHES
    assert not any(inside(fetches[-1], step) for step in steps)
    assert len(summary(trace)["steps"]) == BATCHES


def test_a_marked_loop_keeps_its_markers_numbers(keras_runs):
    trace = keras_runs["marked_loop"]
    steps = steps_of(trace)
    assert [s["args"]["step"] for s in steps] == list(range(BATCHES))
    assert not [e for e in spans(trace) if e["name"] == "train"]  # the markers are the steps
    # Each marked step holds its function's call and the function run the call made.
    for name in ("train_step", "FunctionRun"):
        assert per_step([e for e in spans(trace) if e["name"] == name], steps) == [1] * BATCHES


TORCH_PROGRAM = """
import json, sys, warnings
import torch, tfprof
from torch import nn

warnings.filterwarnings("ignore", module="torch.profiler")
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
exported = sys.argv[1] + ".torch.json"
with tfprof.trace(sys.argv[1], frameworks="torch", cuda="off"):
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(exported)) as profiler:
        for _ in range(8):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            profiler.step()
print(json.dumps({"exported": exported}))
"""


def test_torch_profiler_schedule_records_its_active_steps_and_tfprof_every_iteration(tmp_path):
    pytest.importorskip("torch")
    printed, trace = run_in_code_program(tmp_path, TORCH_PROGRAM)
    # tfprof: one step per iteration, numbered as torch.profiler numbers them (ProfilerStep#N).
    assert [s["args"]["step"] for s in steps_of(trace)] == list(range(8))
    # torch.profiler's own trace holds its active iterations only: wait (0) and warm-up (1) are
    # not in it, so not steps of it; the three it has are all there is.
    exported = pathlib.Path(printed["exported"])
    names = {e["name"] for e in json.loads(exported.read_text())["traceEvents"]
             if str(e.get("name", "")).startswith("ProfilerStep#")}
    assert names == {"ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"}
    report = summary(exported)
    assert [s["number"] for s in report["steps"]] == [2, 3, 4]
