"""tfprof.convert / tfprof.merge: the convert engine from Python. TensorFlow step statistics drawn
as timeline.py draws them (layout="timeline"), every format tfprof reads converted in tfprof's
layout (the default) to every format it writes, checked by parsing the output."""

from __future__ import annotations

import json

import pytest

import tfprof
from step_stats_files import CPU, device, event_file, op, record, run_metadata, small_run
from trace_file import only, read_trace


def process_names(trace):
    return {event["pid"]: event["args"]["name"] for event in trace.with_phase("M") if event["name"] == "process_name"}


def test_convert_shows_what_timeline_py_shows(tmp_path):
    source = tmp_path / "run.pb"
    source.write_bytes(small_run(1_000_000))
    out = tmp_path / "timeline.json"
    tfprof.convert(source, out, layout="timeline", rows="lanes")
    trace = read_trace(out)
    assert process_names(trace) == {0: "Allocators", 1: f"{CPU} Compute", 2: f"{CPU} Tensors"}
    ops = trace.spans("Op")
    assert [(event["name"], event["ts"], event["dur"], event["tid"]) for event in ops] == [
        ("Const", 1_000_000, 10, 0),
        ("Square", 1_000_020, 10, 0),
        ("Add", 1_000_040, 10, 0),
    ]
    assert only(ops, "Add")["args"] == {"name": "c", "op": "Add", "input0": "a", "input1": "b"}
    assert trace.with_phase("s") == []  # one lane: no arrows within a row
    assert [step["name"] for step in trace.steps()] == ["run 0"]


def test_thread_rows_and_dataflow_by_default(tmp_path):
    source = tmp_path / "run.pb"
    source.write_bytes(small_run(2_000_000))
    out = tmp_path / "threads.json.gz"
    tfprof.convert(str(source), str(out), layout="timeline", show_memory=True)
    trace = read_trace(out)
    rows = {tid: name for tid, name in trace.thread_names().items()}
    assert rows[11] == "main" and rows[12] == "loader" and "Steps" in rows.values()
    ops = trace.spans("Op")
    assert only(ops, "Square")["tid"] == 12
    assert only(ops, "Add")["tid"] == 11
    flows = [(event["name"], event["tid"]) for event in trace.with_phase("s")]
    assert flows == [("a", 11), ("b", 12)]  # a -> b across threads, b -> c back
    counters = [event["args"]["cpu"] for event in trace.with_phase("C")]
    assert counters == [16, 32, 16, 0]
    assert {event["name"] for event in trace.with_phase("N")} == {"a", "b"}


def test_merge_lines_up_runs_of_several_files_on_one_timeline(tmp_path):
    steps = tmp_path / "steps.tfrecord"
    steps.write_bytes(b"".join(record(small_run(5_000_000 + 1000 * n, f"step_{n:06d}")) for n in (1, 2)))
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    (logdir / "events.out.tfevents.1.host").write_bytes(event_file([("eval_7", 7, small_run(5_001_500))]))
    out = tmp_path / "merged.json"
    tfprof.merge([steps, logdir], out, layout="timeline")
    trace = read_trace(out)
    assert process_names(trace) == {
        0: "steps.tfrecord: Allocators",
        1: f"steps.tfrecord: {CPU} Compute",
        2: f"steps.tfrecord: {CPU} Tensors",
        3: "logdir: Allocators",
        4: f"logdir: {CPU} Compute",
        5: f"logdir: {CPU} Tensors",
    }
    assert [(step["name"], step["args"]["step"], step["pid"]) for step in trace.steps()] == [
        ("step_000001", 1, 1),
        ("eval_7", 7, 4),
        ("step_000002", 2, 1),
    ]
    assert only(trace.steps(), "step_000001")["ts"] == pytest.approx(5_000_995)
    assert len(trace.spans("Op")) == 11
    summary = trace.raw["tfprof"]["converted_from"]
    assert [(entry["format"], entry["runs"]) for entry in summary] == [
        ("TFRecord of RunMetadata", 2),
        ("TensorBoard event file", 1),
    ]


