"""Unmodified Keras 3 and JAX programs under `tfprof run` (real TensorFlow, Keras and JAX from
PyPI, on the CPU): a step per batch of fit, evaluate and predict, labelled by the batch's function
span; the exhausted fetch that ends a first epoch of unknown size is no step; tf.data input waits
from TensorFlow's profiler folded in at exit, which a program's own TensorFlow profile pauses;
JAX's StepTraceAnnotation and TraceAnnotation as steps and spans. And
`tfprof.trace(frameworks="keras")` in code, whose hooks go away with the session."""

from __future__ import annotations

import pathlib

import pytest

pytest.importorskip("keras")

from framework_runs import (finding_kinds, input_share, inside, run_in_code_program, run_under_tfprof,  # noqa: E402
                            spans, steps_of, summary)

KERAS = "keras_fit.py"
TF_INPUT_OP = "IteratorGetNextOp::DoCompute"


def function_spans(trace: pathlib.Path, phase: str):
    return [e for e in spans(trace) if e["name"] == f"{phase}_function"]


def test_a_slow_tf_data_fit_is_input_bound_with_one_step_per_batch(tmp_path):
    # Unknown size: the epoch ends on a ninth fetch that finds the data exhausted.
    trace, result = run_under_tfprof(tmp_path, KERAS, ["--steps", "8", "--input-ms", "30", "--unknown-size"],
                                     log_level="info")
    assert "trained 8 steps" in result.stdout
    assert result.stderr.count("tfprof: recording Keras' steps") == 1
    assert "recording JAX" not in result.stderr  # Keras imports JAX, the program uses none of it
    assert result.stderr.count("tfprof: added TensorFlow's profile (tf.data input waits, ops) to") == 1
    report = summary(trace)
    assert [s["number"] for s in report["steps"]] == list(range(8))
    assert input_share(report["steps"][1:]) > 0.5  # the first also traces and compiles
    assert finding_kinds(report)[0] == "input_bound"
    assert "tf.data" in report["findings"][0]["recommendations"][0]  # TensorFlow's advice first
    assert report["before_first_step_ns"] > 0
    steps = steps_of(trace)
    calls = function_spans(trace, "train")
    assert len(calls) == 9  # the exhausted fetch too, outside every step
    assert sum(any(inside(call, step) for step in steps) for call in calls) == 8
    fetches = [e for e in spans(trace) if e["name"] == TF_INPUT_OP]
    assert len(fetches) >= 8
    assert not list(tmp_path.glob(".tfprof-*"))  # the fold wrote beside the trace, then renamed
    # TensorFlow's fetch of each step's batch lies inside the step's train_function call.
    for step in steps[1:]:
        assert any(inside(fetch, step) for fetch in fetches)


def test_a_fast_fit_of_two_epochs_is_not_input_bound_and_counts_each_batch_once(tmp_path):
    trace, result = run_under_tfprof(tmp_path, KERAS, ["--steps", "8", "--epochs", "2", "--unknown-size"])
    assert "trained 16 steps" in result.stdout
    report = summary(trace)
    assert [s["number"] for s in report["steps"]] == list(range(16))
    assert "input_bound" not in finding_kinds(report)
    assert len(function_spans(trace, "train")) == 18  # each epoch ends on an exhausted fetch: no step


def test_validation_and_prediction_batches_are_steps_labelled_by_their_function(tmp_path):
    trace, _ = run_under_tfprof(tmp_path, KERAS, ["--steps", "4", "--validation", "2", "--predict", "3"])
    steps = steps_of(trace)
    assert [s["args"]["step"] for s in steps] == list(range(9))  # no step for building the model
    labels = []
    for step in steps:
        inner = [e["name"] for e in spans(trace) if e["name"].endswith("_function") and inside(e, step)]
        assert len(inner) == 1, inner
        labels.append(inner[0])
    assert labels == ["train_function"] * 4 + ["test_function"] * 2 + ["predict_function"] * 3


def test_a_callback_that_predicts_keeps_its_training_step(tmp_path):
    trace, _ = run_under_tfprof(tmp_path, KERAS, ["--steps", "4", "--predict-in-callback"])
    steps = steps_of(trace)
    assert [s["args"]["step"] for s in steps] == list(range(4))  # the predictions are no steps
    predictions = function_spans(trace, "predict")
    assert len(predictions) == 4
    assert all(sum(inside(p, step) for step in steps) == 1 for p in predictions)


