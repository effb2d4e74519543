"""Errors are Python exceptions with messages that say what, where and why; nothing is lost."""

import contextlib
import ctypes
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import tfprof
from trace_file import read_trace


def test_a_second_trace_while_one_runs_is_refused_and_the_first_goes_on(tmp_path):
    path = tmp_path / "first.json"
    with tfprof.trace(path):
        with pytest.raises(RuntimeError, match=r"already running .*started for '.*first.json'"):
            tfprof.trace(tmp_path / "second.json").start()
        with pytest.raises(RuntimeError, match="already running"):
            with tfprof.trace():
                pass
        with tfprof.span("still_recorded"):
            pass
    assert read_trace(path).span_names() == ["still_recorded"]
    assert not (tmp_path / "second.json").exists()


def test_a_session_started_from_c_is_named_as_the_reason(tmp_path):
    library = ctypes.CDLL(tfprof.library_path())
    assert library.prof_start(None) == 0
    try:
        with pytest.raises(RuntimeError, match="started outside tfprof.trace"):
            tfprof.trace().start()
    finally:
        assert library.prof_stop() == 0


@pytest.mark.parametrize(
    "options, message",
    [
        ({"bufer_events": 4096}, r"option 'bufer_events': unknown key \(known: buffer_events, output, format, flush_interval_ms, full_ring_wait_ms, clock, warnings, max_memory_mb, spill_dir, keep, dump_on_slow_step, tensorboard_profile, cuda, cupti_path, cupti_search, cupti_buffer_kb, cupti_buffers, cuda_sync, cuda_queries, gpu_wait_ms\)"),
        ({"buffer_events": 3}, r"option 'buffer_events': '3' is not an integer in \[16, 67108864\]"),
        ({"clock": "wall"}, r"option 'clock': 'wall' is not one of auto, tsc, monotonic"),
        ({"flush_interval_ms": -1}, r"option 'flush_interval_ms': '-1' is not an integer in \[0, 60000\]"),
        ({"cuda": "yes"}, r"option 'cuda': 'yes' is not one of auto, on, off"),
        ({"cupti_buffers": 1}, r"option 'cupti_buffers': '1' is not an integer in \[2, 4096\]"),
        ({"path": "trace.txt"}, r"extension '.txt' names no supported format \(supported: .json, .json.gz, .pb, .xplane.pb, .tfrecord, .pftrace, .perfetto-trace, or a directory for a TensorBoard event file\)"),
    ],
)
def test_bad_options_are_value_errors_listing_what_is_accepted(options, message):
    with pytest.raises(ValueError, match=message) as raised:
        tfprof.trace(**options).start()
    assert str(raised.value).startswith("tfprof.trace: ")
    assert "offset" not in str(raised.value)
    assert not tfprof.is_running()


def test_option_values_of_the_wrong_type_are_type_errors():
    with pytest.raises(TypeError, match=r"buffer_events=\[4\] has type list; expected int, float, str, bool or a path"):
        tfprof.trace(buffer_events=[4])
    # A float reaches the library, which says what the option takes.
    with pytest.raises(ValueError, match=r"option 'buffer_events': '4\.5' is not an integer"):
        tfprof.trace(buffer_events=4.5).start()
    with pytest.raises(ValueError, match="either as path or as output="):
        tfprof.trace("a.json", output="b.json")


def test_a_comma_in_a_value_cannot_smuggle_in_another_option():
    with pytest.raises(ValueError, match=r"option 'clock': 'tsc,buffer_events=16' is not one of"):
        tfprof.trace(clock="tsc,buffer_events=16").start()


def test_an_output_directory_that_does_not_exist_fails_before_anything_runs(tmp_path):
    path = tmp_path / "missing" / "trace.json"
    with pytest.raises(FileNotFoundError, match="the directory .*missing' does not exist") as raised:
        with tfprof.trace(path):
            pytest.fail("the block must not run")
    assert raised.value.filename == str(path)
    assert not tfprof.is_running()


def test_an_unwritable_export_path_is_an_oserror_naming_it_and_loses_nothing(tmp_path):
    bad = tmp_path / "no_such_dir" / "trace.json"
    with tfprof.trace() as trace:
        with tfprof.span("kept"):
            pass
        with pytest.raises(OSError, match=f"cannot open for writing '{bad}': No such file or directory"):
            trace.export(bad)
        with pytest.raises(ValueError, match="extension '.xml'"):
            trace.export(tmp_path / "trace.xml")
    with pytest.raises(OSError, match=str(bad)):
        trace.export(bad)
    trace.export(tmp_path / "good.json")
    assert read_trace(tmp_path / "good.json").span_names() == ["kept"]


def test_when_the_export_at_exit_fails_the_session_stops_and_the_data_can_go_elsewhere(tmp_path):
    directory = tmp_path / "goes_away"
    directory.mkdir()
    path = directory / "trace.json"
    with pytest.raises(OSError, match=str(path)):
        with tfprof.trace(path) as trace:
            with tfprof.span("collected"):
                pass
            shutil.rmtree(directory)
    assert not tfprof.is_running() and not trace.running
    assert trace.stats.events_recorded == 2
    trace.export(tmp_path / "rescued.json")
    assert read_trace(tmp_path / "rescued.json").span_names() == ["collected"]