def test_damage_is_a_value_error_naming_file_offset_and_problem(tmp_path):
    first = record(small_run(100))
    data = bytearray(first + record(small_run(200)))
    data[len(first) + 20] ^= 0x10
    source = tmp_path / "damaged.tfrecord"
    source.write_bytes(bytes(data))
    out = tmp_path / "out.json"
    with pytest.raises(ValueError, match=rf"^tfprof.convert: '{source}': record at byte offset {len(first)}: data CRC mismatch"):
        tfprof.convert(source, out, layout="timeline")
    assert not out.exists()
    with pytest.warns(RuntimeWarning, match=r"data CRC mismatch .*\(salvaged: wrote what was read before the damage"):
        tfprof.convert(source, out, layout="timeline", salvage=True)
    assert len(read_trace(out).spans("Op")) == 3
    out.unlink()
    with pytest.raises(ValueError, match=rf"{source}: byte {len(first)}: .*data CRC mismatch"):
        tfprof.convert(source, out)  # tfprof's layout: the same damage, the same offset
    with pytest.warns(RuntimeWarning, match=r"data CRC mismatch"):
        tfprof.convert(source, out, salvage=True)
    assert [span["name"] for span in read_trace(out).spans("user_annotation")] == ["a:Const", "b:Square", "c:Add"]


def test_an_input_that_ends_early_converts_to_its_last_whole_step_with_a_warning(tmp_path):
    # What a streamed trace's program killed mid-write leaves: the JSON cut inside an event.
    events = []
    for step in range(3):
        events.append(f'{{"ph":"X","cat":"step","name":"step {step}","ts":{step * 100},"dur":90,'
                      f'"pid":1,"tid":1,"args":{{"step":{step}}}}}')
        events.append(f'{{"ph":"X","name":"Op","ts":{step * 100 + 10},"dur":50,"pid":1,"tid":1}}')
    text = '{"traceEvents":[' + ",".join(events)
    source = tmp_path / "cut.json"
    source.write_text(text[: len(text) - 20])
    out = tmp_path / "out.json"
    with pytest.warns(RuntimeWarning, match=rf"^tfprof.convert: warning: {source}: the file ends at byte "
                                            rf"{len(text) - 20} \(inside an event.*dropped step 2"):
        tfprof.convert(source, out)
    ops = [event for event in read_trace(out).raw["traceEvents"] if event.get("name") == "Op"]
    assert len(ops) == 2  # steps 0 and 1, whole


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", r"byte offset 0: empty file"),
        (b"{\"traceEvents\": []}", r"bad.input: no step statistics to convert: the trace holds no events"),
        (b"\x00\x01 neither", r"byte offset \d+: neither a TFRecord file .* nor a binary RunMetadata or StepStats"),
        (record(b"\x00\x01\x02 not a protobuf"), r"record at byte offset 0: not a RunMetadata record"),
        (event_file([]), r"no step statistics to convert"),
    ],
)
def test_inputs_that_hold_no_step_statistics_say_why(tmp_path, content, problem):
    source = tmp_path / "bad.input"
    source.write_bytes(content)
    with pytest.raises(ValueError, match=problem) as raised:
        tfprof.convert(source, tmp_path / "out.json", layout="timeline")
    assert str(source) in str(raised.value)


def test_argument_errors(tmp_path):
    source = tmp_path / "run.pb"
    source.write_bytes(small_run(10))
    with pytest.raises(FileNotFoundError, match="no such input"):
        tfprof.convert(tmp_path / "missing.pb", tmp_path / "out.json")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tfprof.convert(source, tmp_path / "no_dir" / "out.json")
    with pytest.raises(ValueError, match=r"layout=timeline writes Chrome trace JSON: name it .json or .json.gz"):
        tfprof.convert(source, tmp_path / "out.pb", layout="timeline")
    with pytest.raises(ValueError, match=r"rows='fast' is not one of threads, lanes"):
        tfprof.convert(source, tmp_path / "out.json", rows="fast")
    with pytest.raises(ValueError, match=r"rows draw timeline.py's layout: they need layout=timeline"):
        tfprof.convert(source, tmp_path / "out.json", rows="lanes")
    with pytest.raises(ValueError, match=r"layout='kineto' is not one of tfprof, timeline"):
        tfprof.convert(source, tmp_path / "out.json", layout="kineto")
    with pytest.raises(ValueError, match=r"extension '.txt' names no supported format"):
        tfprof.convert(source, tmp_path / "out.txt")
    with pytest.raises(ValueError, match=r"refusing to overwrite"):
        tfprof.convert(source, source)
    with pytest.raises(ValueError, match="no input files"):
        tfprof.merge([], tmp_path / "out.json")
    empty_dir = tmp_path / "empty_logdir"
    empty_dir.mkdir()
    with pytest.raises(ValueError, match="a directory with no event files"):
        tfprof.merge([source, empty_dir], tmp_path / "out.json", layout="timeline")
    with pytest.raises(OSError, match="a directory with no TensorBoard event file"):
        tfprof.merge([source, empty_dir], tmp_path / "out.json")


