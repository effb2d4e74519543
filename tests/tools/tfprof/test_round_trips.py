"""Round trips through TensorFlow's formats (.pb RunMetadata, .tfrecord, TensorBoard event files)
and merges keep what a trace says about its steps and its losses: no step appears that the source
did not have (what lies outside steps stays outside them), a .tfrecord of N steps is N records
unless something lies outside them, and a trace whose format records no losses never comes back
as "none dropped"."""

from __future__ import annotations

import json
import pathlib
import struct
from decimal import Decimal
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof
from protobuf_wire import fields
from tfprof_trace_builder import MS, TfprofTrace

TF_TIMELINE = (ROOT / "tests" / "data" / "real" / "tensorflow" / "ikhlestov_tensorflow_profiling" /
               "GPU" / "timeline_01.json")
TF_FORMATS = ["pb", "tfrecord", "tensorboard"]
NOT_RECORDED = "Dropped events: this format does not record losses."


# ---- TensorFlow's files, read here without TensorFlow --------------------------------------------

def tfrecord_records(path: pathlib.Path) -> List[bytes]:
    """Each record's data: length (u64), its CRC, the data, its CRC."""
    data, records, at = path.read_bytes(), [], 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        records.append(data[at + 12:at + 12 + length])
        at += 12 + length + 4
    return records


def nodes(run_metadata: bytes) -> List[Tuple[str, str]]:
    """(node_name, timeline_label) of every node of a RunMetadata, device by device."""
    found = []
    for number, _, step_stats in fields(run_metadata):
        if number != 1:  # RunMetadata.step_stats
            continue
        for number, _, device in fields(step_stats):
            if number != 1:  # StepStats.dev_stats
                continue
            for number, _, node in fields(device):
                if number != 2:  # DeviceStepStats.node_stats
                    continue
                parts = {number: value for number, _, value in fields(node)}
                found.append((parts.get(1, b"").decode(), parts.get(8, b"").decode()))
    return found


def tensorboard_run_metadata(directory: pathlib.Path) -> List[Tuple[str, bytes]]:
    """(tag, RunMetadata) of each tagged_run_metadata event of the directory's event file."""
    (event_file,) = directory.glob("events.out.tfevents.*")
    found = []
    for record in tfrecord_records(event_file):
        for number, _, tagged in fields(record):
            if number == 8:  # Event.tagged_run_metadata
                parts = {number: value for number, _, value in fields(tagged)}
                found.append((parts[1].decode(), parts[2]))
    return found


# ---- traces -------------------------------------------------------------------------------------

def stepped(tmp_path: pathlib.Path, outside: bool, dropped: int = 0) -> pathlib.Path:
    """tfprof's trace of 3 steps of 10 ms, a span in each; `outside`: spans before and after."""
    trace = TfprofTrace(dropped_events=dropped).thread(1, "MainThread")
    if outside:
        trace.span("setup", 0, 2 * MS)
    for index in range(3):
        begin = (5 + 10 * index) * MS
        trace.step(index + 1, begin, begin + 10 * MS)
        trace.span("train_step", begin + MS, begin + 9 * MS)
    if outside:
        trace.span("save_checkpoint", 40 * MS, 45 * MS)
    return trace.write(tmp_path / ("outside.json" if outside else "steps.json"))


def stepless(tmp_path: pathlib.Path, dropped: int = 0) -> pathlib.Path:
    trace = TfprofTrace(dropped_events=dropped).thread(1, "MainThread")
    trace.span("load", 0, 3 * MS).span("infer", 3 * MS, 9 * MS)
    return trace.write(tmp_path / "stepless.json")


def foreign(tmp_path: pathlib.Path) -> pathlib.Path:
    """A Chrome trace of no profiler tfprof knows: no losses, no steps, epoch microseconds."""
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "load", "pid": 1, "tid": 1,
         "ts": 1_700_000_000_000_000, "dur": 3000},
        {"ph": "X", "cat": "cpu_op", "name": "infer", "pid": 1, "tid": 1,
         "ts": 1_700_000_000_003_000, "dur": 6000}]}))
    return path


def convert(tfprof_exe: pathlib.Path, source: pathlib.Path, target: pathlib.Path) -> pathlib.Path:
    # A path without a suffix is a log directory.
    output = str(target) + ("" if target.suffix else "/")
    run_tfprof(tfprof_exe, "convert", str(source), "-o", output)
    return target


def target_of(tmp_path: pathlib.Path, form: str) -> pathlib.Path:
    return tmp_path / "logs" if form == "tensorboard" else tmp_path / f"out.{form}"


