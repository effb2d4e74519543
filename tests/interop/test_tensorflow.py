"""TensorFlow reads what tfprof writes, and tfprof reads what TensorFlow writes, with the real
tensorflow-cpu package: its RunMetadata class, its TFRecord reader, its timeline.py."""

import json
import pathlib
import subprocess
import sys
from collections import Counter

import pytest
import tensorflow as tf
from tensorflow.python.client import timeline

import tfprof
from conftest import HOST_DEVICE, Recording

RunMetadata = tf.compat.v1.RunMetadata


def parse_run_metadata(data: bytes) -> RunMetadata:
    metadata = RunMetadata()
    metadata.ParseFromString(data)
    return metadata


def node_names(metadata: RunMetadata) -> list:
    return [node.node_name for device in metadata.step_stats.dev_stats for node in device.node_stats]


def tfrecord_records(path: pathlib.Path) -> list:
    return [record.numpy() for record in tf.data.TFRecordDataset(str(path))]


def tf_timeline(step_stats, **options) -> dict:
    """TensorFlow's own Chrome trace of a StepStats (timeline.py writes lane numbers into the
    thread ids of what it is given, so it gets a copy)."""
    copy = type(step_stats)()
    copy.CopyFrom(step_stats)
    return json.loads(timeline.Timeline(copy).generate_chrome_trace_format(**options))


def process_names(trace: dict) -> dict:
    return {event["pid"]: event["args"]["name"] for event in trace["traceEvents"]
            if event.get("ph") == "M" and event.get("name") == "process_name"}


