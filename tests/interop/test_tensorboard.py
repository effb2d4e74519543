"""TensorBoard (the real server from PyPI) shows the steps and ops of tfprof's event files, and
its step times and counters as scalars: it is started on a free port over a log directory, asked
through the graphs and scalars plugins' HTTP routes, and stopped."""

import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import Recording

STARTUP_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
        return gzip.decompress(body) if response.headers.get("Content-Encoding") == "gzip" else body


@pytest.fixture(scope="module")
def tensorboard(tmp_path_factory, tfprof_written: Recording, tf_written):
    """TensorBoard over a log directory with two runs: tfprof's ("tfprof") and TensorFlow's own
    event file ("tensorflow"). Yields the server's base URL."""
    logdir = tmp_path_factory.mktemp("tensorboard_logdir")
    shutil.copytree(tfprof_written.directory / "logs", logdir / "tfprof")
    shutil.copytree(tf_written / "events", logdir / "tensorflow")
    port = free_port()
    executable = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    log = open(logdir.parent / "tensorboard.log", "wb")
    server = subprocess.Popen([executable, "--logdir", str(logdir), "--host", "127.0.0.1",
                               "--port", str(port), "--reload_interval", "1"],
                              stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            assert server.poll() is None, (logdir.parent / "tensorboard.log").read_text()[-3000:]
            try:
                info = json.loads(get(base + "/data/plugin/graphs/info"))
                if {"tfprof", "tensorflow"} <= set(info):
                    break
            except (urllib.error.URLError, ConnectionError, json.JSONDecodeError):
                pass
            assert time.monotonic() < deadline, "TensorBoard did not list both runs in time"
            time.sleep(0.5)
        yield base
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_graphs_plugin_lists_tfprof_steps_with_profiles_and_a_graph(tensorboard, tfprof_written: Recording):
    info = json.loads(get(tensorboard + "/data/plugin/graphs/info"))
    run = info["tfprof"]
    assert run["run_graph"] is True
    assert set(run["tags"]) == {f"step_{step:06d}" for step in tfprof_written.steps} | {"outside_steps"}
    assert all(tag["profile"] for tag in run["tags"].values())
    # TensorFlow's own event file, beside ours, is listed the same way.
    assert set(info["tensorflow"]["tags"]) == {"step_000001", "step_000002", "step_000003"}


def test_run_metadata_route_returns_tfprof_step_with_its_nodes(tensorboard, tfprof_written: Recording):
    query = urllib.parse.urlencode({"run": "tfprof", "tag": "step_000002"})
    text = get(tensorboard + "/data/plugin/graphs/run_metadata?" + query).decode()
    from tensorboard.compat.proto import config_pb2
    from google.protobuf import text_format
    metadata = text_format.Parse(text, config_pb2.RunMetadata())
    device = metadata.step_stats.dev_stats[0]
    assert device.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    names = sorted(node.node_name for node in device.node_stats)
    assert names == sorted(["step_000002", "layer1/matmul", "layer1/matmul/kernel", "layer1/relu", "input/decode"])
    assert dict(device.thread_names)[tfprof_written.loader_tid] == "loader"


def test_graph_route_has_a_node_for_every_op(tensorboard):
    text = get(tensorboard + "/data/plugin/graphs/graph?run=tfprof").decode()
    from tensorboard.compat.proto import graph_pb2
    from google.protobuf import text_format
    graph = text_format.Parse(text, graph_pb2.GraphDef())
    assert {node.name: node.op for node in graph.node} == {
        "setup": "setup", "layer1/matmul": "MatMul", "layer1/matmul/kernel": "layer1/matmul/kernel",
        "layer1/relu": "Relu", "input/decode": "DecodeJpeg"}


def test_scalars_plugin_shows_step_times_and_counters(tensorboard, tfprof_written: Recording):
    """A counter is a scalar of its own (one tag per counter, the step as the x axis), beside
    each step's time."""
    tags = json.loads(get(tensorboard + "/data/plugin/scalars/tags"))["tfprof"]
    assert {"tfprof/step_time_ms", "tfprof/counter/loss"} <= set(tags)
    query = urllib.parse.urlencode({"run": "tfprof", "tag": "tfprof/counter/loss"})
    points = json.loads(get(tensorboard + "/data/plugin/scalars/scalars?" + query))
    assert [step for _, step, _ in points] == tfprof_written.steps
    assert [value for _, _, value in points] == pytest.approx([1.0 / s for s in tfprof_written.steps])
    query = urllib.parse.urlencode({"run": "tfprof", "tag": "tfprof/step_time_ms"})
    times = json.loads(get(tensorboard + "/data/plugin/scalars/scalars?" + query))
    assert [step for _, step, _ in times] == tfprof_written.steps
    assert all(value > 0 for _, _, value in times)
