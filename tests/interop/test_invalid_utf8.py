"""Names that are not valid UTF-8 (the C ABI takes any bytes) in every TensorFlow format tfprof
writes, read by TensorFlow's and TensorBoard's own protobuf, which reject invalid UTF-8 in a
`string` field: tfprof writes U+FFFD for each bad byte, as its JSON writer does, and nothing from
protobuf reaches the program's stderr."""

import pathlib
import subprocess
import sys
import textwrap

import pytest

import tfprof

# A lone 0xFF, a cut two-byte sequence, an overlong "/" and a UTF-16 surrogate; then a thread name
# cut inside a three-byte sequence.
SPAN_NAMES = [b"MatMul\xff", b"conv\xc3(", b"over\xc0\xafong", b"sur\xed\xa0\x80gate"]
THREAD_NAME = b"worker\xe2\x82"
EXPECTED_NAMES = [name.decode("utf-8", errors="replace") for name in SPAN_NAMES]

# Records the spans through the C ABI and exports them to each path given; prints nothing.
PROGRAM = textwrap.dedent("""
    import ctypes, sys
    library = ctypes.CDLL(sys.argv[1])
    library.prof_start.argtypes = [ctypes.c_char_p]
    library.prof_span_begin.argtypes = [ctypes.c_char_p]
    library.prof_set_thread_name.argtypes = [ctypes.c_char_p]
    library.prof_begin_step.argtypes = [ctypes.c_int64]
    library.prof_export.argtypes = [ctypes.c_char_p]
    library.prof_last_error.restype = ctypes.c_char_p
    assert library.prof_start(b"cuda=off") == 0, library.prof_last_error()
    library.prof_set_thread_name(%r)
    library.prof_begin_step(1)
    for name in %r:
        library.prof_span_begin(name)
        library.prof_span_end()
    library.prof_end_step()
    assert library.prof_stop() == 0, library.prof_last_error()
    for path in sys.argv[2:]:
        assert library.prof_export(path.encode()) == 0, library.prof_last_error()
""") % (THREAD_NAME, SPAN_NAMES)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("invalid_utf8")
    paths = {"pb": out / "names.pb", "tfrecord": out / "names.tfrecord", "logdir": out / "logs"}
    paths["logdir"].mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, tfprof.library_path(), str(paths["pb"]),
         str(paths["tfrecord"]), str(paths["logdir"]) + "/"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # Nothing from protobuf (or anything else) on the host program's stderr.
    assert done.stderr == ""
    return paths


def node_names(metadata):
    return [node.node_name for device in metadata.step_stats.dev_stats for node in device.node_stats]


def check_step(metadata):
    names = node_names(metadata)
    for expected in EXPECTED_NAMES:
        assert expected in names
    labels = [node.timeline_label for device in metadata.step_stats.dev_stats
              for node in device.node_stats]
    assert any(label.startswith(EXPECTED_NAMES[0]) for label in labels)
    thread_names = [name for device in metadata.step_stats.dev_stats
                    for name in device.thread_names.values()]
    assert "worker\ufffd\ufffd" in thread_names


def test_tensorflow_parses_the_run_metadata(written):
    from tensorflow.core.protobuf import config_pb2
    metadata = config_pb2.RunMetadata.FromString(written["pb"].read_bytes())
    check_step(metadata)


def test_tensorflow_reads_every_record_of_the_tfrecord_file(written):
    import tensorflow as tf
    from tensorflow.core.protobuf import config_pb2
    records = [bytes(record.numpy()) for record in tf.data.TFRecordDataset(str(written["tfrecord"]))]
    assert records
    runs = [config_pb2.RunMetadata.FromString(record) for record in records]
    step = [run for run in runs if "step_000001" in node_names(run)]
    assert len(step) == 1
    check_step(step[0])


def test_tensorboard_loads_the_event_file_with_its_run_metadata_and_graph(written):
    from tensorboard.backend.event_processing import event_accumulator
    accumulator = event_accumulator.EventAccumulator(str(written["logdir"]))
    accumulator.Reload()
    tags = accumulator.Tags()["run_metadata"]
    assert "step_000001" in tags
    check_step(accumulator.RunMetadata("step_000001"))
    graph_names = {node.name for node in accumulator.Graph().node}
    for expected in EXPECTED_NAMES:
        assert expected in graph_names


def test_tfprof_reads_its_files_back_with_the_same_names(written, tmp_path):
    import json
    for source in (written["pb"], written["tfrecord"]):
        target = tmp_path / (source.stem + "-" + source.suffix[1:] + ".json")
        tfprof.convert(str(source), str(target))
        events = json.loads(target.read_text(encoding="utf-8"))["traceEvents"]
        names = {event["name"] for event in events if event.get("ph") == "X"}
        for expected in EXPECTED_NAMES:
            assert expected in names