def test_the_programs_own_tensorflow_profile_is_written_and_tfprofs_resumes_after(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    trace, _ = run_under_tfprof(tmp_path, KERAS, ["--steps", "8", "--input-ms", "10",
                                                  "--tensorboard-profile", str(tmp_path / "tb")],
                                env={"TMPDIR": str(scratch)})
    assert list((tmp_path / "tb").rglob("*.xplane.pb"))  # Keras' TensorBoard callback's profile
    steps = steps_of(trace)
    assert len(steps) == 8
    fetches = [e for e in spans(trace) if e["name"] == TF_INPUT_OP]
    # Batches 2-3 are in the program's profile; tfprof's holds those after it (and before).
    assert all(any(inside(fetch, step) for fetch in fetches) for step in steps[4:])
    assert not list(scratch.glob("tfprof-tensorflow-*"))  # each stretch's profile removed after folding


def test_tensorflow_profiler_off_keeps_the_steps_without_tensorflow_events(tmp_path):
    trace, result = run_under_tfprof(tmp_path, KERAS, ["--steps", "4", "--input-ms", "5"],
                                     env={"TFPROF_TENSORFLOW_PROFILER": "off"}, log_level="info")
    assert "added TensorFlow's profile" not in result.stderr
    names = {e["name"] for e in spans(trace)}
    assert TF_INPUT_OP not in names and "train_function" in names
    assert len(steps_of(trace)) == 4
    assert not list(tmp_path.glob(".tfprof-*"))  # no scratch file left
    # and no empty trace of the `uname -p` TensorFlow runs at import
    assert sorted(p.name for p in tmp_path.glob("trace*")) == ["trace.json"]


def test_a_bad_tensorflow_profiler_setting_is_named_and_the_program_runs(tmp_path):
    trace, result = run_under_tfprof(tmp_path, KERAS, ["--steps", "2"], env={"TFPROF_TENSORFLOW_PROFILER": "maybe"})
    assert "TFPROF_TENSORFLOW_PROFILER='maybe' is not on or off" in result.stderr
    assert "trained 2 steps" in result.stdout


def test_a_keras_program_with_its_own_trace_joins_the_running_session(tmp_path):
    own = tmp_path / "own.json"
    trace, result = run_under_tfprof(tmp_path, KERAS, ["--steps", "4", "--own-trace", str(own)])
    assert result.stderr.count("tfprof.trace: joining the session `tfprof run` started") == 1
    assert len(steps_of(trace)) == 4
    assert len(steps_of(own)) == 4


IN_CODE_PROGRAM = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import keras, numpy as np, tfprof

def hooks():
    return {name: getattr(keras.callbacks.CallbackList, name).__qualname__
            for name in ("on_train_batch_begin", "on_train_batch_end", "on_epoch_end")}

before = hooks()
model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
with tfprof.trace(sys.argv[1], frameworks="keras", cuda="off"):
    during = hooks()
    model.fit(np.zeros((24, 4)), np.zeros((24, 1)), batch_size=4, verbose=0)
print(json.dumps({"before": before, "during": during, "after": hooks()}))
"""


def test_trace_frameworks_in_code_records_keras_steps_and_removes_its_hooks(tmp_path):
    hooks, output = run_in_code_program(tmp_path, IN_CODE_PROGRAM)
    assert hooks["during"] != hooks["before"]
    assert hooks["after"] == hooks["before"]
    assert [s["args"]["step"] for s in steps_of(output)] == list(range(6))
    assert len(function_spans(output, "train")) == 6


def test_jax_step_and_trace_annotations_are_steps_and_spans(tmp_path):
    pytest.importorskip("jax")
    trace, result = run_under_tfprof(tmp_path, "jax_steps.py", ["--steps", "6", "--first", "100",
                                                                "--input-ms", "20"], log_level="info")
    assert "trained 6 steps" in result.stdout
    assert result.stderr.count("tfprof: recording JAX's step and trace annotations") == 1
    steps = steps_of(trace)
    assert [s["args"]["step"] for s in steps] == list(range(100, 106))  # numbered as the program does
    for name in ("load_batch", "update"):
        events = [e for e in spans(trace) if e["name"] == name]
        assert len(events) == 6
        assert all(any(inside(e, step) for step in steps) for e in events)
    report = summary(trace)
    assert finding_kinds(report)[0] == "input_bound"