def test_converting_while_a_session_runs_leaves_the_session_alone(tmp_path):
    source = tmp_path / "run.pb"
    source.write_bytes(run_metadata([device("/device:GPU:0/stream:all", [op("k", "gemm@@dense/MatMul:MatMul#", 50, 4)])]))
    with tfprof.trace(tmp_path / "session.json"):
        with tfprof.span("converting"):
            tfprof.convert(source, tmp_path / "converted.json", layout="timeline")
        assert tfprof.is_running()
    kernel = only(read_trace(tmp_path / "converted.json").spans("Op"), "MatMul")
    assert kernel["args"] == {"name": "dense/MatMul", "op": "MatMul"}
    assert read_trace(tmp_path / "session.json").span_names() == ["converting"]


def test_a_session_writes_an_xplane_profile(tmp_path):
    """TensorBoard's profile format is an output too: a session and export() write it, and it
    reads back with the session's spans and steps."""
    with tfprof.trace(tmp_path / "host.xplane.pb"):
        for number in range(3):
            with tfprof.step(number):
                with tfprof.span("work"):
                    pass
    session = tfprof.trace()
    with session:
        with tfprof.span("later"):
            pass
    session.export(tmp_path / "again.xplane.pb")
    tfprof.convert(tmp_path / "host.xplane.pb", tmp_path / "host.json")
    events = json.loads((tmp_path / "host.json").read_text())["traceEvents"]
    assert sum(1 for e in events if e.get("name") == "work" and e["ph"] == "X") == 3
    assert [e["args"]["step"] for e in events if e.get("cat") == "step"] == [0, 1, 2]
    tfprof.convert(tmp_path / "again.xplane.pb", tmp_path / "again.json", format="json")
    events = json.loads((tmp_path / "again.json").read_text())["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "X"] == ["later"]


def test_a_log_directory_gets_the_xplane_profile_of_tensorboards_profile_tab(tmp_path):
    with tfprof.trace(tmp_path / "trace.json"):
        with tfprof.step(0):
            with tfprof.span("work"):
                pass
    tfprof.convert(tmp_path / "trace.json", f"{tmp_path}/logs/")
    assert len(list((tmp_path / "logs").glob("events.out.tfevents.*"))) == 1
    profiles = list((tmp_path / "logs" / "plugins" / "profile").glob("*/*.xplane.pb"))
    assert len(profiles) == 1
    tfprof.convert(profiles[0], tmp_path / "profile.json")
    events = json.loads((tmp_path / "profile.json").read_text())["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "X" and e.get("cat") != "step"] == ["work"]
    # Off: the event file alone; a session takes the same option.
    tfprof.convert(tmp_path / "trace.json", f"{tmp_path}/plain/", tensorboard_profile=False)
    assert sorted(p.name for p in (tmp_path / "plain").iterdir())[0].startswith("events.out.tfevents.")
    assert not (tmp_path / "plain" / "plugins").exists()
    with tfprof.trace(f"{tmp_path}/session/", tensorboard_profile="off"):
        with tfprof.span("work"):
            pass
    assert not (tmp_path / "session" / "plugins").exists()
    with pytest.raises(TypeError, match="tensorboard_profile='no' has type str; expected bool"):
        tfprof.convert(tmp_path / "trace.json", f"{tmp_path}/x/", tensorboard_profile="no")
