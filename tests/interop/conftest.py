"""Fixtures for the interop tests: TensorFlow and TensorBoard from PyPI as the clients of tfprof's
files, and TensorFlow as the producer of files tfprof reads. Run in a venv that has tfprof,
tensorflow-cpu and tensorboard (scripts/test.sh makes build/venv-tf)."""

import os

# Before TensorFlow is imported anywhere: quiet, deterministic, CPU only.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import pathlib
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Dict, List

import pytest

import tfprof

HERE = pathlib.Path(__file__).parent
HOST_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


@pytest.fixture(scope="session")
def tf_written(tmp_path_factory) -> pathlib.Path:
    """Files TensorFlow itself wrote: a TF1 graph run three times under tf.compat.v1.Session with
    FULL_TRACE on two CPU devices (tf_full_trace.py says what is in the directory)."""
    out = tmp_path_factory.mktemp("tf_written")
    subprocess.run([sys.executable, str(HERE / "tf_full_trace.py"), str(out), "--runs", "3"],
                   check=True, stdout=subprocess.DEVNULL)
    return out


@dataclass
class Recording:
    """What the tfprof session below recorded, to compare the files against."""
    directory: pathlib.Path
    main_tid: int = 0
    loader_tid: int = 0
    steps: List[int] = field(default_factory=list)
    ops_per_step: Dict[str, int] = field(default_factory=dict)


@pytest.fixture(scope="session")
def tfprof_written(tmp_path_factory) -> Recording:
    """A training-like loop traced by tfprof in this process (TensorFlow is imported too), written
    as .pb, .tfrecord and a TensorBoard log directory."""
    import tensorflow  # noqa: F401  (both libraries loaded in one process)

    out = tmp_path_factory.mktemp("tfprof_written")
    recording = Recording(out, main_tid=threading.get_native_id(), steps=[1, 2, 3])
    tfprof.set_thread_name("trainer")
    with tfprof.trace(out / "run.tfrecord") as session:
        with tfprof.span("setup"):
            pass
        for step in recording.steps:
            with tfprof.step(step):
                tfprof.counter("loss", 1.0 / step)  # TensorBoard's Scalars tab shows it per step
                with tfprof.span("layer1/matmul:MatMul"):
                    with tfprof.span("layer1/matmul/kernel"):
                        pass
                with tfprof.span("layer1/relu:Relu"):
                    pass
                if step == 2:
                    def load() -> None:
                        recording.loader_tid = threading.get_native_id()
                        with tfprof.span("input/decode:DecodeJpeg"):
                            pass
                    loader = threading.Thread(target=load, name="loader")
                    loader.start()
                    loader.join()
    session.export(out / "run.pb")
    session.export(str(out / "logs") + "/")
    recording.ops_per_step = {"layer1/matmul": 1, "layer1/matmul/kernel": 1, "layer1/relu": 1}
    return recording