def test_a_failed_export_never_replaces_the_exception_that_ended_the_block(tmp_path):
    directory = tmp_path / "goes_away"
    directory.mkdir()
    error = RuntimeError("training diverged")
    with pytest.warns(RuntimeWarning, match="call export\\(\\) to write the data elsewhere"):
        with pytest.raises(RuntimeError) as raised:
            with tfprof.trace(directory / "trace.json") as trace:
                with tfprof.span("before_failure"):
                    pass
                shutil.rmtree(directory)
                raise error
    assert raised.value is error
    trace.export(tmp_path / "rescued.json")
    assert read_trace(tmp_path / "rescued.json").span_names() == ["before_failure"]


def test_misuse_of_a_trace_object_says_what_state_it_is_in(tmp_path):
    trace = tfprof.trace()
    with pytest.raises(RuntimeError, match="never started"):
        trace.export(tmp_path / "x.json")
    with pytest.raises(RuntimeError, match="never started"):
        trace.stats
    with pytest.raises(RuntimeError, match="cannot stop a trace that is not started"):
        trace.stop()
    trace.start()
    with pytest.raises(RuntimeError, match="already started"):
        trace.start()
    trace.stop()
    with pytest.raises(RuntimeError, match="cannot stop a trace that is stopped"):
        trace.stop()
    with pytest.raises(RuntimeError, match="already started"):
        trace.start()
    with tfprof.trace():
        pass
    with pytest.raises(RuntimeError, match="a later session replaced its data"):
        trace.export(tmp_path / "x.json")
    assert not os.path.exists(tmp_path / "x.json")
    assert trace.stats.running is False  # the final figures stay readable


def test_unmatched_ends_are_counted_not_fatal(tmp_path):
    with tfprof.trace(tmp_path / "t.json") as trace:
        tfprof.span("never_opened").__exit__(None, None, None)
        tfprof.step(3).__exit__(None, None, None)
    assert trace.stats.unmatched_span_ends == 1
    assert trace.stats.unmatched_step_ends == 1


def test_nul_characters_in_paths_and_options_are_refused_not_truncated(tmp_path):
    with pytest.raises(ValueError, match="contains a NUL character"):
        tfprof.trace(clock="tsc\0junk").start()
    with tfprof.trace() as trace:
        with pytest.raises(ValueError, match="the path contains a NUL character"):
            trace.export(str(tmp_path / "out.json") + "\0.gz")
    assert not (tmp_path / "out.json").exists()


def test_a_trace_never_stops_or_exports_a_session_c_code_started_after_stopping_it(tmp_path):
    library = ctypes.CDLL(tfprof.library_path())
    library.prof_span_begin.argtypes = [ctypes.c_char_p]
    path = tmp_path / "python.json"
    trace = tfprof.trace(path).start()
    with tfprof.span("python_span"):
        pass
    assert library.prof_stop() == 0  # C stops the Python session (and exports it to `path`)
    assert library.prof_start(None) == 0  # and starts its own
    try:
        with pytest.raises(RuntimeError, match="a later session replaced its data"):
            trace.export(tmp_path / "other.json")
        with pytest.raises(RuntimeError, match="stopped outside tfprof.trace and a later session replaced its data"):
            trace.stop()
        assert tfprof.is_running()  # the C session was left alone
    finally:
        assert library.prof_stop() == 0
    assert read_trace(path).span_names() == ["python_span"]


def test_a_trace_stopped_by_c_code_still_stops_cleanly_with_its_figures(tmp_path):
    library = ctypes.CDLL(tfprof.library_path())
    path = tmp_path / "stopped_by_c.json"
    with tfprof.trace(path) as trace:
        with tfprof.span("python_span"):
            pass
        assert library.prof_stop() == 0
    assert trace.stats.events_recorded == 2
    assert read_trace(path).span_names() == ["python_span"]


FULL_DISK_PROGRAM = textwrap.dedent("""
    import resource, signal, sys, tfprof
    out = sys.argv[1]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    with tfprof.trace(cuda="off") as trace:
        for _ in range(20000):
            with tfprof.span("op"):
                pass
    trace.export(out + "/whole.json")
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))  # a disk that fills after 4 KiB
    for target in ("logs/", "trace.json", "trace.pb", "trace.tfrecord"):
        try:
            trace.export(out + "/" + target)
            print("written", target)
        except OSError as error:
            print("failed", target, error)
    try:
        tfprof.convert(out + "/whole.json", out + "/converted/")
        print("written converted/")
    except OSError as error:
        print("failed converted/", error)
    # Nothing was lost: with room again the same session still exports.
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    trace.export(out + "/again.json")
""")