@pytest.mark.parametrize("first", ["tensorflow", "tfprof"])
def test_tensorflow_and_tfprof_work_in_one_process_in_either_import_order(first, tmp_path):
    second = "tfprof" if first == "tensorflow" else "tensorflow"
    script = f"""
import {first}, {second}
import tensorflow as tf, tfprof
with tfprof.trace({str(tmp_path / 'run.pb')!r}):
    for step in range(2):
        with tfprof.step(step), tfprof.span("dense/MatMul:MatMul"):
            tf.linalg.matmul(tf.ones([4, 4]), tf.ones([4, 4]))
metadata = tf.compat.v1.RunMetadata()
metadata.ParseFromString(open({str(tmp_path / 'run.pb')!r}, "rb").read())
tfprof.convert({str(tmp_path / 'run.pb')!r}, {str(tmp_path / 'run.json')!r})
print(sorted(node.node_name for node in metadata.step_stats.dev_stats[0].node_stats))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == str(
        ["dense/MatMul", "dense/MatMul", "step_000000", "step_000001", "tfprof/losses"])
    assert (tmp_path / "run.json").stat().st_size > 0


def test_tensorflow_parses_the_run_metadata_tfprof_writes(tfprof_written: Recording):
    metadata = parse_run_metadata((tfprof_written.directory / "run.pb").read_bytes())
    assert [device.device for device in metadata.step_stats.dev_stats] == [HOST_DEVICE]
    device = metadata.step_stats.dev_stats[0]
    assert Counter(node_names(metadata)) == Counter({
        "step_000001": 1, "step_000002": 1, "step_000003": 1, "layer1/matmul": 3,
        "layer1/matmul/kernel": 3, "layer1/relu": 3, "input/decode": 1, "setup": 1, "tfprof/losses": 1})
    labels = {node.node_name: node.timeline_label for node in device.node_stats}
    assert labels["layer1/matmul"] == "layer1/matmul = MatMul()"
    assert labels["input/decode"] == "input/decode = DecodeJpeg()"
    assert labels["step_000002"] == "step_000002 = TrainingStep()"
    assert labels["tfprof/losses"].startswith("tfprof/losses = Losses(dropped_events=0, ")
    # The losses node is on no real thread: id 0, named "tfprof".
    assert dict(device.thread_names) == {tfprof_written.main_tid: "trainer",
                                          tfprof_written.loader_tid: "loader", 0: "tfprof"}
    for node in device.node_stats:
        expected_tid = {"input/decode": tfprof_written.loader_tid, "tfprof/losses": 0}.get(
            node.node_name, tfprof_written.main_tid)
        assert node.thread_id == expected_tid
        assert node.all_start_nanos // 1000 == node.all_start_micros
        assert 0 <= node.all_end_rel_micros <= 10_000_000


def test_tensorflow_reads_every_record_of_the_tfrecord_tfprof_writes(tfprof_written: Recording):
    records = tfrecord_records(tfprof_written.directory / "run.tfrecord")
    assert len(records) == len(tfprof_written.steps) + 1  # the steps, then "setup" and the losses
    for step, record in zip(tfprof_written.steps, records):
        names = node_names(parse_run_metadata(record))
        assert names[0] == f"step_{step:06d}"
        expected = Counter(tfprof_written.ops_per_step)
        if step == 2:
            expected["input/decode"] = 1
        assert Counter(names[1:]) == expected
    assert node_names(parse_run_metadata(records[-1])) == ["setup", "tfprof/losses"]


def test_timeline_py_shows_tfprof_ops_on_the_host_device(tfprof_written: Recording):
    metadata = parse_run_metadata((tfprof_written.directory / "run.pb").read_bytes())
    trace = tf_timeline(metadata.step_stats, show_dataflow=True, show_memory=True)
    pids = process_names(trace)
    assert pids[0] == "Allocators"
    compute_pid = next(pid for pid, name in pids.items() if name == f"{HOST_DEVICE} Compute")
    ops = [event for event in trace["traceEvents"] if event.get("ph") == "X"]
    assert {event["pid"] for event in ops} == {compute_pid}
    assert Counter(event["name"] for event in ops) == Counter(
        {"TrainingStep": 3, "MatMul": 3, "layer1/matmul/kernel": 3, "Relu": 3, "DecodeJpeg": 1, "setup": 1,
         "Losses": 1})
    by_name = {event["args"]["name"]: event for event in ops}
    assert by_name["layer1/matmul"]["args"]["op"] == "MatMul"
    assert by_name["input/decode"]["args"]["op"] == "DecodeJpeg"


def x_events(trace: dict, pids: dict) -> Counter:
    """Op events as (process name, row, name, node name, ts, dur), times in whole microseconds."""
    return Counter((pids[event["pid"]], event["tid"], event["name"], event["args"]["name"],
                    round(event["ts"]), round(event["dur"]))
                   for event in trace["traceEvents"] if event.get("ph") == "X" and event.get("cat") == "Op")


def test_tfprof_converts_tensorflow_run_metadata_like_timeline_py(tf_written, tmp_path):
    metadata = parse_run_metadata((tf_written / "run_metadata.pb").read_bytes())
    expected = tf_timeline(metadata.step_stats, show_dataflow=True, show_memory=True)
    tfprof.convert(tf_written / "run_metadata.pb", tmp_path / "lanes.json", layout="timeline",
                   rows="lanes", show_dataflow=True, show_memory=True)
    actual = json.loads((tmp_path / "lanes.json").read_text())
    expected_pids, actual_pids = process_names(expected), process_names(actual)
    # The same devices, the same ops on the same rows at the same times.
    devices = {name for name in expected_pids.values()}
    assert devices <= set(actual_pids.values())
    assert len(devices) == 5  # Allocators, and Compute + Tensors for each of the two CPUs
    want = x_events(expected, expected_pids)
    assert sum(want.values()) == sum(len(device.node_stats) for device in metadata.step_stats.dev_stats)
    assert x_events(actual, actual_pids) == want
    # The same data flows and memory events, phase by phase.
    for phase in ("s", "t", "N", "O", "D", "C"):
        def of_phase(trace, pids):
            return Counter((pids[event["pid"]], event["tid"], event.get("name"), round(event["ts"]))
                           for event in trace["traceEvents"] if event.get("ph") == phase)
        assert of_phase(actual, actual_pids) == of_phase(expected, expected_pids), phase
    assert sum(1 for event in expected["traceEvents"] if event.get("ph") == "s") > 0


def test_tfprof_keeps_real_threads_and_nanoseconds_by_default(tfprof_written: Recording, tmp_path):
    tfprof.convert(tfprof_written.directory / "run.pb", tmp_path / "threads.json", layout="timeline")
    trace = json.loads((tmp_path / "threads.json").read_text())
    names = {(event["pid"], event["tid"]): event["args"]["name"] for event in trace["traceEvents"]
             if event.get("ph") == "M" and event.get("name") == "thread_name"}
    decode = next(event for event in trace["traceEvents"]
                  if event.get("ph") == "X" and event.get("args", {}).get("name") == "input/decode")
    assert names[(decode["pid"], decode["tid"])] == "loader"
    assert decode["tid"] == tfprof_written.loader_tid


def test_tfprof_reads_the_tfrecord_and_event_files_tensorflow_writes(tf_written, tmp_path):
    metadata = parse_run_metadata((tf_written / "run_metadata.pb").read_bytes())
    ops_per_run = sum(len(device.node_stats) for device in metadata.step_stats.dev_stats)
    for source in (tf_written / "run_metadata.tfrecord", tf_written / "events"):
        out = tmp_path / (source.name + ".json")
        tfprof.convert(source, out, layout="timeline")
        trace = json.loads(out.read_text())
        ops = [event for event in trace["traceEvents"] if event.get("ph") == "X" and event.get("cat") == "Op"]
        assert len(ops) == 3 * ops_per_run, source
        # Each run is labelled on the Steps row of both devices: by its event tag, or its record index.
        runs = Counter(event["name"] for event in trace["traceEvents"]
                       if event.get("ph") == "X" and event.get("cat") != "Op")
        labels = ["step_000001", "step_000002", "step_000003"] if source.name == "events" else ["run 0", "run 1", "run 2"]
        assert runs == Counter({label: 2 for label in labels}), source


def test_merge_puts_tensorflow_and_tfprof_runs_on_one_timeline(tf_written, tfprof_written: Recording, tmp_path):
    out = tmp_path / "merged.json"
    tfprof.merge([tf_written / "run_metadata.tfrecord", tfprof_written.directory / "run.tfrecord"], out,
                 layout="timeline")
    trace = json.loads(out.read_text())
    names = set(process_names(trace).values())
    assert any("run_metadata.tfrecord" in name for name in names)
    assert any("run.tfrecord" in name for name in names)
    ops = Counter(event["args"]["name"] for event in trace["traceEvents"]
                  if event.get("ph") == "X" and event.get("cat") == "Op")
    assert ops["layer1/matmul"] == 3 + 3  # TensorFlow's graph node and tfprof's span share the name
    assert ops["input/decode"] == 1
