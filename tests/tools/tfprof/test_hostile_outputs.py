"""Outputs in hostile or odd places, and input made to flood error messages (issue 32): output
files honour the umask, temporary names cannot be planted in advance, a log directory that is a
symbolic link of another user is refused, a trace with nothing TensorFlow's formats hold still
converts to a file they read, a 100,000-digit number is not echoed whole, and an interrupted
conversion leaves no directory it created."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import time

import pytest

from conftest import run_tfprof

COUNTERS_ONLY = {"traceEvents": [
    {"ph": "C", "name": "loss", "ts": 1, "pid": 1, "tid": 1, "args": {"value": 1}},
    {"ph": "C", "name": "loss", "ts": 5, "pid": 1, "tid": 1, "args": {"value": 2}}]}
ONE_SPAN = {"traceEvents": [{"ph": "X", "name": "op", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}


def write_json(path: pathlib.Path, doc: object) -> pathlib.Path:
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("output", ["t.tfrecord", "t.pb", "logs/"])
def test_a_trace_of_counters_only_converts_to_a_file_tensorflows_formats_read(tfprof_exe, tmp_path, output):
    source = write_json(tmp_path / "counters.json", COUNTERS_ONLY)
    target = tmp_path / output
    run_tfprof(tfprof_exe, "convert", str(source), "-o", f"{tmp_path}/{output}")
    if output.endswith("/"):
        files = list(target.glob("events.out.tfevents.*"))
        assert len(files) == 1 and files[0].stat().st_size > 0
    else:
        assert target.stat().st_size > 0
    back = run_tfprof(tfprof_exe, "summary", "--json", str(target))
    report = json.loads(back.stdout)
    assert report["errors"] == []
    assert report["traces"][0]["steps"] == []


def test_outputs_honour_a_group_writable_umask(tfprof_exe, tmp_path):
    source = write_json(tmp_path / "one.json", ONE_SPAN)
    script = (f"umask 002; {tfprof_exe} convert {source} -o {tmp_path / 'out.json'} && "
              f"{tfprof_exe} convert {source} -o {tmp_path / 'out.pb'}")
    subprocess.run(["sh", "-c", script], check=True, capture_output=True)
    for name in ("out.json", "out.pb"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o664, name


def test_files_planted_at_old_temporary_names_do_not_block_an_output(tfprof_exe, tmp_path):
    source = write_json(tmp_path / "one.json", ONE_SPAN)
    out = tmp_path / "out"
    out.mkdir()
    # The names tfprof used to stage a file under were .tfprof-PID-N.tmp: a process id and a
    # counter, guessable. Plant them for every process id near ours, a dangling link each.
    base = os.getpid()
    for pid in range(base, base + 200):
        for sequence in range(4):
            (out / f".tfprof-{pid}-{sequence}.tmp").symlink_to(tmp_path / "nowhere")
    for fmt in ("json", "pb", "tfrecord"):
        run_tfprof(tfprof_exe, "convert", str(source), "-o", str(out / f"t.{fmt}"))
        assert (out / f"t.{fmt}").stat().st_size > 0
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a link owned by another user needs root")
def test_a_log_directory_that_is_another_users_symbolic_link_is_refused(tfprof_exe, tmp_path):
    source = write_json(tmp_path / "one.json", ONE_SPAN)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = tmp_path / "logs"
    planted.symlink_to(elsewhere)
    os.lchown(planted, 65534, 65534)  # nobody's
    result = run_tfprof(tfprof_exe, "convert", str(source), "-o", f"{planted}/", check=None)
    assert result.returncode != 0
    assert "symbolic link owned by another user (uid 65534)" in result.stderr
    assert list(elsewhere.iterdir()) == []
    # The user's own link is followed as before.
    os.lchown(planted, os.geteuid(), os.getegid())
    run_tfprof(tfprof_exe, "convert", str(source), "-o", f"{planted}/")
    assert len(list(elsewhere.glob("events.out.tfevents.*"))) == 1


def test_a_huge_number_is_not_echoed_whole_in_the_error(tfprof_exe, tmp_path):
    digits = "9" * 100_000
    source = tmp_path / "huge.json"
    source.write_text('{"traceEvents":[{"ph":"X","name":"op","ts":' + digits + ',"dur":1,"pid":1,"tid":1}]}')
    result = run_tfprof(tfprof_exe, "summary", str(source), check=None)
    assert result.returncode != 0
    assert "is out of range" in result.stderr
    assert "(100000 bytes)" in result.stderr
    assert len(result.stderr) < 1000


def test_a_damaged_trace_is_refused_with_the_way_to_read_what_it_holds(tfprof_exe, tmp_path):
    # Garbage inside the event array (a cut file is recovered:
    # tests/runtime/model/cut_recovery_test.cc).
    spans = [{"ph": "X", "name": f"op{i}", "ts": i * 10, "dur": 5, "pid": 1, "tid": 1} for i in range(50)]
    text = json.dumps({"traceEvents": spans})
    damaged = tmp_path / "damaged.json"
    at = text.index(",", len(text) // 2) + 1  # no JSON value starts with '@'
    damaged.write_text(text[:at] + "@@@" + text[at:])
    for command in ("summary", "report"):
        refused = run_tfprof(tfprof_exe, command, str(damaged), check=None)
        assert refused.returncode == 1
        assert f"{damaged}: byte " in refused.stderr
        assert f"tfprof {command}: --salvage reads what the file holds before the damage" in refused.stderr
    salvaged = run_tfprof(tfprof_exe, "summary", "--json", "--salvage", str(damaged))
    report = json.loads(salvaged.stdout)["traces"][0]
    assert 20 <= report["activities"] < 50


def test_a_cut_trace_is_recovered_by_summary_and_report_with_a_warning(tfprof_exe, tmp_path):
    # A streamed trace whose program was killed in the middle of a write ends inside an event.
    spans = [{"ph": "X", "name": f"op{i}", "ts": i * 10, "dur": 5, "pid": 1, "tid": 1} for i in range(50)]
    text = json.dumps({"traceEvents": spans})
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    whole_events = cut.read_text().count('"tid": 1}')
    for command, extra in (("summary", ()), ("report", ("-o", str(tmp_path / "report.html")))):
        result = run_tfprof(tfprof_exe, command, str(cut), *extra)
        assert (f"tfprof {command}: warning: {cut}: the file ends at byte {len(text) // 2} "
                "(inside an event: cut while being written?); recovered what precedes the cut: "
                f"kept {whole_events} events (the file has no steps)") in result.stderr
    assert "the file ends early" in (tmp_path / "report.html").read_text()


def many_steps(path: pathlib.Path, steps: int) -> pathlib.Path:
    """A trace of `steps` steps of 20 spans each, written as JSON text directly (fast)."""
    with open(path, "w") as out:
        out.write('{"traceEvents":[')
        for step in range(steps):
            base = step * 100
            out.write(f'{{"ph":"X","cat":"step","name":"step {step}","ts":{base},"dur":90,'
                      f'"pid":1,"tid":1,"args":{{"step":{step}}}}},')
            out.write(",".join(f'{{"ph":"X","name":"op{k}","ts":{base + k * 4},"dur":3,"pid":1,'
                               f'"tid":1}}' for k in range(20)))
            out.write("," if step + 1 < steps else "")
        out.write("]}")
    return path


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_conversion_to_a_log_directory_leaves_no_directory(tfprof_exe, tmp_path, number):
    target = tmp_path / "logs"
    for steps in (20_000, 80_000, 320_000):
        source = many_steps(tmp_path / f"steps{steps}.json", steps)
        process = subprocess.Popen([str(tfprof_exe), "convert", str(source), "-o", f"{target}/"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   preexec_fn=lambda: signal.signal(number, signal.SIG_DFL))
        while process.poll() is None and not target.exists():
            time.sleep(0.001)
        if process.poll() is None:  # the directory is there and the event file being written
            process.send_signal(number)
            assert process.wait(timeout=60) == -number
            assert not target.exists()
            return
        assert process.returncode == 0  # finished before it could be interrupted: a bigger one
        shutil.rmtree(target)
    pytest.fail("every conversion finished before the directory could be seen")