def test_exports_that_run_out_of_disk_fail_naming_the_path_and_leave_nothing_behind(tmp_path):
    # RLIMIT_FSIZE stands in for a full disk (it works without root, and with it).
    done = subprocess.run([sys.executable, "-c", FULL_DISK_PROGRAM, str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5
    for line, target in zip(lines, ("logs/", "trace.json", "trace.pb", "trace.tfrecord", "converted/")):
        assert line.startswith(f"failed {target} "), line
        assert str(tmp_path) in line and "File too large" in line, line
    # No log directory, no temporary file, no partial output: only what was written with room.
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["again.json", "whole.json"]
    assert read_trace(tmp_path / "again.json").span_names() == read_trace(tmp_path / "whole.json").span_names()


STREAM_FULL_DISK_PROGRAM = textwrap.dedent("""
    import glob, os, resource, shutil, signal, sys, time, tfprof
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    out, target = sys.argv[1], sys.argv[2]
    path = os.path.join(out, target)
    trace = tfprof.trace(path, cuda="off", flush_interval_ms=1).start()

    def steps(first, last):
        for step in range(first, last + 1):
            with tfprof.step(step):
                for _ in range(200):
                    with tfprof.span("op"):
                        pass
            time.sleep(0.2)  # the step settles and is written

    steps(1, 5)
    written = path if not path.endswith("/") else glob.glob(path + "events.out.tfevents.*")[0]
    size = os.path.getsize(written)
    shutil.copyfile(written, os.path.join(out, "before" + os.path.splitext(target.rstrip("/"))[1]))
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, hard))  # room for part of one step
    steps(6, 10)
    try:
        trace.stop()
        print("stopped")
    except OSError as error:
        print("failed:", error)
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    print(written)
""")


@pytest.mark.parametrize("target", ["stream.json", "stream.tfrecord", "logs/"])
def test_a_streamed_output_that_runs_out_of_disk_keeps_its_whole_steps_readable(tmp_path, target):
    done = subprocess.run([sys.executable, "-c", STREAM_FULL_DISK_PROGRAM, str(tmp_path), target],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcome, written = done.stdout.splitlines()
    # Reported once, at stop, naming the file and the reason.
    assert outcome == f"failed: cannot write '{written}': File too large"
    assert "File too large" not in done.stderr
    # The file ends at its last whole step (the write that did not fit was cut back): it reads
    # without damage, with exactly the steps it held when the disk filled.
    def steps_of(path, name):
        check = tmp_path / name
        tfprof.convert(path, check)
        events = read_trace(check).raw["traceEvents"]
        return sorted(event["args"]["step"] for event in events if event.get("cat") == "step")

    before = next(tmp_path.glob("before*"))
    held = steps_of(before, "before-check.json")
    assert held[:3] == [1, 2, 3]
    assert steps_of(written, "after-check.json") == held


TINY_DISK_PROGRAM = textwrap.dedent("""
    import sys, time, tfprof
    path = sys.argv[1]
    trace = tfprof.trace(path, cuda="off", flush_interval_ms=1).start()
    for step in range(1, 41):
        with tfprof.step(step):
            for _ in range(300):
                with tfprof.span("op"):
                    pass
        time.sleep(0.05)  # the step settles and is written
    try:
        trace.stop()
        print("stopped")
    except OSError as error:
        print("failed:", error)
    trace.export(sys.argv[2])  # nothing was lost: the whole session goes elsewhere
""")


@contextlib.contextmanager
def tiny_tmpfs(directory, size):
    """A file system of `size` bytes mounted on `directory` (root only), unmounted after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root (the RLIMIT_FSIZE tests above cover the rest)")
    directory.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], check=True)


@pytest.mark.parametrize("target", ["stream.json", "stream.tfrecord", "logs/"])
def test_a_stream_that_fills_a_real_disk_keeps_whole_steps_and_reports_once(tmp_path, target):
    with tiny_tmpfs(tmp_path / "disk", 96 * 1024) as disk:
        done = subprocess.run([sys.executable, "-c", TINY_DISK_PROGRAM, f"{disk}/{target}",
                               str(tmp_path / "whole.json")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        written = disk / target
        if target.endswith("/"):
            (written,) = written.glob("events.out.tfevents.*")
        # Reported once, at stop, naming the file and the reason; nothing on stderr.
        assert done.stdout == f"failed: cannot write '{written}': No space left on device\n"
        assert "No space" not in done.stderr
        # Only the output itself on the disk: no temporary, no second file.
        on_disk = sorted(str(p.relative_to(disk)) for p in disk.rglob("*"))
        assert on_disk == sorted({target.rstrip("/"), str(written.relative_to(disk))})
        check = tmp_path / "check.json"
        tfprof.convert(written, check)
    steps = sorted(e["args"]["step"] for e in read_trace(check).raw["traceEvents"] if e.get("cat") == "step")
    # Whole steps from the first on, fewer than were run: the disk filled in the middle.
    assert steps and steps == list(range(1, len(steps) + 1)) and len(steps) < 40
    whole = read_trace(tmp_path / "whole.json")
    assert len(whole.spans()) == 40 * 300
