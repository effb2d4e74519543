"""TensorFlow 2's and JAX's own profilers write XPlane (`<host>.xplane.pb`); tfprof reads it. Each
profile is taken by the real TensorFlow (tf_profile.py) or JAX (jax_profile.py) in its own process
and checked against the same file decoded by TensorFlow's own protos
(tensorflow.tsl.profiler.protobuf.xplane_pb2). Also tfprof.trace(tensorflow=True): TensorFlow's
events folded into tfprof's trace on one clock."""

import collections
import decimal
import glob
import json
import pathlib
import subprocess
import sys

import pytest

import tfprof

HERE = pathlib.Path(__file__).parent


def ns(value) -> int:
    return int(decimal.Decimal(str(value)) * 1000)


@pytest.fixture(scope="session")
def profiles(tmp_path_factory):
    """OUT/<mode>/ for each of tf_profile.py's modes, with its manifest."""
    root = tmp_path_factory.mktemp("tf_profiles")
    for mode in ("fit", "slow_fit", "slow_input", "tfprof", "tfprof_stopped_early"):
        subprocess.run([sys.executable, str(HERE / "tf_profile.py"), str(root / mode), mode],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return root


def manifest(profiles, mode):
    return json.loads((profiles / mode / "manifest.json").read_text())


@pytest.fixture(scope="session")
def jax_profile(tmp_path_factory):
    pytest.importorskip("jax")
    out = tmp_path_factory.mktemp("jax_profile")
    subprocess.run([sys.executable, str(HERE / "jax_profile.py"), str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return out


def xspace(profiles, mode):
    """TensorFlow's own decoding of the profile it wrote."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    files = glob.glob(str(profiles / mode / "logs" / "plugins" / "profile" / "*" / "*.xplane.pb"))
    assert len(files) == 1, files
    space = xplane_pb2.XSpace()
    space.ParseFromString(pathlib.Path(files[0]).read_bytes())
    return space


def host_events(space):
    """(line name, event name, start ns, end ns, stat names) of /host:CPU, as TensorFlow decodes it."""
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    event_names = {key: value.name for key, value in plane.event_metadata.items()}
    stat_names = {key: value.name for key, value in plane.stat_metadata.items()}
    for line in plane.lines:
        for event in line.events:
            start = line.timestamp_ns + event.offset_ps // 1000
            yield (line.name, event_names[event.metadata_id], start, start + event.duration_ps // 1000,
                   {stat_names[stat.metadata_id] for stat in event.stats})


def outermost_calls(space):
    """(line, name, start) of the tf.function calls that returned (tf_function_call) and are not
    inside another on their thread: Keras' batches."""
    calls = sorted(((line, start, end, name) for line, name, start, end, stats in host_events(space)
                    if "tf_function_call" in stats), key=lambda c: (c[0], c[1], -c[2]))
    outer = []
    for line, start, end, name in calls:
        if not outer or outer[-1][0] != line or end > outer[-1][2]:
            outer.append((line, start, end, name))
    return {(line, name, start) for line, start, _, name in outer}


def tfprof_command(*args) -> str:
    """The installed package's `tfprof` command (its console script's executable)."""
    from tfprof._cli import _executable_path

    return subprocess.run([_executable_path(), *map(str, args)], capture_output=True, text=True,
                          check=True).stdout


def convert(source, out):
    tfprof.convert(source, out)
    return json.loads(pathlib.Path(out).read_text(), parse_float=decimal.Decimal)


def thread_names(trace):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


def test_keras_fit_profile_reads_event_for_event(profiles, tmp_path):
    space = xspace(profiles, "fit")
    # Keras 3 marks no steps: each tf.function call that returned (tf_function_call) becomes a
    # step, not an op; what runs inside it (its FunctionRun) and tf.data's function runs stay ops.
    calls = outermost_calls(space)
    expected = collections.Counter((line, name, start) for line, name, start, _, _ in host_events(space)
                                   if (line, name, start) not in calls)
    trace = convert(profiles / "fit" / "logs", tmp_path / "fit.json")
    rows = thread_names(trace)
    start_ns = int(trace["tfprof"]["start_time_unix_ns"]) - int(trace["tfprof"]["start_time_monotonic_ns"])
    task = next(p for p in space.planes if p.name == "Task Environment")
    profile_start = next(s.uint64_value for s in task.stats
                         if task.stat_metadata[s.metadata_id].name == "profile_start_time")
    assert start_ns == profile_start
    got = collections.Counter((rows[(e["pid"], e["tid"])], e["name"], ns(e["ts"]))
                              for e in trace["traceEvents"] if e["ph"] in ("X", "i") and e.get("cat") != "step")
    assert got == expected
    # tf.data's events are there, on tf.data's threads.
    assert any(name.startswith("Iterator::") for _, name, _ in got)
    assert any(line.startswith("tf_data") for line, _, _ in got)
    # 2 epochs of 6 steps, each from its call to its executor runs' end.
    steps = [e for e in trace["traceEvents"] if e.get("cat") == "step"]
    assert len(steps) == 2 * manifest(profiles, "fit")["steps"]
    assert sorted(ns(s["ts"]) for s in steps) == sorted(start for _, _, start in calls)


def test_slow_input_pipeline_is_input_bound(profiles):
    summary = json.loads(tfprof_command("summary", "--json", profiles / "slow_input" / "logs"))
    entry = summary["traces"][0]
    steps = manifest(profiles, "slow_input")["steps"]
    assert [s["number"] for s in entry["steps"]] == list(range(steps))  # step_num 0..4
    waits = [s["input_wait_ns"] / s["duration_ns"] for s in entry["steps"]]
    assert min(waits) > 0.5, waits
    text = tfprof_command("summary", profiles / "slow_input" / "logs")
    assert "Input-bound" in text, text
    assert "IteratorGetNext" in text


def test_keras_fit_over_a_slow_pipeline_is_input_bound(profiles):
    """Keras 3's fit marks no steps and runs each step's function while its thread waits in the
    call: the GetNext kernel it waits on runs on a tf.data thread, and is still the step's wait."""
    summary = json.loads(tfprof_command("summary", "--json", profiles / "slow_fit" / "logs"))
    entry = summary["traces"][0]
    assert len(entry["steps"]) == manifest(profiles, "slow_fit")["steps"]
    # 16 elements a batch, each sleeping 20 ms in the map: over 300 ms a step, nearly all waiting.
    assert all(s["duration_ns"] > 300_000_000 for s in entry["steps"]), entry["steps"]
    assert all(s["input_wait_ns"] > 0.8 * s["duration_ns"] for s in entry["steps"]), entry["steps"]
    assert "Input-bound" in tfprof_command("summary", profiles / "slow_fit" / "logs")


def test_trace_with_tensorflow_folds_its_events_into_the_session(profiles):
    info = manifest(profiles, "tfprof")
    assert info["notes"] == []  # no GPU here: neither records one, nothing to say
    trace = json.loads(pathlib.Path(info["trace"]).read_text(), parse_float=decimal.Decimal)
    events = trace["traceEvents"]
    spans = [e for e in events if e["ph"] == "X" and e.get("cat") != "step"]
    def span_named(name):
        """(pid, begin ns, end ns): a span, or a range where the writer had to draw it as one (a
        TensorFlow event on the same thread overlaps its edge by the two clocks' difference)."""
        for e in spans:
            if e["name"] == name:
                return e["pid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        begin = next(e for e in events if e["ph"] == "b" and e["name"] == name)
        end = next(e for e in events if e["ph"] == "e" and e["name"] == name)
        return begin["pid"], ns(begin["ts"]), ns(end["ts"])

    fit_pid, fit_begin, fit_end = span_named("fit")
    _, _, prepare_end = span_named("prepare")
    processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert processes == {fit_pid}  # one process: the program's spans and TensorFlow's events
    assert [e for e in spans if e["name"] == "IteratorGetNextOp::DoCompute"]
    # The program marked no steps: TensorFlow's (one per training call) are the trace's, and on
    # one clock they happen inside the program's "fit" span (1 ms of slack for the two profilers
    # reading the wall clock at slightly different moments).
    steps = [e for e in events if e.get("cat") == "step"]
    assert len(steps) == manifest(profiles, "tfprof")["steps"]
    for step in steps:
        assert fit_begin - 1_000_000 <= ns(step["ts"]) and ns(step["ts"]) + ns(step["dur"]) <= fit_end + 1_000_000
    assert prepare_end <= fit_begin
    formats = [source["format"] for source in trace["tfprof"]["sources"]]
    assert formats == ["tfprof Chrome trace", "XPlane profile (XSpace)"]


def test_jax_profile_reads_with_its_steps_and_annotations(jax_profile, tmp_path):
    space = xspace(jax_profile.parent, jax_profile.name)
    info = json.loads((jax_profile / "manifest.json").read_text())
    markers = [(start, end) for _, name, start, end, stats in host_events(space)
               if name == "train" and "_r" in stats]
    assert len(markers) == info["steps"]
    expected = collections.Counter((line, name, start) for line, name, start, _, stats in host_events(space)
                                   if not (name == "train" and "_r" in stats))
    trace = convert(jax_profile / "logs", tmp_path / "jax.json")
    rows = thread_names(trace)
    got = collections.Counter((rows[(e["pid"], e["tid"])], e["name"], ns(e["ts"]))
                              for e in trace["traceEvents"] if e["ph"] in ("X", "i") and e.get("cat") != "step")
    assert got == expected
    steps = [e for e in trace["traceEvents"] if e.get("cat") == "step"]
    assert [s["args"]["step"] for s in steps] == list(range(info["steps"]))
    assert sorted((ns(s["ts"]), ns(s["ts"]) + ns(s["dur"])) for s in steps) == sorted(markers)
    annotations = [e for e in trace["traceEvents"] if e.get("name") == "update_weights"]
    assert len(annotations) == info["steps"]
    # Each annotation lies inside its step.
    for annotation, (begin, end) in zip(sorted(annotations, key=lambda e: ns(e["ts"])), sorted(markers)):
        assert begin <= ns(annotation["ts"]) and ns(annotation["ts"]) + ns(annotation["dur"]) <= end


def test_tensorflow_profiler_stopped_by_the_program_loses_nothing(profiles):
    """The program stops TensorFlow's profiler itself inside the block: the session warns, and
    the trace still holds TensorFlow's profile (written where the session started it) and every
    span of the program's, the one after the stop included."""
    info = manifest(profiles, "tfprof_stopped_early")
    assert any("TensorFlow's profiler did not stop" in w for w in info["warnings"]), info["warnings"]
    trace = json.loads(pathlib.Path(info["trace"]).read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] in ("X", "b")}
    assert {"fit", "after"} <= names
    assert "IteratorGetNextOp::DoCompute" in names
    formats = [source["format"] for source in trace["tfprof"]["sources"]]
    assert formats == ["tfprof Chrome trace", "XPlane profile (XSpace)"]


def test_the_keras_example_writes_one_trace(tmp_path):
    example = HERE.parents[1] / "examples" / "python" / "keras_fit_tensorflow.py"
    out = tmp_path / "fit.json"
    result = subprocess.run([sys.executable, str(example), str(out)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stdout
    trace = json.loads(out.read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] in ("X", "b")}
    assert {"build", "fit", "IteratorGetNextOp::DoCompute"} <= names
    steps = [e for e in trace["traceEvents"] if e.get("cat") == "step"]
    # 2 epochs of 512 / 32 batches, one step per training call; the first fit's set-up (tracing,
    # initialising the optimizer's variables) is part of its first step.
    assert len(steps) == 2 * 16