def summary(tfprof_exe: pathlib.Path, path: pathlib.Path) -> Dict[str, Any]:
    (trace,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)["traces"]
    return trace


def summary_text(tfprof_exe: pathlib.Path, path: pathlib.Path) -> str:
    return run_tfprof(tfprof_exe, "summary", str(path)).stdout


def host_spans(tfprof_exe: pathlib.Path, path: pathlib.Path,
               tmp_path: pathlib.Path) -> List[Tuple[str, int, int]]:
    """(name, Unix ns, duration ns) of the host spans, as tfprof's Chrome trace of `path` says."""
    back = convert(tfprof_exe, path, tmp_path / f"spans-of-{path.name}.json")
    doc = json.loads(back.read_text(), parse_float=Decimal)
    header = doc["tfprof"]
    offset = header.get("start_time_unix_ns", 0) - header.get("start_time_monotonic_ns", 0)
    return sorted((e["name"], int(Decimal(e["ts"]) * 1000) + offset, int(Decimal(e["dur"]) * 1000))
                  for e in doc["traceEvents"]
                  # A conversion to JSON keeps a PyTorch host op's "cpu_op"; TensorFlow's formats
                  # hold no category, and their host ops come back as "user_annotation".
                  if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "cpu_op"))


# ---- steps --------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", TF_FORMATS)
@pytest.mark.parametrize("make", [stepless, foreign], ids=["tfprof", "foreign"])
def test_a_trace_without_steps_gets_none(tfprof_exe, tmp_path, make, form):
    source = make(tmp_path)
    converted = convert(tfprof_exe, source, target_of(tmp_path, form))
    trace = summary(tfprof_exe, converted)
    assert not trace["has_steps"]
    assert trace["steps"] == [] or [s["number"] for s in trace["steps"]] == [-1]
    # Every span comes back, at its time.
    assert host_spans(tfprof_exe, converted, tmp_path) == host_spans(tfprof_exe, source, tmp_path)


@pytest.mark.parametrize("form", TF_FORMATS)
def test_a_tensorflow_timeline_gets_no_step_either(tfprof_exe, tmp_path, form):
    converted = convert(tfprof_exe, TF_TIMELINE, target_of(tmp_path, form))
    assert not summary(tfprof_exe, converted)["has_steps"]


@pytest.mark.parametrize("form", TF_FORMATS)
@pytest.mark.parametrize("outside", [False, True], ids=["inside", "outside"])
def test_steps_come_back_as_they_were_and_no_other(tfprof_exe, tmp_path, form, outside):
    source = stepped(tmp_path, outside)
    converted = convert(tfprof_exe, source, target_of(tmp_path, form))
    before, after = summary(tfprof_exe, source), summary(tfprof_exe, converted)

    def unix_steps(trace: Dict[str, Any]) -> List[Tuple[int, int, int]]:
        return [(s["number"], s["begin_ns"] + trace["wall_offset_ns"], s["duration_ns"])
                for s in trace["steps"]]

    assert unix_steps(after) == unix_steps(before)
    assert host_spans(tfprof_exe, converted, tmp_path) == host_spans(tfprof_exe, source, tmp_path)


# ---- records ------------------------------------------------------------------------------------

def test_a_tfrecord_of_n_steps_is_n_records_with_the_losses_in_the_last(tfprof_exe, tmp_path):
    converted = convert(tfprof_exe, stepped(tmp_path, outside=False, dropped=4),
                        tmp_path / "out.tfrecord")
    records = [nodes(record) for record in tfrecord_records(converted)]
    assert [names[0][0] for names in records] == ["step_000001", "step_000002", "step_000003"]
    losses = [(index, label) for index, names in enumerate(records)
              for name, label in names if name == "tfprof/losses"]
    assert len(losses) == 1 and losses[0][0] == 2
    assert losses[0][1].startswith("tfprof/losses = Losses(dropped_events=4, ")
    back = summary(tfprof_exe, converted)
    assert [s["number"] for s in back["steps"]] == [1, 2, 3]
    assert back["losses"]["reported"] and back["losses"]["dropped_events"] == 4


def test_spans_outside_steps_make_one_more_record_that_is_no_step(tfprof_exe, tmp_path):
    converted = convert(tfprof_exe, stepped(tmp_path, outside=True), tmp_path / "out.tfrecord")
    records = [nodes(record) for record in tfrecord_records(converted)]
    assert len(records) == 4
    assert sorted(name for name, _ in records[3]) == ["save_checkpoint", "setup", "tfprof/losses"]
    assert [s["number"] for s in summary(tfprof_exe, converted)["steps"]] == [1, 2, 3]


@pytest.mark.parametrize("form", ["pb", "tfrecord"])
def test_the_outside_record_of_a_trace_without_losses_says_so(tfprof_exe, tmp_path, form):
    converted = convert(tfprof_exe, foreign(tmp_path), tmp_path / f"out.{form}")
    records = [converted.read_bytes()] if form == "pb" else tfrecord_records(converted)
    (only,) = records
    labels = dict(nodes(only))
    assert labels["tfprof/losses"] == "tfprof/losses = Losses(recorded=false)"
    assert sorted(labels) == ["infer", "load", "tfprof/losses"]


def test_event_files_tag_steps_and_the_outside_record(tfprof_exe, tmp_path):
    converted = convert(tfprof_exe, stepped(tmp_path, outside=False), tmp_path / "logs")
    assert [tag for tag, _ in tensorboard_run_metadata(converted)] == [
        "step_000001", "step_000002", "step_000003"]
    converted = convert(tfprof_exe, stepped(tmp_path, outside=True), tmp_path / "logs2")
    assert [tag for tag, _ in tensorboard_run_metadata(converted)] == [
        "step_000001", "step_000002", "step_000003", "outside_steps"]


# ---- losses -------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["json", "json.gz"] + TF_FORMATS)
@pytest.mark.parametrize("make", [foreign, lambda tmp_path: TF_TIMELINE],
                         ids=["foreign", "timeline"])
def test_unrecorded_losses_stay_unrecorded_through_a_conversion(tfprof_exe, tmp_path, make, form):
    converted = convert(tfprof_exe, make(tmp_path), target_of(tmp_path, form))
    assert not summary(tfprof_exe, converted)["losses"]["reported"]
    assert NOT_RECORDED in summary_text(tfprof_exe, converted)
    # And through a second one, from tfprof's own Chrome trace.
    again = convert(tfprof_exe, converted, tmp_path / "again.pb")
    assert NOT_RECORDED in summary_text(tfprof_exe, again)


@pytest.mark.parametrize("form", ["json"] + TF_FORMATS)
def test_recorded_losses_survive_a_conversion(tfprof_exe, tmp_path, form):
    converted = convert(tfprof_exe, stepless(tmp_path, dropped=7), target_of(tmp_path, form))
    losses = summary(tfprof_exe, converted)["losses"]
    assert losses["reported"] and losses["dropped_events"] == 7
    assert "Dropped events: 7 host events, 0 GPU records.\n" in summary_text(tfprof_exe, converted)


def test_a_merge_of_unrecorded_losses_records_none(tfprof_exe, tmp_path):
    merged = tmp_path / "merged.json"
    run_tfprof(tfprof_exe, "merge", str(foreign(tmp_path)), str(TF_TIMELINE), "-o", str(merged))
    assert not summary(tfprof_exe, merged)["losses"]["reported"]
    assert NOT_RECORDED in summary_text(tfprof_exe, merged)


@pytest.mark.parametrize("dropped, line", [
    (0, "Dropped events: none in the inputs that record losses; "
        "1 merged input does not record them.\n"),
    (7, "Dropped events: 7 host events, 0 GPU records in the inputs that record losses; "
        "1 merged input does not record them.\n"),
])
def test_a_merge_says_which_inputs_record_no_losses(tfprof_exe, tmp_path, dropped, line):
    merged = tmp_path / "merged.json"
    run_tfprof(tfprof_exe, "merge", str(stepless(tmp_path, dropped=dropped)),
               str(foreign(tmp_path)), "-o", str(merged))
    losses = summary(tfprof_exe, merged)["losses"]
    assert losses["reported"] and losses["dropped_events"] == dropped
    assert line in summary_text(tfprof_exe, merged)
    # The same after the merge is converted to TensorFlow's formats and back.
    for form in TF_FORMATS:
        (tmp_path / form).mkdir()
        converted = convert(tfprof_exe, merged, target_of(tmp_path / form, form))
        assert line in summary_text(tfprof_exe, converted)
        # A merge of the merge counts its inputs' unknown inputs.
        twice = tmp_path / form / "twice.json"
        run_tfprof(tfprof_exe, "merge", str(converted), str(foreign(tmp_path / form)),
                   "-o", str(twice))
        assert "2 merged inputs do not record them.\n" in summary_text(tfprof_exe, twice)
